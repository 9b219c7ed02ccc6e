/**
 * The delivery document (PDF): a title page with the verdict, the dependency diagram page
 * by page, and the execution plan (schedule in working days, critical path, report
 * summary). DejaVu is embedded, so the file reads the same everywhere; every text is at
 * least MIN_PT points, and diagram tiles are sized so their smallest text stays above it.
 */
import PDFDocument from 'pdfkit';
import type { ReportView } from '../flows/report.ts';
import type { DiagramModel } from './diagram.ts';
import { FONT_BOLD, FONT_REGULAR } from './fonts.ts';
import { layout, tiles } from './layout.ts';
import { drawTile, tileSize } from './pdf-diagram.ts';
import { finishText, FONT_SMALL, hoursText } from './svg.ts';

/** One row of the schedule table (objectives in creation order). */
export interface PlanRow {
  name: string;
  status: string;
  estimateHours: number | null;
  critical: boolean;
  /** 1-based working days from the schedule start; null for a done task. */
  startDay: number | null;
  finishDay: number | null;
  start: string | null;
  finish: string | null;
}

export interface PlanDocument {
  model: DiagramModel;
  startDate: string;
  rows: PlanRow[];
  /** Critical tasks' names in schedule order. */
  criticalPath: string[];
  report: ReportView;
  /** Names of the report's unestimated tasks and top blockers (ids are not for readers). */
  unestimatedNames: string[];
  generatedAt: string;
}

const MIN_PT = 6;
const MARGIN = 40;
const TILE_COLS = 5;
const TILE_ROWS = 9;
const LIST_MAX = 50;
const BODY = 9;
const TABLE = 8;

const COLUMNS: { title: string; width: number; cell: (r: PlanRow) => string }[] = [
  { title: 'Task', width: 290, cell: (r) => r.name },
  { title: 'Status', width: 70, cell: (r) => r.status.replace('_', ' ') },
  { title: 'Estimate', width: 60, cell: (r) => hoursText(r.estimateHours) },
  { title: 'Start (working day)', width: 120, cell: (r) => (r.startDay === null ? '—' : `day ${r.startDay} · ${r.start}`) },
  { title: 'Finish (working day)', width: 120, cell: (r) => (r.finishDay === null ? '—' : `day ${r.finishDay} · ${r.finish}`) },
  { title: 'Critical', width: 60, cell: (r) => (r.critical ? 'critical' : '') },
];

export async function planPdf(plan: PlanDocument): Promise<Buffer> {
  const doc = new PDFDocument({ size: 'A4', layout: 'landscape', margin: MARGIN, autoFirstPage: true, info: { Title: plan.model.flowName, Creator: 'flowplan' } });
  doc.registerFont('DejaVu', FONT_REGULAR);
  doc.registerFont('DejaVu-Bold', FONT_BOLD);
  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<void>((resolve, reject) => {
    doc.on('end', resolve);
    doc.on('error', reject);
  });
  titlePage(doc, plan);
  diagramPages(doc, plan.model);
  planPages(doc, plan);
  doc.end();
  await done;
  return Buffer.concat(chunks);
}

const width = (doc: PDFKit.PDFDocument) => doc.page.width - 2 * MARGIN;

function heading(doc: PDFKit.PDFDocument, text: string, size = 14): void {
  doc.font('DejaVu-Bold').fontSize(size).text(text, { width: width(doc) }).moveDown(0.4);
  doc.font('DejaVu').fontSize(BODY);
}

function titlePage(doc: PDFKit.PDFDocument, plan: PlanDocument): void {
  const { model, report } = plan;
  doc.moveDown(4);
  doc.font('DejaVu').fontSize(12).text('Delivery plan', { width: width(doc) }).moveDown(0.3);
  doc.font('DejaVu-Bold').fontSize(26).text(model.flowName, { width: width(doc) }).moveDown(1);
  const verdict = model.onTrack === null ? 'No due date set' : model.onTrack ? 'On track' : 'Late: projected to finish after the due date';
  const facts: [string, string][] = [
    ['Due date', model.dueDate ?? 'none'],
    ['Projected finish', model.projectedFinish ?? 'nothing left to do'],
    ['Verdict', verdict],
    ['Completion', `${Math.round(report.completion * 100)} % (${report.tasksDone} of ${report.tasksTotal} tasks done)`],
    ['Schedule start', plan.startDate],
  ];
  for (const [label, value] of facts) {
    doc.font('DejaVu-Bold').fontSize(13).text(`${label}: `, { continued: true }).font('DejaVu').text(value);
  }
  if (model.tasks.length === 0) doc.moveDown(1).fontSize(13).text('This flow has no tasks yet.');
  doc.moveDown(2).fontSize(BODY).text(`Generated ${plan.generatedAt} by flowplan. Working days are Monday to Friday.`);
}

function diagramPages(doc: PDFKit.PDFDocument, model: DiagramModel): void {
  if (model.tasks.length === 0) return;
  const l = layout(model);
  const parts = tiles(model, l, TILE_COLS, TILE_ROWS);
  parts.forEach((tile, k) => {
    doc.addPage();
    const caption = parts.length > 1 ? `part ${k + 1} of ${parts.length}: layers ${tile.layer0 + 1}–${Math.min(tile.layer1, l.layers)}, rows ${tile.row0 + 1}–${Math.min(tile.row1, l.rows)}` : '';
    const { w, h } = tileSize(tile);
    const scale = Math.min(width(doc) / w, (doc.page.height - 2 * MARGIN) / h, 1);
    // Tiles are sized for the page; a smaller scale would put text under MIN_PT.
    if (scale * FONT_SMALL < MIN_PT) throw new Error(`diagram tile ${w}×${h} too large for the page`);
    doc.save().translate(MARGIN, MARGIN).scale(scale);
    drawTile(doc, model, l, tile, caption);
    doc.restore();
  });
}

function bulletList(doc: PDFKit.PDFDocument, items: string[], empty: string): void {
  if (items.length === 0) {
    doc.text(empty, { width: width(doc) });
    return;
  }
  for (const item of items.slice(0, LIST_MAX)) doc.text(`• ${item}`, { width: width(doc) });
  if (items.length > LIST_MAX) doc.text(`… and ${items.length - LIST_MAX} more`, { width: width(doc) });
}

function planPages(doc: PDFKit.PDFDocument, plan: PlanDocument): void {
  const { report } = plan;
  doc.addPage();
  heading(doc, 'Execution plan', 18);
  doc.text(`${finishText(plan.model)}. Schedule from ${plan.startDate}; day 1 is the first working day.`, { width: width(doc) }).moveDown(0.6);

  heading(doc, 'Critical path');
  doc.text(plan.criticalPath.length === 0 ? 'No open critical tasks.' : plan.criticalPath.join(' → '), { width: width(doc) }).moveDown(0.6);

  heading(doc, 'Summary');
  const hours = (h: number | null) => (h === null ? 'no estimates' : `${Number(h.toFixed(1))} h`);
  doc.text(`Completion ${Math.round(report.completion * 100)} %: ${report.tasksDone} done, ${report.tasksReady} ready, ${report.tasksBlocked} blocked, ${report.tasksTotal} tasks in all.`, { width: width(doc) });
  doc.text(`Hours estimated ${hours(report.hoursEstimated)}, remaining ${hours(report.hoursRemaining)}.`, { width: width(doc) }).moveDown(0.6);

  heading(doc, 'Workload', 12);
  bulletList(doc, report.workload.map((w) => `${w.name ?? 'Former member'}: ${w.openTasks} open tasks, ${hours(w.hoursRemaining)} remaining`), 'No assigned tasks.');
  doc.moveDown(0.6);
  heading(doc, 'Top blockers', 12);
  bulletList(doc, report.topBlockers.map((b) => `${b.taskName}: holds up ${b.blocking} tasks`), 'Nothing is holding up other tasks.');
  doc.moveDown(0.6);
  heading(doc, 'Unestimated tasks', 12);
  bulletList(doc, plan.unestimatedNames, 'Every task has an estimate.');

  doc.addPage();
  heading(doc, 'Schedule', 14);
  scheduleTable(doc, plan.rows);
}

function scheduleTable(doc: PDFKit.PDFDocument, rows: PlanRow[]): void {
  const rowH = TABLE + 6;
  const bottom = doc.page.height - MARGIN;
  const header = () => {
    doc.font('DejaVu-Bold').fontSize(TABLE);
    drawRow(doc, COLUMNS.map((c) => c.title), doc.y);
    doc.y += rowH;
    doc.font('DejaVu').fontSize(TABLE);
  };
  if (rows.length === 0) {
    doc.text('This flow has no tasks yet.');
    return;
  }
  header();
  for (const row of rows) {
    if (doc.y + rowH > bottom) {
      doc.addPage();
      header();
    }
    doc.font(row.critical ? 'DejaVu-Bold' : 'DejaVu');
    drawRow(doc, COLUMNS.map((c) => c.cell(row)), doc.y);
    doc.y += rowH;
  }
}

/** One line per cell, cut to the column with an ellipsis (names stay whole in the diagram's tooltips and the API). */
function drawRow(doc: PDFKit.PDFDocument, cells: string[], y: number): void {
  let x = MARGIN;
  cells.forEach((text, i) => {
    const w = COLUMNS[i]!.width - 6;
    doc.text(fit(doc, text, w), x, y, { width: w, lineBreak: false });
    x += COLUMNS[i]!.width;
  });
  doc.x = MARGIN;
}

function fit(doc: PDFKit.PDFDocument, text: string, w: number): string {
  let t = text.slice(0, 200);
  if (doc.widthOfString(t) <= w) return t;
  while (t.length > 1 && doc.widthOfString(`${t}…`) > w) t = t.slice(0, Math.max(1, Math.floor(t.length * 0.9)));
  return `${t}…`;
}

/**
 * The delivery document (PDF): page one with the title block, the verdict, the summary and
 * the dependency diagram (or, when it is too large for one page, a map of the pages it
 * follows on), and the execution plan (schedule in working days, critical path, report
 * summary). DejaVu is embedded, so the file reads the same everywhere; every text is at
 * least MIN_PT points, and diagram tiles are sized so their smallest text stays above it.
 */
import PDFDocument from 'pdfkit';
import type { ReportView } from '../flows/report.ts';
import type { DiagramModel } from './diagram.ts';
import { FONT_BOLD, FONT_REGULAR } from './fonts.ts';
import { layout, tiles, wholeGrid, type Layout, type Tile } from './layout.ts';
import { drawTile, tileSize } from './pdf-diagram.ts';
import { count } from '../../platform/plural.ts';
import { CRITICAL, finishText, FONT_SMALL, hoursText, INK, STATUS_LABEL } from './svg.ts';

/** One row of the schedule table (objectives: done ones first, then by start and finish day). */
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
  generatedAt: Date;
}

const MIN_PT = 6;
const MARGIN = 40;
const TILE_COLS = 5;
const TILE_ROWS = 9;
const LIST_MAX = 50;
/** A task's dot on the page map: the status fills are too pale at that size. */
const STATUS_INK: Record<DiagramModel['tasks'][number]['status'], string> = { done: '#43a047', in_progress: '#1e88e5', ready: '#f9a825', blocked: '#8d6e63' };
/** Page one enlarges a small diagram at most this much. */
const MAX_FILL = 2;
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
  const doc = new PDFDocument({
    size: 'A4', layout: 'landscape', margin: MARGIN, autoFirstPage: true,
    info: {
      Title: plan.model.flowName, Subject: `Delivery plan: dependency diagram, schedule and report of ${plan.model.flowName}`,
      Creator: 'flowplan', CreationDate: plan.generatedAt, ModDate: plan.generatedAt,
    },
  });
  doc.registerFont('DejaVu', FONT_REGULAR);
  doc.registerFont('DejaVu-Bold', FONT_BOLD);
  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  const done = new Promise<void>((resolve, reject) => {
    doc.on('end', resolve);
    doc.on('error', reject);
  });
  titleBlock(doc, plan);
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

/** Every status counted, in the diagram's order: "11 tasks: 3 done, 1 in progress, 4 ready, 3 blocked". */
export function statusSummary(model: DiagramModel): string {
  const counts = new Map<string, number>();
  for (const task of model.tasks) counts.set(task.status, (counts.get(task.status) ?? 0) + 1);
  const parts = (['done', 'in_progress', 'ready', 'blocked'] as const).map((s) => `${counts.get(s) ?? 0} ${STATUS_LABEL[s].toLowerCase()}`);
  return `${count(model.tasks.length, 'task')}: ${parts.join(', ')}`;
}

const hours = (h: number | null) => (h === null ? 'no estimates' : `${Number(h.toFixed(1))} h`);

/** Page one's top: what the flow is, where it stands, and when; the diagram takes the rest of the page. */
function titleBlock(doc: PDFKit.PDFDocument, plan: PlanDocument): void {
  const { model, report } = plan;
  doc.font('DejaVu').fontSize(BODY).fillColor(INK).text(`Delivery plan · generated ${generated(plan)} by flowplan`, { width: width(doc) });
  doc.font('DejaVu-Bold').fontSize(20).text(model.flowName, { width: width(doc) }).moveDown(0.2);
  const verdict = model.onTrack === null ? 'No due date set' : model.onTrack ? 'On track' : 'Late: projected to finish after the due date';
  const facts: [string, string][] = [
    ['Due', model.dueDate ?? 'none'],
    ['Projected finish', model.projectedFinish ?? 'nothing left to do'],
    ['Verdict', verdict],
    ['Schedule start', plan.startDate],
  ];
  facts.forEach(([label, value], i) => {
    doc.font('DejaVu-Bold').fontSize(11).text(`${label}: `, { continued: true }).font('DejaVu').text(value, { continued: i < facts.length - 1 });
    if (i < facts.length - 1) doc.text('   ', { continued: true });
  });
  doc.font('DejaVu').fontSize(11).text(
    `${statusSummary(model)} · ${Math.round(report.completion * 100)} % complete · ${hours(report.hoursEstimated)} estimated, ${hours(report.hoursRemaining)} remaining`,
    { width: width(doc) },
  ).moveDown(0.5);
  if (model.tasks.length === 0) doc.fontSize(13).text('This flow has no tasks yet.');
}

const generated = (plan: PlanDocument) => `${plan.generatedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC`;

/**
 * The diagram: on page one under the title block, scaled to fill what is left, when it fits
 * there with its smallest text at MIN_PT or more; else page one shows a map of the pages and
 * the diagram follows in tiles, each saying where it continues.
 */
function diagramPages(doc: PDFKit.PDFDocument, model: DiagramModel): void {
  if (model.tasks.length === 0) return;
  const l = layout(model);
  const area = { x: MARGIN, y: doc.y, w: width(doc), h: doc.page.height - MARGIN - doc.y };
  const whole = wholeGrid(l);
  const size = tileSize(whole);
  const fill = Math.min(area.w / size.w, area.h / size.h, MAX_FILL);
  if (fill * FONT_SMALL >= MIN_PT) {
    doc.save().translate(area.x + (area.w - size.w * fill) / 2, area.y).scale(fill);
    drawTile(doc, model, l, whole, '');
    doc.restore();
    return;
  }
  const parts = tiles(model, l, TILE_COLS, TILE_ROWS);
  // Page one holds the title block and the map; tile k is on page k + 2.
  const pageOf = new Map(parts.map((tile, k) => [`${tile.layer0}:${tile.row0}`, k + 2]));
  pageMap(doc, model, l, parts, area);
  parts.forEach((tile, k) => {
    doc.addPage();
    const neighbour = (dl: number, dr: number) => pageOf.get(`${tile.layer0 + dl * TILE_COLS}:${tile.row0 + dr * TILE_ROWS}`);
    const next = ([['left', -1, 0], ['right', 1, 0], ['above', 0, -1], ['below', 0, 1]] as const)
      .flatMap(([side, dl, dr]) => { const page = neighbour(dl, dr); return page ? [`${side} on page ${page}`] : []; });
    const caption = `part ${k + 1} of ${parts.length}: layers ${tile.layer0 + 1}–${Math.min(tile.layer1, l.layers)}, rows ${tile.row0 + 1}–${Math.min(tile.row1, l.rows)}` +
      (next.length > 0 ? ` · continues ${next.join(', ')}` : '');
    const { w, h } = tileSize(tile);
    const scale = Math.min(width(doc) / w, (doc.page.height - 2 * MARGIN) / h, 1);
    // Tiles are sized for the page; a smaller scale would put text under MIN_PT.
    if (scale * FONT_SMALL < MIN_PT) throw new Error(`diagram tile ${w}×${h} too large for the page`);
    doc.save().translate(MARGIN, MARGIN).scale(scale);
    drawTile(doc, model, l, tile, caption);
    doc.restore();
  });
}

/** Where each part of a diagram too large for one page is: the grid of parts, each with its page number. */
function pageMap(doc: PDFKit.PDFDocument, model: DiagramModel, l: Layout, parts: readonly Tile[], area: { x: number; y: number; w: number; h: number }): void {
  doc.font('DejaVu-Bold').fontSize(12).fillColor(INK).text('Page map', area.x, area.y);
  doc.font('DejaVu').fontSize(BODY).text(`The diagram is too large for one page at a legible size: it follows in ${count(parts.length, 'part')}, laid out as below (each part names its neighbours' pages).`, { width: area.w });
  const top = doc.y + 8;
  const across = Math.ceil(Math.max(1, l.layers) / TILE_COLS);
  const down = Math.ceil(Math.max(1, l.rows) / TILE_ROWS);
  const cell = Math.min(area.w / across, (area.y + area.h - top) / down, 90);
  parts.forEach((tile) => {
    const x = area.x + (tile.layer0 / TILE_COLS) * cell, y = top + (tile.row0 / TILE_ROWS) * cell;
    doc.lineWidth(0.5).rect(x + 1, y + 1, cell - 2, cell - 2).fillAndStroke('#f7f7f7', INK);
  });
  // Each task as a dot where it is, in its status colour: the map has the diagram's shape.
  const dot = Math.max(1, Math.min(cell / TILE_COLS, cell / TILE_ROWS) * 0.6);
  model.tasks.forEach((task, i) => {
    doc.rect(area.x + (l.layer[i]! + 0.2) * (cell / TILE_COLS), top + (l.row[i]! + 0.2) * (cell / TILE_ROWS), dot, dot * 0.6).fill(task.critical ? CRITICAL : STATUS_INK[task.status]);
  });
  parts.forEach((tile, k) => {
    const x = area.x + (tile.layer0 / TILE_COLS) * cell, y = top + (tile.row0 / TILE_ROWS) * cell;
    doc.fillColor(INK).font('DejaVu-Bold').fontSize(Math.max(MIN_PT, Math.min(BODY, cell / 4))).text(`p. ${k + 2}`, x + 3, y + 3, { width: cell - 6, lineBreak: false });
  });
  doc.font('DejaVu');
  doc.fillColor(INK).lineWidth(1);
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
  doc.text(`Completion ${Math.round(report.completion * 100)} %. ${statusSummary(plan.model)}.`, { width: width(doc) });
  doc.text(`Hours estimated ${hours(report.hoursEstimated)}, remaining ${hours(report.hoursRemaining)}.`, { width: width(doc) }).moveDown(0.6);

  heading(doc, 'Workload', 12);
  bulletList(doc, report.workload.map((w) => `${w.name ?? 'Former member'}: ${count(w.openTasks, 'open task')}, ${hours(w.hoursRemaining)} remaining`), 'No assigned tasks.');
  doc.moveDown(0.6);
  heading(doc, 'Top blockers', 12);
  bulletList(doc, report.topBlockers.map((b) => `${b.taskName}: holds up ${count(b.blocking, 'task')}`), 'Nothing is holding up other tasks.');
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

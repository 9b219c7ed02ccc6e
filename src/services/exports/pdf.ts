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
import {
  layout,
  NODE_H,
  NODE_W,
  PITCH_X,
  PITCH_Y,
  tiles,
  wholeTile,
  type Layout,
  type Tile,
} from './layout.ts';
import { drawLine, drawTile, HEADER_H, tileSize } from './pdf-diagram.ts';
import { cut, rightToLeft, wrap } from './text.ts';
import { oneLine } from '../../platform/html.ts';
import { count } from '../../platform/plural.ts';
import type { EstimateRange } from '../flows/model.ts';
import { hoursText, rangeText } from './hours.ts';
import { CRITICAL, finishText, FONT_SMALL, INK, STATUS_LABEL } from './svg.ts';

/** One row of the schedule table (objectives: done ones first, then by start and finish day). */
export interface PlanRow {
  name: string;
  status: string;
  estimateHours: number | null;
  estimateRange: EstimateRange | null;
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
  report: ReportView;
  /** Names of the report's unestimated tasks and top blockers (ids are not for readers). */
  unestimatedNames: string[];
  generatedAt: Date;
}

const MIN_PT = 6;
const MARGIN = 40;
/** A page's part of a diagram too large for one page, in diagram units: five layers by nine rows of the layered layout. */
const TILE_W = 5 * PITCH_X;
const TILE_H = 9 * PITCH_Y;
/** How far a part reaches into its neighbours. */
const OVERLAP = 24;
const LIST_MAX = 50;
/** A task's dot on the page map: the status fills are too pale at that size. */
const STATUS_INK: Record<DiagramModel['tasks'][number]['status'], string> = {
  done: '#43a047',
  in_progress: '#1e88e5',
  ready: '#f9a825',
  blocked: '#8d6e63',
};
/** Page one's diagram keeps this far from the paper's edges (printers need about 15 pt). */
const PAGE_ONE_EDGE = 20;
/** Page one enlarges a small diagram at most this much. */
const MAX_FILL = 2;
const BODY = 9;
const TABLE = 8;

const COLUMNS: { title: string; width: number; cell: (r: PlanRow) => string }[] = [
  { title: 'Task', width: 260, cell: (r) => r.name },
  { title: 'Status', width: 70, cell: (r) => r.status.replace('_', ' ') },
  {
    title: 'Estimate',
    width: 90,
    cell: (r) =>
      r.estimateRange
        ? `${hoursText(r.estimateHours)} (${rangeText(r.estimateRange)})`
        : hoursText(r.estimateHours),
  },
  {
    title: 'Start (working day)',
    width: 120,
    cell: (r) => (r.startDay === null ? '—' : `day ${r.startDay} · ${r.start}`),
  },
  {
    title: 'Finish (working day)',
    width: 120,
    cell: (r) => (r.finishDay === null ? '—' : `day ${r.finishDay} · ${r.finish}`),
  },
  { title: 'Critical', width: 60, cell: (r) => (r.critical ? 'critical' : '') },
];

export async function planPdf(plan: PlanDocument): Promise<Buffer> {
  const doc = new PDFDocument({
    size: 'A4',
    layout: 'landscape',
    margin: MARGIN,
    autoFirstPage: true,
    info: {
      Title: oneLine(plan.model.flowName),
      Subject: `Delivery plan: dependency diagram, schedule and report of ${oneLine(plan.model.flowName)}`,
      Creator: 'flowplan',
      CreationDate: plan.generatedAt,
      ModDate: plan.generatedAt,
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
  await diagramPages(doc, plan.model);
  planPages(doc, plan);
  doc.end();
  await done;
  return Buffer.concat(chunks);
}

const width = (doc: PDFKit.PDFDocument) => doc.page.width - 2 * MARGIN;

/**
 * User text as a paragraph from the left margin, wrapped to the text's width, each line in
 * reading order (drawLine), on a new page when the page is full. `rtl` is the paragraph's
 * direction (by default its first strong character's): lines that mix our words with a
 * name stay left to right, the name's own runs turned.
 */
function paragraph(doc: PDFKit.PDFDocument, text: string, rtl = rightToLeft(text)): void {
  const lineHeight = doc.currentLineHeight(true);
  const measure = (value: string) => doc.widthOfString(value);
  for (const line of wrap(oneLine(text), [width(doc)], Infinity, measure)) {
    if (doc.y + lineHeight > doc.page.height - MARGIN) doc.addPage();
    drawLine(doc, line, MARGIN, doc.y, rtl);
    doc.y += lineHeight;
  }
  doc.x = MARGIN;
}

function heading(doc: PDFKit.PDFDocument, text: string, size = 14): void {
  doc
    .font('DejaVu-Bold')
    .fontSize(size)
    .text(text, { width: width(doc) })
    .moveDown(0.4);
  doc.font('DejaVu').fontSize(BODY);
}

/** Every status counted, in the diagram's order: "11 tasks: 3 done, 1 in progress, 4 ready, 3 blocked". */
export function statusSummary(model: DiagramModel): string {
  const counts = new Map<string, number>();
  for (const task of model.tasks) counts.set(task.status, (counts.get(task.status) ?? 0) + 1);
  const parts = (['done', 'in_progress', 'ready', 'blocked'] as const).map(
    (s) => `${counts.get(s) ?? 0} ${STATUS_LABEL[s].toLowerCase()}`,
  );
  return `${count(model.tasks.length, 'task')}: ${parts.join(', ')}`;
}

const hours = (h: number | null) => (h === null ? 'no estimates' : `${Number(h.toFixed(1))} h`);

/** Page one's top: what the flow is, where it stands, and when; the diagram takes the rest of the page. */
function titleBlock(doc: PDFKit.PDFDocument, plan: PlanDocument): void {
  const { model, report } = plan;
  doc
    .font('DejaVu')
    .fontSize(BODY)
    .fillColor(INK)
    .text(`Delivery plan · generated ${generated(plan)} by flowplan`, { width: width(doc) });
  doc.font('DejaVu-Bold').fontSize(20);
  paragraph(doc, model.flowName);
  doc.moveDown(0.2);
  const verdict =
    model.onTrack === null
      ? 'No due date set'
      : model.onTrack
        ? 'On track'
        : 'Late: projected to finish after the due date';
  const facts: [string, string][] = [
    ['Due', model.dueDate ?? 'none'],
    ['Projected finish', model.projectedFinish ?? 'nothing left to do'],
    ['Verdict', verdict],
    ['Schedule start', plan.startDate],
  ];
  facts.forEach(([label, value], i) => {
    doc
      .font('DejaVu-Bold')
      .fontSize(11)
      .text(`${label}: `, { continued: true })
      .font('DejaVu')
      .text(value, { continued: i < facts.length - 1 });
    if (i < facts.length - 1) doc.text('   ', { continued: true });
  });
  doc
    .font('DejaVu')
    .fontSize(11)
    .text(
      `${statusSummary(model)} · ${Math.round(report.completion * 100)} % complete · ` +
        (report.hoursEstimated === null
          ? 'no estimates yet'
          : `${hours(report.hoursEstimated)} estimated, ${hours(report.hoursRemaining)} remaining`),
      { width: width(doc) },
    )
    .moveDown(0.5);
  if (model.tasks.length === 0) doc.fontSize(13).text('This flow has no tasks yet.');
}

const generated = (plan: PlanDocument) =>
  `${plan.generatedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC`;

/**
 * The diagram: on page one under the title block, scaled to fill what is left, when it fits
 * there with its smallest text at MIN_PT or more; else page one shows a map of the pages and
 * the diagram follows in tiles that overlap their neighbours by OVERLAP, with the cut marked
 * and the neighbour's page named at each cut edge.
 */
async function diagramPages(doc: PDFKit.PDFDocument, model: DiagramModel): Promise<void> {
  if (model.tasks.length === 0) return;
  const l = await layout(model);
  // The diagram may use the page's width down to PAGE_ONE_EDGE, wider than the text's margins.
  const area = {
    x: PAGE_ONE_EDGE,
    y: doc.y,
    w: doc.page.width - 2 * PAGE_ONE_EDGE,
    h: doc.page.height - PAGE_ONE_EDGE - doc.y,
  };
  const whole = wholeTile(l);
  // Page one's title block names the flow: the diagram's header does not repeat it.
  const size = tileSize(whole, false);
  const fill = Math.min(area.w / size.w, area.h / size.h, MAX_FILL);
  if (fill * FONT_SMALL >= MIN_PT) {
    doc
      .save()
      .translate(area.x + (area.w - size.w * fill) / 2, area.y)
      .scale(fill);
    drawTile(doc, model, l, whole, '', false);
    doc.restore();
    return;
  }
  const parts = tiles(l, TILE_W, TILE_H);
  // Page one holds the title block and the map; part k is on page k + 2.
  const pageAt = new Map(
    parts.map((tile, k) => [`${tile.x0 / TILE_W}:${tile.y0 / TILE_H}`, k + 2]),
  );
  pageMap(doc, model, l, parts, area);
  parts.forEach((tile, k) => {
    doc.addPage();
    const at = (dx: number, dy: number) =>
      pageAt.get(`${tile.x0 / TILE_W + dx}:${tile.y0 / TILE_H + dy}`);
    const sides = { left: at(-1, 0), right: at(1, 0), above: at(0, -1), below: at(0, 1) };
    const next = Object.entries(sides).flatMap(([side, page]) =>
      page ? [`${side} on page ${page}`] : [],
    );
    const caption =
      `part ${k + 1} of ${parts.length}` +
      (next.length > 0 ? ` · continues ${next.join(', ')}` : '');
    // What is drawn reaches OVERLAP into each neighbour, so nothing at a cut is lost between pages.
    const drawn: Tile = {
      x0: sides.left ? tile.x0 - OVERLAP : tile.x0,
      x1: sides.right ? tile.x1 + OVERLAP : tile.x1,
      y0: sides.above ? tile.y0 - OVERLAP : tile.y0,
      y1: sides.below ? tile.y1 + OVERLAP : tile.y1,
    };
    const { w, h } = tileSize(drawn);
    const scale = Math.min(width(doc) / w, (doc.page.height - 2 * MARGIN) / h, 1);
    // Tiles are sized for the page; a smaller scale would put text under MIN_PT.
    if (scale * FONT_SMALL < MIN_PT)
      throw new Error(`diagram tile ${w}×${h} too large for the page`);
    doc.save().translate(MARGIN, MARGIN).scale(scale);
    drawTile(doc, model, l, drawn, caption);
    cutMarks(doc, tile, drawn, sides);
    doc.restore();
  });
}

/** Dashed lines where the neighbouring pages take over, each with the page it continues on. */
function cutMarks(
  doc: PDFKit.PDFDocument,
  tile: Tile,
  drawn: Tile,
  sides: Record<'left' | 'right' | 'above' | 'below', number | undefined>,
): void {
  const X = (x: number) => x - drawn.x0;
  const Y = (y: number) => HEADER_H + y - drawn.y0;
  doc.save().lineWidth(1).dash(6, { space: 4 }).strokeColor(CRITICAL);
  const label = (text: string, x: number, y: number) =>
    doc
      .font('DejaVu-Bold')
      .fontSize(FONT_SMALL)
      .fillColor(CRITICAL)
      .text(text, x, y, { lineBreak: false });
  if (sides.left) {
    doc.moveTo(X(tile.x0), Y(drawn.y0)).lineTo(X(tile.x0), Y(drawn.y1)).stroke();
    label(`← p. ${sides.left}`, X(tile.x0) + 4, Y(drawn.y0) + 2);
  }
  if (sides.right) {
    doc.moveTo(X(tile.x1), Y(drawn.y0)).lineTo(X(tile.x1), Y(drawn.y1)).stroke();
    label(`p. ${sides.right} →`, X(tile.x1) - 60, Y(drawn.y0) + 2);
  }
  if (sides.above) {
    doc.moveTo(X(drawn.x0), Y(tile.y0)).lineTo(X(drawn.x1), Y(tile.y0)).stroke();
    label(`↑ p. ${sides.above}`, X(drawn.x0) + 4, Y(tile.y0) + 2);
  }
  if (sides.below) {
    doc.moveTo(X(drawn.x0), Y(tile.y1)).lineTo(X(drawn.x1), Y(tile.y1)).stroke();
    label(`↓ p. ${sides.below}`, X(drawn.x0) + 4, Y(tile.y1) - FONT_SMALL - 4);
  }
  doc.undash().restore();
  doc.fillColor(INK);
}

/** Where each part of a diagram too large for one page is: the parts as drawn, each with its page number, and every task as a dot. */
function pageMap(
  doc: PDFKit.PDFDocument,
  model: DiagramModel,
  l: Layout,
  parts: readonly Tile[],
  area: { x: number; y: number; w: number; h: number },
): void {
  doc.font('DejaVu-Bold').fontSize(12).fillColor(INK).text('Page map', area.x, area.y);
  doc
    .font('DejaVu')
    .fontSize(BODY)
    .text(
      `The diagram is too large for one page at a legible size: it follows in ${count(parts.length, 'part')}, laid out as below (each part names its neighbours' pages).`,
      { width: area.w },
    );
  const top = doc.y + 8;
  const k = Math.min(area.w / l.width, (area.y + area.h - top) / l.height, 90 / TILE_W);
  for (const tile of parts)
    doc
      .lineWidth(0.5)
      .rect(
        area.x + tile.x0 * k + 1,
        top + tile.y0 * k + 1,
        (tile.x1 - tile.x0) * k - 2,
        (tile.y1 - tile.y0) * k - 2,
      )
      .fillAndStroke('#f7f7f7', INK);
  // Each task as a dot where it is, in its status colour: the map has the diagram's shape.
  const dot = Math.max(1, NODE_H * k * 0.6);
  model.tasks.forEach((task, i) => {
    doc
      .rect(
        area.x + (l.x[i]! + NODE_W / 2) * k - dot / 2,
        top + (l.y[i]! + NODE_H / 2) * k - dot * 0.3,
        dot,
        dot * 0.6,
      )
      .fill(task.critical ? CRITICAL : STATUS_INK[task.status]);
  });
  parts.forEach((tile, n) => {
    doc
      .fillColor(INK)
      .font('DejaVu-Bold')
      .fontSize(Math.max(MIN_PT, Math.min(BODY, ((tile.x1 - tile.x0) * k) / 4)))
      .text(`p. ${n + 2}`, area.x + tile.x0 * k + 3, top + tile.y0 * k + 3, { lineBreak: false });
  });
  doc.font('DejaVu');
}

function bulletList(doc: PDFKit.PDFDocument, items: string[], empty: string): void {
  if (items.length === 0) {
    doc.text(empty, { width: width(doc) });
    return;
  }
  for (const item of items.slice(0, LIST_MAX)) paragraph(doc, `• ${item}`, false);
  if (items.length > LIST_MAX)
    doc.text(`… and ${items.length - LIST_MAX} more`, { width: width(doc) });
}

function planPages(doc: PDFKit.PDFDocument, plan: PlanDocument): void {
  const { report } = plan;
  doc.addPage();
  heading(doc, 'Execution plan', 18);
  doc
    .text(
      `${finishText(plan.model)}. Schedule from ${plan.startDate}; day 1 is the first working day.`,
      { width: width(doc) },
    )
    .moveDown(0.6);

  heading(doc, 'Critical path');
  criticalPath(doc, plan.rows);
  doc.moveDown(0.6);

  heading(doc, 'Summary');
  doc.text(`Completion ${Math.round(report.completion * 100)} %. ${statusSummary(plan.model)}.`, {
    width: width(doc),
  });
  doc
    .text(
      `Hours estimated ${hours(report.hoursEstimated)}, remaining ${hours(report.hoursRemaining)}.`,
      { width: width(doc) },
    )
    .moveDown(0.6);

  heading(doc, 'Workload', 12);
  bulletList(
    doc,
    report.workload.map(
      (w) =>
        `${w.name ?? 'Former member'}: ${count(w.openTasks, 'open task')}, ${hours(w.hoursRemaining)} remaining`,
    ),
    'No assigned tasks.',
  );
  doc.moveDown(0.6);
  heading(doc, 'Top blockers', 12);
  bulletList(
    doc,
    report.topBlockers.map((b) => `${b.taskName}: holds up ${count(b.blocking, 'task')}`),
    'Nothing is holding up other tasks.',
  );
  doc.moveDown(0.6);
  heading(doc, 'Unestimated tasks', 12);
  bulletList(doc, plan.unestimatedNames, 'Every task has an estimate.');

  doc.addPage();
  heading(doc, 'Schedule', 14);
  scheduleTable(doc, plan.rows);
}

/**
 * The open critical tasks in schedule order, grouped by the working day they start: tasks
 * on one line start together and run in parallel. No arrows: two branches that tie are both
 * critical, and a chain drawn through them would invent a dependency (the diagram has the real ones).
 */
function criticalPath(doc: PDFKit.PDFDocument, rows: readonly PlanRow[]): void {
  const open = rows.filter((r) => r.critical && r.startDay !== null);
  if (open.length === 0) {
    doc.text('No open critical tasks.', { width: width(doc) });
    return;
  }
  doc.text(
    'What decides the finish date, by the working day each task starts (tasks on one line run in parallel):',
    { width: width(doc) },
  );
  const byStart = new Map<number, PlanRow[]>();
  for (const row of open) byStart.set(row.startDay!, [...(byStart.get(row.startDay!) ?? []), row]);
  const groups = [...byStart].sort(([a], [b]) => a - b);
  for (const [day, group] of groups.slice(0, LIST_MAX)) {
    const tasks = group.map((r) => `${r.name} (to day ${r.finishDay})`).join(', ');
    paragraph(doc, `• Day ${day}: ${tasks}${group.length > 1 ? ', in parallel' : ''}`, false);
  }
  if (groups.length > LIST_MAX)
    doc.text(`… and ${count(groups.length - LIST_MAX, 'more start day')}`, { width: width(doc) });
}

function scheduleTable(doc: PDFKit.PDFDocument, rows: PlanRow[]): void {
  const rowH = TABLE + 6;
  const bottom = doc.page.height - MARGIN;
  const header = () => {
    doc.font('DejaVu-Bold').fontSize(TABLE);
    drawRow(
      doc,
      COLUMNS.map((c) => c.title),
      doc.y,
    );
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
    drawRow(
      doc,
      COLUMNS.map((c) => c.cell(row)),
      doc.y,
    );
    doc.y += rowH;
  }
}

/** One line per cell, cut to the column with an ellipsis (names stay whole in the diagram's tooltips and the API). */
function drawRow(doc: PDFKit.PDFDocument, cells: string[], y: number): void {
  let x = MARGIN;
  cells.forEach((text, i) => {
    drawLine(
      doc,
      cut(oneLine(text), COLUMNS[i]!.width - 6, (value) => doc.widthOfString(value)),
      x,
      y,
    );
    x += COLUMNS[i]!.width;
  });
  doc.x = MARGIN;
}

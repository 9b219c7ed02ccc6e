/**
 * The diagram drawn straight into the PDF with pdfkit's vector calls, from the same layout
 * and the same look as the SVG. svg-to-pdfkit (0.1.8, unchanged since 2019) parsed our tile
 * SVGs at ~80 ms a page, 17 s of a 5,000-task document; drawing directly takes a fraction,
 * and keeps every name real, searchable text.
 */
import { oneLine } from '../../platform/html.ts';
import type { DiagramModel } from './diagram.ts';
import { boxMeets, NODE_H, NODE_W, routeMeets, type Layout, type Tile } from './layout.ts';
import {
  boxLines,
  CRITICAL,
  FONT_NAME,
  FONT_SMALL,
  finishText,
  INK,
  STATUS_FILL,
  STATUS_LABEL,
} from './svg.ts';
import { cut, hasRtlLetter, rightToLeft, visualRuns, type Measure } from './text.ts';

/** Header band above the grid, in diagram units (title, finish line, legend). */
export const HEADER_H = 64;
/** The title's part of the header: page one, whose title block names the flow, leaves it out. */
const TITLE_H = 18;
/** DejaVu's ascent: pdfkit places a line by its top, SVG by its baseline. */
const ASCENT = 0.93;

type Doc = PDFKit.PDFDocument;

export function tileSize(tile: Tile, title = true): { w: number; h: number } {
  return {
    w: Math.max(tile.x1 - tile.x0, 620),
    h: HEADER_H - (title ? 0 : TITLE_H) + tile.y1 - tile.y0,
  };
}

/** The measure of the document's fonts (the same DejaVu the SVG is measured in). */
export const docMeasure =
  (doc: Doc): Measure =>
  (value, size, bold) =>
    doc
      .font(bold ? 'DejaVu-Bold' : 'DejaVu')
      .fontSize(size)
      .widthOfString(value);

/**
 * One line at (x, top) in the current font, size and colour: its directional runs left to
 * right, each drawn whole so fontkit lays a right-to-left run out right to left (pdfkit alone
 * shapes word by word in logical order, swapping the words of a Hebrew name). `rtl` is the
 * paragraph's direction, by default the line's first strong character's. Returns its width.
 */
export function drawLine(
  doc: Doc,
  value: string,
  x: number,
  top: number,
  rtl = rightToLeft(value),
): number {
  let left = x;
  for (const run of visualRuns(value, rtl)) {
    // A run without a right-to-left letter (neutrals only) is not turned by fontkit: turned here.
    const drawn =
      run.rtl && !hasRtlLetter(run.text) ? Array.from(run.text).reverse().join('') : run.text;
    const options = run.rtl ? { lineBreak: false, features: [] } : { lineBreak: false };
    doc.text(drawn, left, top, options);
    left += doc.widthOfString(drawn, options);
  }
  return left - x;
}

function text(
  doc: Doc,
  value: string,
  x: number,
  baseline: number,
  size: number,
  bold = false,
  colour = INK,
  align: 'left' | 'right' = 'left',
): void {
  doc
    .font(bold ? 'DejaVu-Bold' : 'DejaVu')
    .fontSize(size)
    .fillColor(colour);
  value = oneLine(value);
  const left = align === 'right' ? x - doc.widthOfString(value) : x;
  drawLine(doc, value, left, baseline - ASCENT * size);
}

function header(doc: Doc, model: DiagramModel, caption: string, title: boolean, w: number): void {
  if (title)
    text(
      doc,
      cut(oneLine(model.flowName), w, (value) =>
        doc
          .font('DejaVu-Bold')
          .fontSize(FONT_NAME + 2)
          .widthOfString(value),
      ),
      0,
      16,
      FONT_NAME + 2,
      true,
    );
  doc.save().translate(0, title ? 0 : -TITLE_H);
  text(doc, `${finishText(model)}${caption ? ` · ${caption}` : ''}`, 0, 34, FONT_SMALL);
  let x = 0;
  for (const status of ['done', 'in_progress', 'ready', 'blocked'] as const) {
    doc.rect(x, 42, 14, 14).fillAndStroke(STATUS_FILL[status], INK);
    text(doc, STATUS_LABEL[status], x + 19, 53, FONT_SMALL);
    x += 30 + doc.widthOfString(STATUS_LABEL[status]);
  }
  doc.lineWidth(3).rect(x, 42, 14, 14).stroke(CRITICAL).lineWidth(1);
  text(doc, 'Critical path (thick border, "critical")', x + 19, 53, FONT_SMALL);
  doc.restore();
}

/** Draws one tile at the current origin, in diagram units (the caller scales). */
export function drawTile(
  doc: Doc,
  model: DiagramModel,
  l: Layout,
  tile: Tile,
  caption: string,
  title = true,
): void {
  header(doc, model, caption, title, tileSize(tile).w);
  const top = HEADER_H - (title ? 0 : TITLE_H);
  doc.save();
  // Edges and boxes reaching past the tile are cut at its border.
  doc.rect(0, top, tile.x1 - tile.x0, tile.y1 - tile.y0).clip();
  doc.translate(-tile.x0, top - tile.y0);
  for (const route of l.routes) {
    if (!routeMeets(route, tile)) continue;
    const critical = model.tasks[route.to]!.critical && model.tasks[route.from]!.critical;
    const colour = critical ? CRITICAL : '#6b6b6b';
    const p = route.points;
    doc.lineWidth(critical ? 2.5 : 1).moveTo(p[0]!, p[1]!);
    if (route.curve)
      for (let k = 2; k + 5 < p.length; k += 6)
        doc.bezierCurveTo(p[k]!, p[k + 1]!, p[k + 2]!, p[k + 3]!, p[k + 4]!, p[k + 5]!);
    else for (let k = 2; k < p.length; k += 2) doc.lineTo(p[k]!, p[k + 1]!);
    doc.stroke(colour);
    arrowhead(doc, p, colour);
  }
  const measure = docMeasure(doc);
  model.tasks.forEach((task, i) => {
    if (!boxMeets(l, i, tile)) return;
    const x = l.x[i]!,
      y = l.y[i]!;
    doc
      .lineWidth(task.critical ? 3.5 : 1)
      .roundedRect(x, y, NODE_W, NODE_H, 6)
      .fillAndStroke(STATUS_FILL[task.status], task.critical ? CRITICAL : INK);
    for (const line of boxLines(task, measure)) {
      text(
        doc,
        line.text,
        x + line.x,
        y + line.y,
        line.size,
        line.bold,
        line.kind === 'critical' ? CRITICAL : INK,
        line.anchor === 'end' ? 'right' : 'left',
      );
    }
  });
  doc.restore();
  doc.lineWidth(1);
}

/** A filled arrowhead at the route's tip, pointing along its last segment. */
function arrowhead(doc: Doc, p: number[], colour: string): void {
  const tx = p.at(-2)!,
    ty = p.at(-1)!;
  const angle = Math.atan2(ty - p.at(-3)!, tx - p.at(-4)!);
  const back = (side: number) =>
    [
      tx - 8 * Math.cos(angle) + side * 4 * Math.sin(angle),
      ty - 8 * Math.sin(angle) - side * 4 * Math.cos(angle),
    ] as [number, number];
  doc.polygon([tx, ty], back(1), back(-1)).fill(colour);
}

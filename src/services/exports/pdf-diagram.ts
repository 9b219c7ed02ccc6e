/**
 * The diagram drawn straight into the PDF with pdfkit's vector calls, from the same layout
 * and the same look as the SVG. svg-to-pdfkit (0.1.8, unchanged since 2019) parsed our tile
 * SVGs at ~80 ms a page, 17 s of a 5,000-task document; drawing directly takes a fraction,
 * and keeps every name real, searchable text.
 */
import type { DiagramModel } from './diagram.ts';
import { NODE_H, NODE_W, PITCH_X, PITCH_Y, type Layout, type Tile } from './layout.ts';
import { CRITICAL, FONT_NAME, FONT_SMALL, finishText, hoursText, INK, nameLines, STATUS_FILL, STATUS_LABEL } from './svg.ts';

/** Header band above the grid, in diagram units (title, finish line, legend). */
export const HEADER_H = 64;
/** DejaVu's ascent: pdfkit places a line by its top, SVG by its baseline. */
const ASCENT = 0.93;

type Doc = PDFKit.PDFDocument;

export function tileSize(tile: Tile): { w: number; h: number } {
  return {
    w: Math.max((tile.layer1 - tile.layer0) * PITCH_X - (PITCH_X - NODE_W), 620),
    h: HEADER_H + (tile.row1 - tile.row0) * PITCH_Y - (PITCH_Y - NODE_H),
  };
}

function text(doc: Doc, value: string, x: number, baseline: number, size: number, bold = false, colour = INK, align: 'left' | 'right' = 'left'): void {
  doc.font(bold ? 'DejaVu-Bold' : 'DejaVu').fontSize(size).fillColor(colour);
  const left = align === 'right' ? x - doc.widthOfString(value) : x;
  doc.text(value, left, baseline - ASCENT * size, { lineBreak: false });
}

function header(doc: Doc, model: DiagramModel, caption: string): void {
  text(doc, model.flowName.slice(0, 120), 0, 16, FONT_NAME + 2, true);
  text(doc, `${finishText(model)}${caption ? ` · ${caption}` : ''}`, 0, 34, FONT_SMALL);
  let x = 0;
  for (const status of ['done', 'in_progress', 'ready', 'blocked'] as const) {
    doc.rect(x, 42, 14, 14).fillAndStroke(STATUS_FILL[status], INK);
    text(doc, STATUS_LABEL[status], x + 19, 53, FONT_SMALL);
    x += 30 + doc.widthOfString(STATUS_LABEL[status]);
  }
  doc.lineWidth(3).rect(x, 42, 14, 14).stroke(CRITICAL).lineWidth(1);
  text(doc, 'Critical path (thick border, "critical")', x + 19, 53, FONT_SMALL);
}

/** Draws one tile at the current origin, in diagram units (the caller scales). */
export function drawTile(doc: Doc, model: DiagramModel, l: Layout, tile: Tile, caption: string): void {
  const { w, h } = tileSize(tile);
  header(doc, model, caption);
  const ox = tile.layer0 * PITCH_X;
  const oy = tile.row0 * PITCH_Y - HEADER_H;
  const inTile = (i: number) => l.layer[i]! >= tile.layer0 && l.layer[i]! < tile.layer1 && l.row[i]! >= tile.row0 && l.row[i]! < tile.row1;
  doc.save();
  // Edges with one end on another page run to this page's border and are cut there.
  doc.rect(0, HEADER_H, w, h - HEADER_H).clip();
  doc.translate(-ox, -oy);
  model.tasks.forEach((task, i) => {
    const here = inTile(i);
    for (const dep of task.dependsOn) {
      if (!here && !inTile(dep)) continue;
      const critical = task.critical && model.tasks[dep]!.critical;
      const x1 = l.layer[dep]! * PITCH_X + NODE_W, y1 = l.row[dep]! * PITCH_Y + NODE_H / 2;
      const x2 = l.layer[i]! * PITCH_X - 2, y2 = l.row[i]! * PITCH_Y + NODE_H / 2;
      const bend = Math.min(48, (x2 - x1) / 2);
      const colour = critical ? CRITICAL : '#6b6b6b';
      doc.lineWidth(critical ? 2.5 : 1).moveTo(x1, y1).bezierCurveTo(x1 + bend, y1, x2 - bend, y2, x2, y2).stroke(colour);
      doc.polygon([x2, y2], [x2 - 8, y2 - 4], [x2 - 8, y2 + 4]).fill(colour);
    }
  });
  model.tasks.forEach((task, i) => {
    if (!inTile(i)) return;
    const x = l.layer[i]! * PITCH_X, y = l.row[i]! * PITCH_Y;
    doc.lineWidth(task.critical ? 3.5 : 1).roundedRect(x, y, NODE_W, NODE_H, 6).fillAndStroke(STATUS_FILL[task.status], task.critical ? CRITICAL : INK);
    nameLines(task.name).forEach((line, k) => text(doc, line, x + 8, y + 17 + k * 15, FONT_NAME, true));
    text(doc, `${STATUS_LABEL[task.status]} · ${hoursText(task.estimateHours)}`, x + 8, y + NODE_H - 7, FONT_SMALL);
    if (task.critical) text(doc, 'critical', x + NODE_W - 8, y + NODE_H - 7, FONT_SMALL, true, CRITICAL, 'right');
  });
  doc.restore();
  doc.lineWidth(1);
}

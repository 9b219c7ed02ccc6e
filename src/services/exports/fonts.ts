/** DejaVu from the `dejavu-fonts-ttf` package: the same glyphs on every machine, no system fonts. */
import { createRequire } from 'node:module';
import path from 'node:path';
import PDFDocument from 'pdfkit';
import type { Measure } from './text.ts';

const dir = path.join(
  path.dirname(createRequire(import.meta.url).resolve('dejavu-fonts-ttf/package.json')),
  'ttf',
);

export const FONT_REGULAR = path.join(dir, 'DejaVuSans.ttf');
export const FONT_BOLD = path.join(dir, 'DejaVuSans-Bold.ttf');

/**
 * Text widths in DejaVu as the drawings lay it out (pdfkit and resvg shape with the same
 * font). pdfkit keeps every word it measured, so a measure lives as long as one render.
 */
export function measurer(): Measure {
  const doc = new PDFDocument({ autoFirstPage: false });
  doc.registerFont('DejaVu', FONT_REGULAR);
  doc.registerFont('DejaVu-Bold', FONT_BOLD);
  return (text, size, bold) =>
    doc
      .font(bold ? 'DejaVu-Bold' : 'DejaVu')
      .fontSize(size)
      .widthOfString(text);
}

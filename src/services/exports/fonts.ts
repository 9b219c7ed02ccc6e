/** DejaVu from the `dejavu-fonts-ttf` package: the same glyphs on every machine, no system fonts. */
import { create, type Font, type Glyph, type GlyphRun } from 'fontkit';
import { LRUCache } from 'lru-cache';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Measure } from './text.ts';

const dir = path.join(
  path.dirname(createRequire(import.meta.url).resolve('dejavu-fonts-ttf/package.json')),
  'ttf',
);

export const FONT_REGULAR = path.join(dir, 'DejaVuSans.ttf');
export const FONT_BOLD = path.join(dir, 'DejaVuSans-Bold.ttf');

/**
 * The two faces as fontkit reads them, once a thread (reading a face's tables, its layout
 * tables above all, cost a drawing about 30 ms when each opened its own), with the glyphs
 * `shape` keeps.
 */
let faces: Record<'regular' | 'bold', { font: Font; kept: Record<number, Glyph> }> | null = null;

function faceOf(bold: boolean): { font: Font; kept: Record<number, Glyph> } {
  faces ??= {
    regular: { font: create(readFileSync(FONT_REGULAR)), kept: {} },
    bold: { font: create(readFileSync(FONT_BOLD)), kept: {} },
  };
  return bold ? faces.bold : faces.regular;
}

export const face = (bold: boolean): Font => faceOf(bold).font;

const IGNORABLE = /\p{Default_Ignorable_Code_Point}/u;

/**
 * `text` shaped in DejaVu as pdfkit shapes it in a document of its own. fontkit keeps each
 * glyph it made with the code points it was first made for, and shaping reads them: had
 * U+2067 made .notdef, a later 日 (also .notdef in DejaVu) would pass for a default-ignorable
 * character and get no width. With faces kept for a thread, a width would then depend on what
 * the thread drew before. So each shaping starts from the glyphs a fresh face would make:
 * .notdef made first with no code points (as pdfkit's font makes it when it opens), and only
 * glyphs made for the one code point the face maps to them kept from earlier shapings (DejaVu
 * maps every glyph from one code point at most), which saves decoding them again, a third of
 * the time. fontkit is pinned; test/services/exports/fonts.test.ts checks this.
 */
export function shape(text: string, bold: boolean): GlyphRun {
  const { font, kept } = faceOf(bold);
  const made: Record<number, Glyph> = Object.create(kept) as Record<number, Glyph>;
  font._glyphs = made;
  font.getGlyph(0);
  const run = font.layout(text);
  for (const id of Object.keys(made)) {
    const glyph = made[Number(id)];
    const [codePoint, more] = glyph?.codePoints ?? [];
    if (
      glyph &&
      glyph.id !== 0 &&
      codePoint !== undefined &&
      more === undefined &&
      !IGNORABLE.test(String.fromCodePoint(codePoint)) &&
      font.glyphForCodePoint(codePoint).id === glyph.id
    )
      kept[glyph.id] = glyph;
  }
  return run;
}

/** Widths of the pieces measured lately, in thousandths of an em: a thread's drawings share them. */
const pieces = new LRUCache<string, number>({ max: 20_000 });

/** A piece's width in thousandths of an em, summed as pdfkit sums it. */
function pieceWidth(piece: string, bold: boolean): number {
  const key = (bold ? 'b' : 'r') + piece;
  let width = pieces.get(key);
  if (width === undefined) {
    const scale = 1000 / face(bold).unitsPerEm;
    width = 0;
    for (const position of shape(piece, bold).positions) width += position.xAdvance * scale;
    pieces.set(key, width);
  }
  return width;
}

/**
 * Text widths in DejaVu as the drawings lay it out (pdfkit and resvg shape with the same
 * font): pdfkit's `widthOfString` to the last bit (it shapes a string word by word, each with
 * the space after it, and scales as here), so the PDF, which draws with pdfkit, and the SVG
 * agree on every line.
 */
export function measurer(): Measure {
  return (text, size, bold) => {
    let width = 0;
    let last = 0;
    for (let index = 0; index <= text.length; index++) {
      const c = text.charAt(index);
      if ((index === text.length && last < index) || c === ' ' || c === '\t') {
        width += pieceWidth(text.slice(last, index + 1), bold);
        last = index + 1;
      }
    }
    return ((width * (size / 1000) + 0) * 100) / 100;
  };
}

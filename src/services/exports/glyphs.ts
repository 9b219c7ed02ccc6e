/**
 * Text as glyph outlines, for the PNG. resvg shapes each <text> against DejaVu's layout
 * tables afresh (1–2 ms a run: 240 ms of a 50-task diagram's 137 runs); a <path> of the same
 * outlines costs it next to nothing. Here a run is shaped by fontkit with the same font and
 * default features (kerning, ligatures), each glyph's outline written once a thread (and a
 * run's path kept for the next drawing of that text), and the run drawn as one path in
 * resvg's place for it: the PNG's pixels are resvg's own, to a rounding at a few glyph edges
 * (test/services/exports/glyphs.test.ts compares them).
 *
 * Only text that needs no more than that: left to right with no reordering (see
 * `plainLeftToRight`), in Latin, Greek and Cyrillic with the common punctuation, digits and
 * symbols, every character in DejaVu, spaces as resvg keeps them (none at the ends, none
 * doubled). Anything else (right-to-left names, marks, other scripts, characters DejaVu lacks,
 * which resvg would look for in other fonts) stays a <text> for resvg to shape.
 */
import type { Glyph } from 'fontkit';
import { LRUCache } from 'lru-cache';
import { face, shape } from './fonts.ts';
import { plainLeftToRight } from './text.ts';

/** A run of text as svg.ts places it: from x (or ending at x), on the baseline y, in SVG units. */
export interface TextRun {
  text: string;
  x: number;
  y: number;
  size: number;
  bold: boolean;
  anchor: 'start' | 'end';
}

/** What a run draws as: path data in font units (y upwards), and the transform that places it. */
export interface Outline {
  d: string;
  transform: string;
}

const SCRIPTS = /^[\p{Script=Latin}\p{Script=Greek}\p{Script=Cyrillic}\p{Script=Common}]*$/u;
/** Controls, formatting characters (U+200E has the class L, yet resvg gives it no width), private use and unassigned. */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Default_Ignorable_Code_Point}]/u;

/**
 * A glyph's outline in relative commands after its first move, where it starts and the point
 * its last command leaves the pen at, so that a run's glyphs join into one path with one
 * number pair each between them.
 */
interface GlyphOutline {
  d: string;
  startX: number;
  startY: number;
  endX: number;
  endY: number;
}

/** By face and glyph id: at most the two faces' glyphs (about 6,000 each). */
const outlines = new Map<string, GlyphOutline>();

function glyphOutline(bold: boolean, glyph: Glyph): GlyphOutline {
  const key = `${bold ? 'b' : 'r'}${glyph.id}`;
  const known = outlines.get(key);
  if (known) return known;
  let d = '';
  let startX = 0,
    startY = 0,
    x = 0,
    y = 0,
    subX = 0,
    subY = 0,
    first = true;
  for (const { command, args: a } of glyph.path.commands) {
    const [a0 = 0, a1 = 0, a2 = 0, a3 = 0, a4 = 0, a5 = 0] = a;
    switch (command) {
      case 'moveTo':
        if (first) [startX, startY, first] = [a0, a1, false];
        else d += `m${a0 - x} ${a1 - y}`;
        [x, y, subX, subY] = [a0, a1, a0, a1];
        break;
      case 'lineTo':
        d += `l${a0 - x} ${a1 - y}`;
        [x, y] = [a0, a1];
        break;
      case 'quadraticCurveTo':
        d += `q${a0 - x} ${a1 - y} ${a2 - x} ${a3 - y}`;
        [x, y] = [a2, a3];
        break;
      case 'bezierCurveTo':
        d += `c${a0 - x} ${a1 - y} ${a2 - x} ${a3 - y} ${a4 - x} ${a5 - y}`;
        [x, y] = [a4, a5];
        break;
      case 'closePath':
        d += 'z';
        [x, y] = [subX, subY];
        break;
    }
  }
  const outline = { d, startX, startY, endX: x, endY: y };
  outlines.set(key, outline);
  return outline;
}

/** Whether the PNG may draw `text` as outlines (see above). */
export function outlinable(text: string, bold: boolean): boolean {
  if (text !== text.trim() || text.includes('  ')) return false;
  if (!SCRIPTS.test(text) || INVISIBLE.test(text) || !plainLeftToRight(text)) return false;
  const font = face(bold);
  for (const c of text) if (!font.hasGlyphForCodePoint(c.codePointAt(0) ?? 0)) return false;
  return true;
}

/** A run's path in font units and its advance (null: drawn by resvg), by face and text. */
const runs = new LRUCache<string, { d: string; advance: number } | { d: null }>({
  maxSize: 4_000_000,
  sizeCalculation: (value, key) => key.length + (value.d?.length ?? 0) + 1,
});

/** `text`'s glyphs as one path in font units, and its advance; null when resvg should shape it (see above). */
function runPath(text: string, bold: boolean): { d: string; advance: number } | null {
  const key = (bold ? 'b' : 'r') + text;
  const known = runs.get(key);
  if (known) return known.d === null ? null : known;
  let found: { d: string; advance: number } | null = null;
  if (outlinable(text, bold)) {
    const shaped = shape(text, bold);
    let d = '';
    // The pen and the point the path's last command left off at.
    let pen = 0,
      atX = 0,
      atY = 0;
    shaped.glyphs.forEach((glyph, i) => {
      const position = shaped.positions[i];
      if (!position) return;
      const g = glyphOutline(bold, glyph);
      if (g.d !== '') {
        const x = pen + position.xOffset,
          y = position.yOffset;
        d += `${d === '' ? 'M' : 'm'}${x + g.startX - atX} ${y + g.startY - atY}${g.d}`;
        [atX, atY] = [x + g.endX, y + g.endY];
      }
      pen += position.xAdvance;
    });
    if (d !== '') found = { d, advance: pen };
  }
  runs.set(key, found ?? { d: null });
  return found;
}

/** `run` as one path of its glyphs' outlines, or null when resvg should shape it (see above). */
export function outline(run: TextRun): Outline | null {
  const path = runPath(run.text, run.bold);
  if (!path) return null;
  const scale = run.size / face(run.bold).unitsPerEm;
  const x = run.anchor === 'end' ? run.x - path.advance * scale : run.x;
  return { d: path.d, transform: `matrix(${scale} 0 0 ${-scale} ${x} ${run.y})` };
}

/**
 * Text in the pictures of a flow, measured with the fonts that draw it: lines wrapped to a
 * width, and right-to-left names (Hebrew, Arabic) in the order a reader expects.
 *
 * SVG renderers (browsers, resvg) apply the Unicode bidirectional algorithm themselves; a
 * name whose first strong letter is right-to-left is isolated as a right-to-left paragraph
 * (RLI … PDI, as `dir="auto"` would), so "שלום v2." keeps its number and full stop where a
 * Hebrew reader puts them. pdfkit does not: it shapes each word left to right in logical order,
 * so a two-word Hebrew name came out with its words swapped. For the PDF a line is cut into
 * directional runs in visual order (bidi-js, UAX #9) and each run is drawn whole, where
 * fontkit shapes a right-to-left run (Arabic joining too) and lays it out right to left.
 */
import bidiFactory from 'bidi-js';

/** The width of `text` at `size` in the diagram's font, regular or bold. */
export type Measure = (text: string, size: number, bold: boolean) => number;

const bidi = bidiFactory();

const ELLIPSIS = '…';

/**
 * Lines of `text` (already one line: see platform/html.ts `oneLine`) each within its width
 * (`widths[k]` for line k, the last width for the rest), broken at spaces, or inside a word
 * too long for a line; at most `maxLines`, the last ending in … when text is left over.
 */
export function wrap(
  text: string,
  widths: readonly number[],
  maxLines: number,
  width: (s: string) => number,
): string[] {
  const lines: string[] = [];
  let rest = text.trim();
  while (rest && lines.length < maxLines) {
    const room = widths[Math.min(lines.length, widths.length - 1)]!;
    const last = lines.length === maxLines - 1;
    if (width(rest) <= room) {
      lines.push(rest);
      rest = '';
      break;
    }
    if (last) {
      lines.push(cut(rest, room, width));
      rest = '';
      break;
    }
    // The longest run of whole words that fits; else as many characters of the word as fit.
    let end = -1;
    for (
      let space = rest.indexOf(' ');
      space > 0 && width(rest.slice(0, space)) <= room;
      space = rest.indexOf(' ', space + 1)
    )
      end = space;
    if (end > 0) {
      lines.push(rest.slice(0, end));
      rest = rest.slice(end + 1).trimStart();
    } else {
      const chars = Array.from(rest);
      const n = Math.max(
        1,
        longest(chars.length, (k) => width(chars.slice(0, k).join('')) <= room),
      );
      lines.push(chars.slice(0, n).join(''));
      rest = chars.slice(n).join('').trimStart();
    }
  }
  return lines.length > 0 ? lines : [''];
}

/** `text` cut to fit `room` with a closing …, at a space when one is near the end. */
export function cut(text: string, room: number, width: (s: string) => number): string {
  if (width(text) <= room) return text;
  const chars = Array.from(text);
  const head = (k: number) => `${chars.slice(0, k).join('').trimEnd()}${ELLIPSIS}`;
  return head(longest(chars.length, (k) => width(head(k)) <= room));
}

/** The largest k in [0, n] for which `fits(k)` holds (it holds for 0 and fails past some k): a binary search, so a long cell costs a few measurements. */
function longest(n: number, fits: (k: number) => boolean): number {
  let lo = 0,
    hi = n;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** Whether text reads right to left: its first strong character is right-to-left (UAX #9 rules P2–P3). */
export function rightToLeft(text: string): boolean {
  return bidi.getEmbeddingLevels(text).paragraphs[0]?.level === 1;
}

/** Text for an SVG <text>: a right-to-left name isolated as a right-to-left paragraph (RLI … PDI). */
export function svgText(text: string): string {
  return rightToLeft(text) ? `\u2067${text}\u2069` : text;
}

export interface Run {
  /** In logical order. */
  text: string;
  rtl: boolean;
}

/**
 * One line as runs of one direction, in visual order from left to right, in a paragraph of the
 * given direction; each run's text is in logical order, for a shaper that lays out a
 * right-to-left run itself.
 */
export function visualRuns(line: string, rtl = rightToLeft(line)): Run[] {
  const levels = bidi.getEmbeddingLevels(line, rtl ? 'rtl' : 'ltr');
  const order = bidi.getReorderedIndices(line, levels);
  const runs: { indices: number[]; level: number }[] = [];
  for (const i of order) {
    const level = levels.levels[i]!;
    const run = runs.at(-1);
    if (run && run.level === level) run.indices.push(i);
    else runs.push({ indices: [i], level });
  }
  return runs.map(({ indices, level }) => {
    const logical = indices.sort((a, b) => a - b);
    return { text: logical.map((i) => line[i]).join(''), rtl: level % 2 === 1 };
  });
}

/** Whether a shaper lays `run` out right to left by itself: it holds a right-to-left letter. */
export const hasRtlLetter = (run: string): boolean =>
  Array.from(run).some((c) => ['R', 'AL'].includes(bidi.getBidiCharTypeName(c)));

/** Bidirectional classes that stay at level 0, in their order, in a paragraph without right-to-left letters. */
const PLAIN_CLASSES = new Set(['L', 'EN', 'ES', 'ET', 'CS', 'ON', 'WS']);

/**
 * Whether `text` reads left to right with no reordering at all: no right-to-left letter or
 * Arabic number, no explicit embedding, override or isolate, no mark, control or tab.
 */
export const plainLeftToRight = (text: string): boolean =>
  Array.from(text).every((c) => PLAIN_CLASSES.has(bidi.getBidiCharTypeName(c)));

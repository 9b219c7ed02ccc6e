/**
 * The diagrams' text measure (fonts.ts): pdfkit's widthOfString to the bit, for any text, and
 * a function of the text alone although the faces are kept for a thread (fontkit remembers
 * which code points each glyph was first made for, and shaping reads that).
 */
import t from 'tap';
import fc from 'fast-check';
import PDFDocument from 'pdfkit';
import { face, FONT_BOLD, FONT_REGULAR, measurer } from '../../../src/services/exports/fonts.ts';

/** pdfkit's measure in a document of its own per call, as a fresh PDF measures. */
function pdfkitWidth(text: string, size: number, bold: boolean): number {
  const doc = new PDFDocument({ autoFirstPage: false });
  doc.registerFont('f', bold ? FONT_BOLD : FONT_REGULAR);
  return doc.font('f').fontSize(size).widthOfString(text);
}

const SAMPLES = [
  'Task 1 of the plan',
  'CMS setup and content model for the new site',
  'AVAWAY To Ty ffi',
  'שלום עולם',
  '\u2067שלום עולם\u2069',
  'مرحبا بالعالم',
  'e\u0301 Café',
  '日本語のタスク',
  '😀 emoji 👍🏽',
  'tab\there',
  '  lead  trail  ',
  '',
  'Blocked · no estimate',
  'x\u0000y\u200b\ufeffz',
  'Ωμέγα Привет ǅ',
  'ไทย हिन्दी',
  '\ud800 lone',
];

t.test('widths are pdfkit’s, to the bit', async (t) => {
  const measure = measurer();
  for (const text of SAMPLES)
    for (const bold of [false, true])
      for (const size of [12, 13])
        t.ok(
          Object.is(measure(text, size, bold), pdfkitWidth(text, size, bold)),
          `${JSON.stringify(text)} ${bold ? 'bold' : 'regular'} ${size}`,
        );
  const pool = ['a', 'V', 'T', ' ', '\t', '.', 'ש', 'ع', '1', 'é', '\u0301', '日', '😀', '·', 'ﬀ'];
  fc.assert(
    fc.property(
      fc.array(fc.constantFrom(...pool), { maxLength: 24 }),
      fc.boolean(),
      (parts, bold) => {
        const text = parts.join('');
        return Object.is(measure(text, 12, bold), pdfkitWidth(text, 12, bold));
      },
    ),
    { numRuns: 300 },
  );
});

t.test('a width does not depend on what the thread measured before', async (t) => {
  const measure = measurer();
  const alone = ['日本', 'x\u00ady', 'a-b', '\u2067ab'].map((text) => pdfkitWidth(text, 12, false));
  // .notdef first made for U+2067 (a default-ignorable character), then for 日.
  measure('\u2067ab', 12, false);
  measure('x\u00ady', 12, false);
  t.strictSame(
    ['日本', 'x\u00ady', 'a-b', '\u2067ab'].map((text) => measure(text, 12, false)),
    alone,
  );
});

t.test(
  'DejaVu maps each glyph from one code point at most (what fonts.ts `shape` keeps rests on)',
  async (t) => {
    for (const bold of [false, true]) {
      const font = face(bold) as unknown as {
        characterSet: number[];
        glyphForCodePoint(c: number): { id: number };
      };
      const seen = new Map<number, number>();
      const shared: string[] = [];
      for (const c of font.characterSet) {
        const id = font.glyphForCodePoint(c).id;
        const before = seen.get(id);
        if (before !== undefined) shared.push(`U+${c.toString(16)} and U+${before.toString(16)}`);
        seen.set(id, c);
      }
      t.strictSame(shared, [], bold ? 'bold' : 'regular');
    }
  },
);

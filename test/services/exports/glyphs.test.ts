/**
 * The PNG's text as glyph outlines (glyphs.ts) and its PNG writer (png-encode.ts): resvg draws
 * the outlines as it draws the same <text> (the same pixels, but for a rounding at a few glyph
 * edges along a long line), text that needs resvg's shaping stays <text>, and the written PNG
 * holds resvg's pixels.
 */
import t from 'tap';
import { Resvg } from '@resvg/resvg-js';
import { PNG } from 'pngjs';
import { FONT_BOLD, FONT_REGULAR } from '../../../src/services/exports/fonts.ts';
import { outline, outlinable } from '../../../src/services/exports/glyphs.ts';
import { layout } from '../../../src/services/exports/layout.ts';
import { diagramPng } from '../../../src/services/exports/png.ts';
import { encodePng } from '../../../src/services/exports/png-encode.ts';
import { tileSvg } from '../../../src/services/exports/svg.ts';
import type { DiagramModel } from '../../../src/services/exports/diagram.ts';

const OPTIONS = {
  font: {
    fontFiles: [FONT_REGULAR, FONT_BOLD],
    loadSystemFonts: false,
    defaultFontFamily: 'DejaVu Sans',
  },
};
const escape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;');

/** Pixels that differ between two renders, and by how much at most (of 255). */
function difference(a: Buffer, b: Buffer): { pixels: number; most: number } {
  let pixels = 0,
    most = 0;
  for (let i = 0; i < a.length; i += 4) {
    let d = 0;
    for (let k = 0; k < 4; k++) d = Math.max(d, Math.abs((a[i + k] ?? 0) - (b[i + k] ?? 0)));
    if (d > 0) pixels++;
    most = Math.max(most, d);
  }
  return { pixels, most };
}

const LINES = [
  'Task 12 of the plan',
  'AVAWAY To Ty Wa yo, “quotes” — dashes … ½ € ™ → ©',
  'Café crème, Ærøskøbing, Łódź, Dvořák, ǅemal',
  'Ωμέγα Ελληνικά, Привет мир, Ђорђе',
  'Blocked · 12.5 h',
  'ﬁnal ﬀ ﬃ office affine',
  '0123456789 +−×÷=≠≤≥ ∑∫√∞ ←↑→↓ ■□●○ 😀 (in DejaVu)',
  'critical',
];

t.test('outlines draw the pixels resvg draws for the same text', async (t) => {
  const width = 900,
    pitch = 24;
  for (const bold of [false, true]) {
    for (const anchor of ['start', 'end'] as const) {
      const height = LINES.length * pitch + 12;
      const head = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="DejaVu Sans"><rect width="100%" height="100%" fill="#fff"/>`;
      const x = anchor === 'start' ? 10.3 : 880.7;
      const texts = LINES.map(
        (text, i) =>
          `<text x="${x}" y="${20 + i * pitch}" font-size="13"${bold ? ' font-weight="bold"' : ''} text-anchor="${anchor}">${escape(text)}</text>`,
      ).join('');
      const paths = LINES.map((text, i) => {
        const o = outline({ text, x, y: 20 + i * pitch, size: 13, bold, anchor });
        t.ok(o, `${JSON.stringify(text)} is drawn as outlines`);
        return o ? `<path transform="${o.transform}" d="${o.d}"/>` : '';
      }).join('');
      const a = new Resvg(`${head}${texts}</svg>`, OPTIONS).render().pixels;
      const b = new Resvg(`${head}${paths}</svg>`, OPTIONS).render().pixels;
      const { pixels, most } = difference(a, b);
      t.ok(
        pixels <= 4 * LINES.length && most <= 64,
        `${bold ? 'bold' : 'regular'}, anchored at the ${anchor}: ${pixels} pixels differ, by ${most} at most`,
      );
    }
  }
});

t.test('text that needs resvg’s shaping, or no text, stays <text>', async (t) => {
  for (const text of [
    'שלום עולם',
    'مرحبا',
    'Design v2 שלום',
    'e\u0301',
    '日本語',
    '🦀 (not in DejaVu)',
    'a\u200eb',
    'a\u200bb',
    'a\u00adb',
    'tab\there',
    'two  spaces',
    ' leading',
    'trailing ',
    '\u202eoverride',
    'x\u0007y',
    'ـ؟',
    'Հայերեն',
    '',
  ])
    t.notOk(
      outlinable(text, false) &&
        outline({ text, x: 0, y: 0, size: 12, bold: false, anchor: 'start' }),
      JSON.stringify(text),
    );
});

t.test(
  'a diagram with any names: its PNG SVG draws as resvg draws the same with <text>',
  async (t) => {
    const names = [
      'Design',
      'CMS setup and content model for the new site',
      'שלום עולם v2.',
      'مرحبا بالعالم',
      'e\u0301 combining',
      '日本語のタスク',
      'x\u0000y\u200bz\u0007',
      'Ωμέγα Привет',
      '</svg> & <b>',
      '\u202Eoverride',
    ];
    const model: DiagramModel = {
      flowId: 'flw_glyphs',
      flowName: 'Flow «Ünïcödé»',
      version: 1,
      dueDate: '2030-12-31',
      projectedFinish: '2030-11-29',
      onTrack: true,
      finishP80: null,
      tasks: names.map((name, i) => ({
        id: `t${i}`,
        name,
        status: (['done', 'in_progress', 'ready', 'blocked'] as const)[i % 4] ?? 'ready',
        estimateHours: i % 3 === 0 ? null : 4 + i,
        estimateRange: null,
        critical: i % 2 === 0,
        dependsOn: i === 0 ? [] : [i - 1],
      })),
    };
    const l = await layout(model);
    const text = tileSvg(model, l, undefined, {}, { unclipped: true });
    const outlined = tileSvg(model, l, undefined, {}, { outline, unclipped: true });
    t.ok(
      (outlined.match(/<text/g) ?? []).length < (text.match(/<text/g) ?? []).length / 2,
      'most text outlined',
    );
    t.match(
      outlined,
      /<text[^>]*>\u2067שלום עולם v2\.\u2069<\/text>/,
      'a right-to-left name left to resvg, isolated',
    );
    const a = new Resvg(text, OPTIONS).render().pixels;
    const b = new Resvg(outlined, OPTIONS).render().pixels;
    const { pixels, most } = difference(a, b);
    t.ok(pixels <= 100 && most <= 64, `${pixels} pixels differ, by ${most} at most`);

    const png = PNG.sync.read(await diagramPng(model));
    const ref = new Resvg(outlined, { ...OPTIONS, background: '#ffffff' }).render();
    t.equal(png.width, ref.width);
    t.ok(png.data.equals(ref.pixels), 'the PNG holds the pixels resvg drew');
  },
);

t.test('the PNG writer: resvg’s own encoding’s pixels, any size', async (t) => {
  for (const [w, h] of [
    [1, 1],
    [3, 2],
    [301, 157],
  ] as const) {
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}"><rect width="100%" height="100%" fill="#fff"/><circle cx="${w / 2}" cy="${h / 2}" r="${h / 3}" fill="#c62828" fill-opacity="0.6"/></svg>`;
    const image = new Resvg(svg).render();
    const ours = PNG.sync.read(encodePng(image.pixels, image.width, image.height));
    const theirs = PNG.sync.read(image.asPng());
    t.equal(ours.width, w);
    t.equal(ours.height, h);
    t.ok(ours.data.equals(theirs.data), `${w}×${h}: the same pixels`);
  }
});

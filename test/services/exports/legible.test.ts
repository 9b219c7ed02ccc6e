/**
 * The diagrams and the PDF tell the truth legibly (issue 29, item 8): no two texts of a
 * box meet (measured with the fonts that draw them), a long name wraps to two lines and
 * keeps its whole self in the box's <title>, page one names the flow once, tied critical
 * branches are not strung into one chain, and right-to-left names read in their own order.
 */
import t from 'tap';
import PDFDocument from 'pdfkit';
import { FONT_BOLD, FONT_REGULAR } from '../../../src/services/exports/fonts.ts';
import { NODE_W } from '../../../src/services/exports/layout.ts';
import { newFlow, ok, startFlowServer, taskNamed } from '../../helpers/flows.ts';
import type { TestServer } from '../../helpers/server.ts';
import { decodePdf, parseXml, type XmlText } from './decode.ts';
import { pathOf } from '../../web/public/helpers.ts';
import type { FlowSummary } from '../../helpers/wire.ts';

/** README's Launch flow, one long name and two right-to-left ones. */
const LAUNCH = {
  name: 'Launch',
  dueDate: '2030-03-01',
  tasks: [
    { name: 'Design', estimateHours: 16 },
    { name: 'Build', estimateHours: 40, after: [0] },
    { name: 'Docs', estimateHours: 8, after: [0] },
    { name: 'Release', after: [1, 2] },
    { name: 'CMS setup and content model for the new site', estimateHours: 4, after: [3] },
    { name: 'שלום עולם', estimateHours: 2, after: [3] },
    { name: 'مرحبا بالعالم', after: [3] },
  ],
};

async function exported(s: TestServer, flowId: string, format: 'pdf' | 'png'): Promise<Buffer> {
  const res = await fetch(`${s.url}/v1/flows/${flowId}/exports`, {
    method: 'POST',
    headers: { authorization: `Bearer ${s.adminKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ format }),
  });
  if (res.status !== 200) throw new Error(`export answered ${res.status}`);
  return Buffer.from(await res.arrayBuffer());
}

const attr = (el: XmlText, name: string) => el.attributes[name];
/** DejaVu Sans: ascent and descent per unit of size. */
const ASCENT = 0.93,
  DESCENT = 0.24;
const BIDI_MARKS = /[\u2066-\u2069]/g;

t.test(
  'the served SVG: no text of a box meets another or leaves the box; long names wrap to two lines with the whole name in <title>',
  async (t) => {
    const s = await startFlowServer(t);
    const flow = await newFlow(t, s, LAUNCH);
    const path = pathOf(
      (await ok<FlowSummary>(t, s, 'POST', `/v1/flows/${flow.id}/publish`)).publicUrl,
    );
    const svg = await s.api('GET', `${path}/diagram.svg`);
    t.equal(svg.status, 200);
    const elements = parseXml(svg.text);
    const boxes = elements.filter(
      (el) =>
        el.element === 'rect' &&
        /\bfp-node\b/.test(attr(el, 'class') ?? '') &&
        attr(el, 'width') === String(NODE_W),
    );
    t.equal(boxes.length, LAUNCH.tasks.length, 'a box a task');
    // Widths as the fonts that draw the text give them (pdfkit and resvg both shape DejaVu).
    const fonts = new PDFDocument({ autoFirstPage: false });
    fonts.registerFont('regular', FONT_REGULAR);
    fonts.registerFont('bold', FONT_BOLD);
    const measure = (text: string, size: number, bold: boolean) =>
      fonts
        .font(bold ? 'bold' : 'regular')
        .fontSize(size)
        .widthOfString(text);
    // A box's texts are the <text> elements of its group (g.fp-task), beside its <rect>.
    const texts = elements
      .filter(
        (el) =>
          el.element === 'text' &&
          el.text !== '' &&
          attr(elements[el.parent]!, 'class') === 'fp-task',
      )
      .map((el) => {
        const size = Number(attr(el, 'font-size') ?? 12);
        const bold = attr(el, 'font-weight') === 'bold';
        const width = measure(el.text.replace(BIDI_MARKS, ''), size, bold);
        const x = Number(attr(el, 'x')),
          y = Number(attr(el, 'y'));
        const left = attr(el, 'text-anchor') === 'end' ? x - width : x;
        return {
          text: el.text,
          left,
          right: left + width,
          top: y - ASCENT * size,
          bottom: y + DESCENT * size,
          x,
          y,
          parent: el.parent,
          bold,
        };
      });
    const release = taskNamed(flow, 'Release');
    t.ok(release.criticalPath, 'Release is critical');
    for (const box of boxes) {
      const [bx, bw] = ['x', 'width'].map((k) => Number(attr(box, k))) as [number, number];
      const inside = texts.filter((x) => x.parent === box.parent);
      const name = inside.map((x) => x.text).join(' | ');
      t.ok(inside.length >= 2, `box ${name}: name and status`);
      for (const x of inside)
        t.ok(
          x.left >= bx + 4 && x.right <= bx + bw - 4,
          `"${x.text}" inside its box (${x.left.toFixed(1)}–${x.right.toFixed(1)} of ${bx}–${bx + bw})`,
        );
      for (let a = 0; a < inside.length; a++) {
        for (let b = a + 1; b < inside.length; b++) {
          const [p, q] = [inside[a]!, inside[b]!];
          const meet = p.left < q.right && q.left < p.right && p.top < q.bottom && q.top < p.bottom;
          t.notOk(meet, `"${p.text}" and "${q.text}" do not meet`);
        }
      }
    }
    const releaseTexts = texts.filter(
      (x) => x.text === 'Blocked · no estimate' || x.text === 'critical',
    ).length;
    t.ok(releaseTexts >= 3, 'Release says both its status and "critical"');

    const long = LAUNCH.tasks[4]!.name;
    const title = elements.find((el) => el.element === 'title' && el.text === long);
    t.ok(title, "the whole long name is the box's <title>");
    const nameLines = texts.filter(
      (x) => x.parent === title?.parent && x.bold && x.text !== 'critical',
    );
    t.equal(
      nameLines.length,
      2,
      `the long name on two lines: ${nameLines.map((x) => x.text).join(' / ')}`,
    );
    t.match(
      nameLines.map((x) => x.text).join(' '),
      /^CMS setup and content model/,
      'wrapped at spaces, its start whole',
    );

    const hebrew = texts.find((x) => x.text.includes('שלום'));
    t.equal(
      hebrew?.text,
      '\u2067שלום עולם\u2069',
      'a right-to-left name in logical order, isolated as a right-to-left paragraph',
    );
    t.ok(
      texts.some((x) => x.text === 'Design'),
      'a left-to-right name as it is',
    );
  },
);

t.test(
  'the PDF: the title once on page one, tied critical branches side by side, right-to-left names in reading order',
  async (t) => {
    const s = await startFlowServer(t);
    const launch = await newFlow(t, s, LAUNCH);
    const pdf = await decodePdf(await exported(s, launch.id, 'pdf'));
    t.equal(pdf.pageTexts[0]!.match(/Launch/g)?.length, 1, 'page one names the flow once');
    t.ok(
      pdf.text.includes('שלום עולם'),
      'the Hebrew name reads in its own order (pdf.js gives text in logical order)',
    );
    t.ok(pdf.text.includes('مرحبا بالعالم'), 'the Arabic one too');
    t.ok(
      pdf.text.includes('CMS setup and content model for the new site'),
      'the long name whole in the schedule',
    );

    // Two branches of 40 hours each: both critical, neither after the other.
    const tie = await newFlow(t, s, {
      name: 'Tie',
      tasks: [
        { name: 'Design', estimateHours: 16 },
        { name: 'Build', estimateHours: 40, after: [0] },
        { name: 'Docs', estimateHours: 40, after: [0] },
        { name: 'Release', estimateHours: 8, after: [1, 2] },
      ],
    });
    t.strictSame(
      tie.tasks.map((task: { criticalPath: boolean }) => task.criticalPath),
      [true, true, true, true],
      'all four critical',
    );
    const plan = (await decodePdf(await exported(s, tie.id, 'pdf'))).pageTexts[1]!;
    t.notMatch(plan, /Build → Docs|Docs → Build/, 'no chain through the two branches');
    t.notMatch(plan, /→/, 'no arrows at all in the critical path');
    t.match(plan, /Day 1: Design \(to day \d+\)/, 'Design first');
    t.match(
      plan,
      /Day (\d+): Build \(to day \d+\), Docs \(to day \d+\), in parallel/,
      'Build and Docs on one line, in parallel',
    );
    t.match(plan, /Docs \(to day \d+\), in parallel[\s\S]*Day \d+: Release/, 'then Release');
  },
);

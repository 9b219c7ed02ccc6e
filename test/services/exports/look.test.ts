/**
 * The exports looked at as a person would, with pixels: the PDF's page one rendered by
 * poppler's `pdftoppm` as a printer would put it on paper, the PNG decoded. A 10-task plan's
 * diagram fills at least half of page one, legibly; its boxes carry their status colours in
 * both files. (That no edge crosses a box is checked on the layout's geometry in
 * diagram.test.ts; dark boxes on the public pages in test/web/public/browser.test.ts.)
 * Without poppler-utils the PDF checks are skipped and say so.
 */
import t from 'tap';
import type { PNG } from 'pngjs';
import { STATUS_FILL } from '../../../src/services/exports/svg.ts';
import { newFlow, startFlowServer } from '../../helpers/flows.ts';
import { decodePdf, pdfPage } from './decode.ts';
import { PNG as Png } from 'pngjs';

/** A software release's first ten steps (the built-in template's): four stages, up to five things at once. */
const RELEASE = {
  name: 'Release 4.2',
  dueDate: '2031-03-31',
  tasks: [
    { name: 'Define release scope', estimateHours: 4 },
    { name: 'Feature freeze', estimateHours: 4, after: [0] },
    { name: 'Finish remaining features', estimateHours: 40, after: [0] },
    { name: 'Write release notes draft', estimateHours: 8, after: [0] },
    { name: 'Update changelog and docs', estimateHours: 16, after: [2, 3] },
    { name: 'Run regression test suite', estimateHours: 24, after: [1, 2] },
    { name: 'Performance and load testing', estimateHours: 16, after: [1, 2] },
    { name: 'Security review', estimateHours: 16, after: [1] },
    { name: 'Fix release blockers', estimateHours: 24, after: [5, 6, 7] },
    { name: 'Prepare database migrations', estimateHours: 12, after: [2] },
  ],
};

const rgb = (hex: string) =>
  [1, 3, 5].map((k) => parseInt(hex.slice(k, k + 2), 16)) as [number, number, number];
const FILLS = Object.values(STATUS_FILL).map(rgb);

/** The bounding box of the pixels painted in a box's status colour (within `tolerance` per channel). */
function boxesBounds(
  image: PNG,
  tolerance = 6,
): { left: number; top: number; right: number; bottom: number; pixels: number } | null {
  let left = Infinity,
    top = Infinity,
    right = -Infinity,
    bottom = -Infinity,
    pixels = 0;
  for (let y = 0; y < image.height; y++) {
    for (let x = 0; x < image.width; x++) {
      const i = 4 * (y * image.width + x);
      const [r, g, b] = [image.data[i]!, image.data[i + 1]!, image.data[i + 2]!];
      if (
        !FILLS.some(
          ([fr, fg, fb]) =>
            Math.abs(r - fr) <= tolerance &&
            Math.abs(g - fg) <= tolerance &&
            Math.abs(b - fb) <= tolerance,
        )
      )
        continue;
      if (r === 255 && g === 255 && b === 255) continue;
      pixels++;
      left = Math.min(left, x);
      right = Math.max(right, x);
      top = Math.min(top, y);
      bottom = Math.max(bottom, y);
    }
  }
  return pixels === 0 ? null : { left, top, right, bottom, pixels };
}

t.test('a 10-task plan as a printer and a viewer show it', async (t) => {
  const s = await startFlowServer(t);
  const flow = await newFlow(t, s, RELEASE);
  const exported = async (format: 'pdf' | 'png') => {
    const res = await fetch(`${s.url}/v1/flows/${flow.id}/exports`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ format }),
    });
    t.equal(res.status, 200, `${format} exported`);
    return Buffer.from(await res.arrayBuffer());
  };

  const pdf = await exported('pdf');
  const decoded = await decodePdf(pdf);
  t.ok(decoded.minFontSize >= 6, `every text at least 6 pt (${decoded.minFontSize.toFixed(2)})`);
  // A name may wrap in its box: the text's line break reads as a space.
  const one = decoded.pageTexts[0]!.replace(/\s+/g, ' ');
  for (const task of RELEASE.tasks) t.match(one, task.name, `page one shows ${task.name}`);
  const page = await pdfPage(pdf, 1, 50);
  if (!page) {
    t.comment('pdftoppm (poppler-utils) is not installed: page one not looked at');
  } else {
    const boxes = boxesBounds(page);
    t.ok(boxes, 'boxes in their status colours on page one');
    const share =
      ((boxes!.right - boxes!.left) * (boxes!.bottom - boxes!.top)) / (page.width * page.height);
    t.ok(
      share >= 0.5,
      `the diagram's boxes span ${(share * 100).toFixed(0)} % of page one (at least half)`,
    );
  }

  const png = Png.sync.read(await exported('png'));
  const drawn = boxesBounds(png);
  t.ok(drawn && drawn.pixels > 1000, 'the PNG paints the boxes in their status colours');
  t.ok(drawn!.right - drawn!.left > png.width * 0.8, 'and uses its width');
});

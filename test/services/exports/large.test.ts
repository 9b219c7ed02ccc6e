/** A 5,000-task flow still exports: every PDF text at least 6 pt, every critical task named. */
import t from 'tap';
import { newFlow, startFlowServer } from '../../helpers/flows.ts';
import { decodePdf, decodePng } from './decode.ts';

const TASKS = 5000;

/** A plan shaped like real ones: each task waits for up to three of the 60 before it. */
function plan(): { name: string; estimateHours: number; after: number[] }[] {
  let seed = 11;
  const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
  return Array.from({ length: TASKS }, (_, i) => {
    const after = new Set<number>();
    for (let k = 0; k < 3 && i > 0; k++)
      after.add(Math.max(0, i - 1 - Math.floor(random() * Math.min(i, 60))));
    return {
      name: `Step ${i} of the rollout`,
      estimateHours: 2 + Math.floor(random() * 30),
      after: [...after],
    };
  });
}

t.test('5,000 tasks: PDF legible and complete, PNG drawn', async (t) => {
  const s = await startFlowServer(t);
  const flow = await newFlow(t, s, { name: 'Large rollout', dueDate: '2031-12-31', tasks: plan() });
  const critical: string[] = flow.tasks
    .filter((task: { criticalPath: boolean }) => task.criticalPath)
    .map((task: { name: string }) => task.name);
  t.ok(critical.length > 10, `${critical.length} critical tasks`);

  const res = await fetch(`${s.url}/v1/flows/${flow.id}/exports`, {
    method: 'POST',
    headers: { authorization: `Bearer ${s.adminKey}` },
  });
  t.equal(res.status, 200);
  const pdf = await decodePdf(Buffer.from(await res.arrayBuffer()));
  t.ok(pdf.pages > 100, `${pdf.pages} pages: the diagram is paged, not shrunk`);
  t.ok(pdf.minFontSize >= 6, `smallest of ${pdf.items} texts is ${pdf.minFontSize.toFixed(2)} pt`);
  t.match(pdf.text, 'Large rollout');
  t.match(pdf.text, '2031-12-31');
  t.match(
    pdf.pageTexts[0],
    /Page map[\s\S]*p\. 2[\s\S]*p\. 3/,
    'page one maps the parts to their pages',
  );
  t.match(
    pdf.pageTexts[1],
    /part 1 of \d+ · continues (right|below) on page \d+/,
    'the first part names where it continues',
  );
  t.match(pdf.pageTexts[1], /p\. \d+ →|↓ p\. \d+/, 'and marks the cut with the next page');
  const missing = critical.filter((name) => !pdf.text.includes(name));
  t.strictSame(missing, [], 'every critical task is named');

  const png = await fetch(`${s.url}/v1/flows/${flow.id}/exports`, {
    method: 'POST',
    headers: { authorization: `Bearer ${s.adminKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ format: 'png' }),
  });
  t.equal(png.status, 200);
  const image = decodePng(Buffer.from(await png.arrayBuffer()));
  t.ok(
    image.width <= 16_000 && image.height <= 16_000 && image.colours > 10,
    `PNG ${image.width}×${image.height}`,
  );
});

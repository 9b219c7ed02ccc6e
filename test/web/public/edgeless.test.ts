/**
 * Flows without a single dependency (one task, a checklist, none at all) through every
 * public address and both exports (issue 29, item 1): Graphviz leaves `edges` out of its
 * JSON when a graph has none, which every drawing of such a flow used to fail on with 502.
 * The public JSON document needs no drawing at all: it answers while every render fails.
 */
import t from 'tap';
import { newFlow, ok, startFlowServer } from '../../helpers/flows.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { decodePdf, decodePng, parseXml } from '../../services/exports/decode.ts';
import { pathOf, publicPaths } from './helpers.ts';
import type { FlowSummary, PublicFlow, Refusal } from '../../helpers/wire.ts';

async function exportFile(
  s: TestServer,
  flowId: string,
  format: 'pdf' | 'png',
): Promise<{ status: number; bytes: Buffer }> {
  const res = await fetch(`${s.url}/v1/flows/${flowId}/exports`, {
    method: 'POST',
    headers: { authorization: `Bearer ${s.adminKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ format }),
  });
  return { status: res.status, bytes: Buffer.from(await res.arrayBuffer()) };
}

const FLOWS = {
  'one task': [{ name: 'Only task', estimateHours: 2 }],
  'a checklist': [
    { name: 'Buy paint', estimateHours: 1 },
    { name: 'Book the hall' },
    { name: 'Print posters', estimateHours: 3 },
  ],
  'no tasks': [],
};

t.test(
  'a flow with no dependencies shows on every public address and exports as PNG and PDF',
  async (t) => {
    const s = await startFlowServer(t);
    for (const [label, tasks] of Object.entries(FLOWS)) {
      const flow = await newFlow(t, s, { name: `Flow with ${label}`, tasks });
      const path = pathOf(
        (await ok<FlowSummary>(t, s, 'POST', `/v1/flows/${flow.id}/publish`)).publicUrl,
      );
      const [page, json, svg, embed] = publicPaths(path, null);
      for (const url of [page!, embed!]) {
        const res = await s.api('GET', url);
        t.equal(
          res.status,
          200,
          `${label}: ${url.includes('/embed/') ? 'embed' : 'page'} answers 200`,
        );
        t.match(res.text, /<svg /, 'with its diagram');
        for (const task of tasks) t.ok(res.text.includes(task.name), `naming ${task.name}`);
      }
      const doc = await s.api<PublicFlow>('GET', json!);
      t.equal(doc.status, 200, `${label}: JSON answers 200`);
      t.same(
        doc.body.tasks.map((task: { name: string; dependsOn: string[] }) => [
          task.name,
          task.dependsOn,
        ]),
        tasks.map((task) => [task.name, []]),
      );
      const image = await s.api('GET', svg!);
      t.equal(image.status, 200, `${label}: SVG answers 200`);
      const texts = parseXml(image.text).map((x) => x.text);
      for (const task of tasks)
        t.ok(texts.includes(task.name), `the SVG parses as XML and shows ${task.name}`);

      const png = await exportFile(s, flow.id, 'png');
      t.equal(png.status, 200, `${label}: PNG export 200`);
      const pixels = decodePng(png.bytes);
      t.ok(
        pixels.width >= 600 && pixels.colours > 4,
        `the PNG decodes (${pixels.width}×${pixels.height}, ${pixels.colours} colours)`,
      );
      const pdf = await exportFile(s, flow.id, 'pdf');
      t.equal(pdf.status, 200, `${label}: PDF export 200`);
      const text = (await decodePdf(pdf.bytes)).text;
      t.match(text, `Flow with ${label}`, 'the PDF parses and has its title');
      for (const task of tasks) t.match(text, task.name, `and ${task.name}`);
    }
  },
);

t.test('the public JSON document is not drawn: it answers while every render fails', async (t) => {
  const s = await startTestServer(
    t,
    { rateLimitPerMinute: 1_000_000, rateLimitBurst: 1_000_000 },
    {},
    { failRenders: true },
  );
  const flow = await newFlow(t, s, {
    name: 'Drawn never',
    tasks: [{ name: 'First' }, { name: 'Second', after: [0] }],
  });
  const path = pathOf(
    (await ok<FlowSummary>(t, s, 'POST', `/v1/flows/${flow.id}/publish`)).publicUrl,
  );
  const [, json, svg] = publicPaths(path, null);
  const completed = s.app.services.render.stats().completed;
  const doc = await s.api<PublicFlow>('GET', json!);
  t.equal(doc.status, 200, 'the JSON answers');
  t.same(
    doc.body.tasks.map((task: { name: string }) => task.name),
    ['First', 'Second'],
  );
  t.equal(
    (await s.api<Refusal>('GET', svg!)).body?.error?.code,
    'RENDER_FAILED',
    'while the diagram fails to render (the hook works)',
  );
  const again = await s.api('GET', json!);
  t.equal(again.status, 200, 'and the JSON still answers after a failed drawing');
  t.equal(s.app.services.render.stats().completed, completed, 'no render completed for the JSON');
});

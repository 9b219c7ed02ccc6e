/**
 * POST /v1/flows/{id}/exports through HTTP: the PNG and the PDF decoded as a reader's
 * software would, Content-Disposition, refusals, and RENDER_FAILED through the test hook.
 */
import t from 'tap';
import { threadId } from 'node:worker_threads';
import { createKey, createWorkspace } from '../../../src/services/auth/provision.ts';
import { member, newFlow, ok, startFlowServer } from '../../helpers/flows.ts';
import { assertError, startTestServer, type TestServer } from '../../helpers/server.ts';
import { decodePdf, decodePng, pdffonts } from './decode.ts';
import { rawRequest } from '../../helpers/raw.ts';
import type { Schedule } from '../../helpers/wire.ts';

interface FileResponse {
  status: number;
  headers: Headers;
  bytes: Buffer;
  body: unknown;
}

async function exportFile(
  server: TestServer,
  flowId: string,
  body?: unknown,
  token = server.adminKey,
): Promise<FileResponse> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${server.url}/v1/flows/${flowId}/exports`, {
    method: 'POST',
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const bytes = Buffer.from(await res.arrayBuffer());
  let parsed: unknown;
  try {
    parsed = JSON.parse(bytes.toString('utf8'));
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, bytes, body: parsed };
}

let s: TestServer;
t.before(async () => {
  s = await startFlowServer(t);
});

const asApi = (r: FileResponse) => ({
  status: r.status,
  headers: r.headers,
  body: r.body,
  text: r.bytes.toString('utf8'),
});

const PLAN = {
  name: 'Website relaunch',
  dueDate: '2030-06-28',
  tasks: [
    { name: 'Brief', estimateHours: 8 },
    { name: 'Wireframes', after: [0], estimateHours: 24 },
    { name: 'Copy', after: [0] },
    { name: 'Build pages', after: [1, 2], estimateHours: 40 },
    { name: 'Launch', after: [3], estimateHours: 4 },
    { name: 'Press kit', estimateHours: 6 },
  ],
};

t.test('PDF by default: the delivery document, decoded', async (t) => {
  const ann = await member(s, 'Ann Planner');
  const flow = await newFlow(t, s, {
    ...PLAN,
    tasks: PLAN.tasks.map((task, i) => (i === 1 ? { ...task, assigneeId: ann } : task)),
  });
  const schedule = await ok<Schedule>(t, s, 'GET', `/v1/flows/${flow.id}/schedule`);
  const res = await exportFile(s, flow.id);
  t.equal(res.status, 200);
  t.equal(res.headers.get('content-type'), 'application/pdf');
  t.equal(res.headers.get('content-disposition'), 'attachment; filename="website-relaunch.pdf"');
  t.equal(res.bytes.subarray(0, 5).toString('latin1'), '%PDF-');
  t.not(s.app.services.render.lastThreadId, 0, 'a render ran');
  t.not(s.app.services.render.lastThreadId, threadId, 'in a worker thread, not on the event loop');

  const pdf = await decodePdf(res.bytes);
  t.equal(pdf.pages, 3, 'page one (title block and diagram), the plan and the schedule');
  t.match(pdf.text, 'Website relaunch');
  t.match(pdf.text, '2030-06-28', 'due date');
  t.match(pdf.text, schedule.projectedFinish, 'projected finish');
  t.match(pdf.text, 'On track');
  const critical = flow.tasks
    .filter((task: { criticalPath: boolean }) => task.criticalPath)
    .map((task: { name: string }) => task.name);
  t.strictSame(
    critical,
    ['Brief', 'Wireframes', 'Build pages', 'Launch'],
    'the flow has a critical path',
  );
  for (const name of critical) t.match(pdf.text, name, `critical task ${name}`);
  t.match(
    pdf.pageTexts[1],
    /Day 1: Brief \(to day \d+\)[\s\S]*Day \d+: Wireframes[\s\S]*Day \d+: Build pages[\s\S]*Day \d+: Launch/,
    'the critical path in schedule order',
  );
  t.match(pdf.text, 'Ann Planner', 'workload names the assignee');
  t.match(pdf.text, 'Copy', 'unestimated task listed');
  t.match(pdf.text, 'day 1', 'schedule in working days');
  t.ok(pdf.minFontSize >= 6, `smallest text ${pdf.minFontSize.toFixed(2)} pt`);

  const asked = await exportFile(s, flow.id, { format: 'pdf' });
  t.equal(asked.status, 200);
  t.equal(asked.headers.get('content-type'), 'application/pdf');
});

t.test(
  'the PDF reads as a printed plan: summary of every status, plurals, schedule by start day, metadata, embedded fonts',
  async (t) => {
    // Created out of start order: "Write up" first but it waits for the others.
    const flow = await newFlow(t, s, {
      name: 'Quarterly report',
      tasks: [
        { name: 'Write up', after: [2], estimateHours: 4 },
        { name: 'Collect numbers', estimateHours: 8 },
        { name: 'Check numbers', after: [1], estimateHours: 2 },
        { name: 'Book room', estimateHours: 1 },
        { name: 'Order cake', estimateHours: 1 },
      ],
    });
    const id = Object.fromEntries(
      flow.tasks.map((task: { id: string; name: string }) => [task.name, task.id]),
    );
    await ok(t, s, 'POST', `/v1/flows/${flow.id}/tasks/${id['Book room']}/start`);
    await ok(t, s, 'POST', `/v1/flows/${flow.id}/tasks/${id['Order cake']}/start`);
    await ok(t, s, 'POST', `/v1/flows/${flow.id}/tasks/${id['Order cake']}/complete`);
    const before = Date.now();
    const pdf = await decodePdf((await exportFile(s, flow.id)).bytes);
    const [one, plan, schedule] = pdf.pageTexts as [string, string, string];
    t.match(one, 'Quarterly report');
    t.match(
      one,
      /\b5 tasks: 1 done, 1 in progress, 1 ready, 2 blocked\b/,
      'page one counts every status, the task in progress too',
    );
    t.match(
      one.replace(/\s+/g, ' '),
      'Collect numbers',
      'and carries the diagram (a name may wrap in its box)',
    );
    t.match(plan, /\b5 tasks: 1 done, 1 in progress, 1 ready, 2 blocked\b/);
    t.match(plan, 'Collect numbers: holds up 2 tasks');
    t.match(plan, /Check numbers: holds up 1 task\b/, 'one task, not "1 tasks"');
    t.notMatch(pdf.text, /\b1 tasks\b/, 'no "1 tasks" anywhere');
    // Collect numbers and Book room both run on day 1: creation order between them.
    const order = ['Order cake', 'Collect numbers', 'Book room', 'Check numbers', 'Write up'].map(
      (name) => schedule.indexOf(name),
    );
    t.ok(
      order.every((at) => at >= 0),
      'every task scheduled',
    );
    t.strictSame(
      [...order].sort((a, b) => a - b),
      order,
      `schedule rows by start day, done first (${order.join(', ')})`,
    );
    t.equal(pdf.info.Title, 'Quarterly report');
    t.match(pdf.info.Subject, /Delivery plan/);
    const created = /^D:(\d{4})(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)/.exec(String(pdf.info.CreationDate));
    t.ok(created, `a creation date (${String(pdf.info.CreationDate)})`);
    const at = Date.UTC(
      +created![1]!,
      +created![2]! - 1,
      +created![3]!,
      +created![4]!,
      +created![5]!,
      +created![6]!,
    );
    t.ok(
      Math.abs(at - before) < 10 * 60_000,
      "the creation date is the export's (pdfkit writes it in UTC)",
    );
    t.ok(pdf.minFontSize >= 6, `smallest text ${pdf.minFontSize.toFixed(2)} pt`);
    const fonts = await pdffonts((await exportFile(s, flow.id)).bytes);
    if (fonts === null) t.comment('pdffonts (poppler-utils) is not installed: fonts not checked');
    else {
      t.ok(fonts.length >= 2, `fonts listed: ${fonts.map((f) => f.name).join(', ')}`);
      for (const f of fonts) t.ok(f.embedded, `${f.name} is embedded`);
    }
  },
);

t.test('PNG: the diagram, real pixels', async (t) => {
  const flow = await newFlow(t, s, PLAN);
  const res = await exportFile(s, flow.id, { format: 'png' });
  t.equal(res.status, 200);
  t.equal(res.headers.get('content-type'), 'image/png');
  t.equal(res.headers.get('content-disposition'), 'attachment; filename="website-relaunch.png"');
  const png = decodePng(res.bytes);
  t.ok(png.width >= 600 && png.height >= 200, `dimensions ${png.width}×${png.height}`);
  t.ok(png.colours > 10, `not blank: ${png.colours} colours`);
  t.ok(png.inked > 0.01, 'ink on the page');
  const again = await exportFile(s, flow.id, { format: 'png' });
  t.ok(
    again.bytes.equals(res.bytes),
    'the same flow renders to the same bytes (embedded fonts only)',
  );
});

t.test('names: non-ASCII file names and injected markup', async (t) => {
  const flow = await newFlow(t, s, {
    name: 'Café Über Москва "launch"',
    tasks: [
      { name: '<script>alert(1)</script>' },
      { name: '</svg>', after: [0] },
      { name: '"><img src=x onerror=alert(1)>', after: [1] },
    ],
  });
  const res = await exportFile(s, flow.id);
  t.equal(res.status, 200);
  t.equal(
    res.headers.get('content-disposition'),
    `attachment; filename="cafe-uber-launch.pdf"; filename*=UTF-8''Caf%C3%A9-%C3%9Cber-%D0%9C%D0%BE%D1%81%D0%BA%D0%B2%D0%B0-launch.pdf`,
  );
  const pdf = await decodePdf(res.bytes);
  t.match(
    pdf.text,
    'Café Über Москва "launch"',
    'the title keeps every character (DejaVu covers Latin, Greek, Cyrillic)',
  );
  for (const name of ['<script>alert(1)</script>', '</svg>', '"><img src=x onerror=alert(1)>'])
    t.match(pdf.text, name, `shown as text: ${name}`);
  const png = await exportFile(s, flow.id, { format: 'png' });
  t.equal(png.status, 200, 'markup in names does not break the SVG behind the PNG');
  t.ok(decodePng(png.bytes).colours > 10);

  const plain = await newFlow(t, s, { name: '東京' });
  t.equal(
    (await exportFile(s, plain.id)).headers.get('content-disposition'),
    `attachment; filename="flow.pdf"; filename*=UTF-8''%E6%9D%B1%E4%BA%AC.pdf`,
    'nothing ASCII left: flow.pdf',
  );

  // The file name is cut at 80 characters, never inside one: an emoji straddling the cut made
  // the export a 500 (found by the property sweep).
  const straddling = await newFlow(t, s, { name: `${'a'.repeat(79)}😀 more` });
  const cut = await exportFile(s, straddling.id, { format: 'png' });
  t.equal(cut.status, 200, 'an emoji at the cut');
  t.equal(
    cut.headers.get('content-disposition'),
    `attachment; filename="${'a'.repeat(79)}.png"; filename*=UTF-8''${'a'.repeat(79)}%F0%9F%98%80.png`,
  );
});

t.test(
  'a dense flow exports: 35 tasks, each waiting on every one before it (595 dependencies)',
  async (t) => {
    // Graphviz took this past the 60-s render limit (502); it now gets the layered layout.
    const tasks = Array.from({ length: 35 }, (_, i) => ({
      name: `Step ${i + 1}`,
      estimateHours: 2,
      after: Array.from({ length: i }, (_, j) => j),
    }));
    const flow = await newFlow(t, s, { name: 'Dense', tasks });
    for (const format of ['png', 'pdf'] as const) {
      const res = await exportFile(s, flow.id, { format });
      t.equal(res.status, 200, `${format} answered`);
      if (format === 'png') t.ok(decodePng(res.bytes).colours > 10, 'the PNG is drawn');
      else t.match((await decodePdf(res.bytes)).text, 'Step 35');
    }
  },
);

t.test('an empty flow and an archived flow export', async (t) => {
  const empty = await newFlow(t, s, { name: 'Empty', tasks: [] });
  const pdf = await decodePdf((await exportFile(s, empty.id)).bytes);
  t.match(pdf.text, 'This flow has no tasks yet.');
  const png = await exportFile(s, empty.id, { format: 'png' });
  t.equal(png.status, 200);
  t.ok(decodePng(png.bytes).width > 0);

  const archived = await newFlow(t, s, PLAN);
  await ok(t, s, 'DELETE', `/v1/flows/${archived.id}`, undefined, 204);
  const res = await exportFile(s, archived.id);
  t.equal(res.status, 200, 'archiving is not destruction');
  t.match((await decodePdf(res.bytes)).text, 'Website relaunch');
});

t.test('refusals', async (t) => {
  const flow = await newFlow(t, s, PLAN);
  assertError(t, asApi(await exportFile(s, flow.id, { format: 'gif' })), 400, 'VALIDATION_FAILED');
  assertError(
    t,
    asApi(await exportFile(s, flow.id, { format: 'pdf', pages: 3 })),
    400,
    'VALIDATION_FAILED',
    'unknown fields refused',
  );
  assertError(t, asApi(await exportFile(s, 'flw_nope')), 404, 'NOT_FOUND');

  const other = await createWorkspace(s.sql, { name: 'Other' });
  const otherKey = (
    await createKey(s.sql, {
      workspaceId: other.id,
      role: 'admin',
      scopes: ['flows:read', 'flows:write'],
    })
  ).key;
  assertError(
    t,
    asApi(await exportFile(s, flow.id, undefined, otherKey)),
    404,
    'NOT_FOUND',
    "another workspace's flow is 404",
  );

  const writeOnly = (
    await createKey(s.sql, { workspaceId: s.workspaceId, role: 'admin', scopes: ['flows:write'] })
  ).key;
  assertError(
    t,
    asApi(await exportFile(s, flow.id, undefined, writeOnly)),
    403,
    'INSUFFICIENT_SCOPE',
  );
  const viewer = (
    await createKey(s.sql, { workspaceId: s.workspaceId, role: 'viewer', scopes: ['flows:read'] })
  ).key;
  t.equal(
    (await exportFile(s, flow.id, { format: 'png' }, viewer)).status,
    200,
    'a viewer with flows:read may export',
  );
  t.equal((await exportFile(s, flow.id, undefined, 'fpk_wrong')).status, 401);
});

t.test('a render that fails is 502 RENDER_FAILED (test hook)', async (t) => {
  const failing = await startTestServer(
    t,
    { rateLimitPerMinute: 1_000_000, rateLimitBurst: 1_000_000 },
    {},
    { failRenders: true },
  );
  const flow = await newFlow(t, failing, PLAN);
  assertError(t, asApi(await exportFile(failing, flow.id)), 502, 'RENDER_FAILED');
  assertError(
    t,
    asApi(await exportFile(failing, flow.id, { format: 'png' })),
    502,
    'RENDER_FAILED',
  );
  t.equal(
    (await failing.api('GET', `/v1/flows/${flow.id}`, { token: failing.adminKey })).status,
    200,
    'the server carries on',
  );
  t.equal(
    (await exportFile(s, (await newFlow(t, s, PLAN)).id)).status,
    200,
    'a server started without the hook renders',
  );
});

t.test('an export slower than uWS idle timeout is still answered (test hook)', async (t) => {
  // uWS re-arms a ~10 s idle timer (4 s granularity) when a paused socket reads on: a render
  // past it was cut off when its body had come with the head, the client seeing the socket
  // close. Head and body go in one write here; 14 s is past the latest the timer fires.
  const slow = await startTestServer(t, {}, {}, { renderDelayMs: 14_000 });
  const flow = await newFlow(t, slow, PLAN);
  const body = JSON.stringify({ format: 'pdf' });
  const started = Date.now();
  const res = await rawRequest(
    Number(new URL(slow.url).port),
    `POST /v1/flows/${flow.id}/exports HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
      `Authorization: Bearer ${slow.adminKey}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    60_000,
  );
  t.equal(res.status, 200, `the PDF arrives (${res.ended})`);
  t.equal(res.headers['content-type'], 'application/pdf');
  t.ok(Date.now() - started >= 14_000, `after the render's wait (${Date.now() - started} ms)`);
  t.equal(
    (await slow.api('GET', `/v1/flows/${flow.id}`, { token: slow.adminKey })).status,
    200,
    'and the server serves on',
  );
});

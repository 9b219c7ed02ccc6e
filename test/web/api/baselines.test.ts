/**
 * Baselines (CONTRACT §5, issue 33 item 5): the schedule kept, listed newest first, and
 * compared with the schedule now in working days; kept through archive, restore and a restart;
 * its event in the feed, on a stream and at a webhook. Everything as a client sees it.
 */
import t, { type Test } from 'tap';
import { startApp } from '../../../src/compose.ts';
import { loadConfig } from '../../../src/platform/config.ts';
import { SCOPES } from '../../../src/services/auth/principal.ts';
import { createKey, createWorkspace } from '../../../src/services/auth/provision.ts';
import { createPerson, personToken } from '../../helpers/people.ts';
import {
  assertUnchanged,
  newFlow,
  ok,
  startFlowServer,
  taskIdOf,
  visible,
} from '../../helpers/flows.ts';
import { assertError, item, request, until, type TestServer } from '../../helpers/server.ts';
import type {
  Baseline,
  BaselineList,
  EventPage,
  Flow,
  JsonDocument,
  Refusal,
  Schedule,
  Variance,
} from '../../helpers/wire.ts';
import { sse } from '../../services/events/clients.ts';
import { startReceiver } from '../../services/webhooks/receiver.ts';

/** Design 2 days, then Build 5, then Release 1; Docs 1 day beside them all. */
const LAUNCH = {
  name: 'Launch',
  tasks: [
    { name: 'Design', estimateHours: 16 },
    { name: 'Build', estimateHours: 40, after: [0] },
    { name: 'Release', estimateHours: 8, after: [1] },
    { name: 'Docs', estimateHours: 8 },
  ],
};

const baselines = (flowId: string) => `/v1/flows/${flowId}/baselines`;

const variance = (t: Test, s: TestServer, flowId: string, baselineId: string, query = '') =>
  ok<Variance>(t, s, 'GET', `${baselines(flowId)}/${baselineId}/variance${query}`);

const DAY_MS = 86_400_000;
const dayAfter = (day: string, days: number) =>
  new Date(Date.parse(`${day}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);

/** Working days from one day to a later one, counted by walking the calendar (the test's own oracle). */
function weekdaysBetween(from: string | null, to: string | null): number {
  let n = 0;
  for (let day = from ?? ''; day < (to ?? '');) {
    day = dayAfter(day, 1);
    if (![0, 6].includes(new Date(`${day}T00:00:00Z`).getUTCDay())) n++;
  }
  return n;
}

const unmoved = (ids: string[]) =>
  ids.map((taskId) => ({ taskId, startSlipDays: 0, finishSlipDays: 0 }));

t.test(
  'kept as the schedule stands, listed newest first, and unmoved while nothing changes',
  async (t) => {
    const s = await startFlowServer(t);
    const flow = await newFlow(t, s, LAUNCH);
    const id = taskIdOf(flow);
    const schedule = await ok<Schedule>(t, s, 'GET', `/v1/flows/${flow.id}/schedule`);
    const first = await ok<Baseline>(t, s, 'POST', baselines(flow.id), { name: 'Signed off' }, 201);
    t.match(first.id, /^bsl_/);
    t.equal(first.name, 'Signed off');
    t.ok(Math.abs(Date.parse(first.createdAt) - Date.now()) < 60_000, 'createdAt is now');
    t.equal(first.projectedFinish, schedule.projectedFinish, "the schedule's projected finish");
    const second = await ok<Baseline>(t, s, 'POST', baselines(flow.id), { name: 'Again' }, 201);

    const list = await ok<BaselineList>(t, s, 'GET', baselines(flow.id));
    t.strictSame(list, { total: 2, items: [second, first] }, 'newest first, with the total');
    const page = await ok<BaselineList>(t, s, 'GET', `${baselines(flow.id)}?size=1&from=1`);
    t.strictSame(page, { total: 2, items: [first] }, 'paged with size and from');

    const flowAfter = await ok<Flow>(t, s, 'GET', `/v1/flows/${flow.id}`);
    t.equal(flowAfter.version, flow.version, 'a baseline is no change of the flow');

    t.strictSame(await variance(t, s, flow.id, first.id), {
      baseline: first,
      projectedFinish: schedule.projectedFinish,
      slipDays: 0,
      tasks: unmoved([id('Design'), id('Build'), id('Release'), id('Docs')]),
      added: [],
      removed: [],
    });
  },
);

t.test(
  'an estimate that grows slips the task and what waits on it; slipDays is the finish’s move',
  async (t) => {
    const s = await startFlowServer(t);
    const flow = await newFlow(t, s, LAUNCH);
    const id = taskIdOf(flow);
    const before = await ok<Schedule>(t, s, 'GET', `/v1/flows/${flow.id}/schedule`);
    const baseline = await ok<Baseline>(t, s, 'POST', baselines(flow.id), { name: 'Plan' }, 201);
    // Build takes 8 days instead of 5.
    await ok(t, s, 'PATCH', `/v1/flows/${flow.id}/tasks/${id('Build')}`, { estimateHours: 64 });
    const after = await ok<Schedule>(t, s, 'GET', `/v1/flows/${flow.id}/schedule`);

    const moved = await variance(t, s, flow.id, baseline.id);
    t.strictSame(moved, {
      baseline,
      projectedFinish: after.projectedFinish,
      slipDays: 3,
      tasks: [
        { taskId: id('Design'), startSlipDays: 0, finishSlipDays: 0 },
        { taskId: id('Build'), startSlipDays: 0, finishSlipDays: 3 },
        { taskId: id('Release'), startSlipDays: 3, finishSlipDays: 3 },
        { taskId: id('Docs'), startSlipDays: 0, finishSlipDays: 0 },
      ],
      added: [],
      removed: [],
    });
    t.equal(
      weekdaysBetween(before.projectedFinish, after.projectedFinish),
      moved.slipDays,
      'slipDays: the working days between the two projected finishes',
    );

    // Scheduled from a week later (the same weekday), everything lands five working days later still.
    const late = await variance(
      t,
      s,
      flow.id,
      baseline.id,
      `?startDate=${dayAfter(before.startDate, 7)}`,
    );
    t.equal(late.slipDays, 8);
    t.strictSame(
      late.tasks.map((x) => [x.startSlipDays, x.finishSlipDays]),
      [
        [5, 5],
        [5, 8],
        [8, 8],
        [5, 5],
      ],
    );
    const badStart = await s.api(
      'GET',
      `${baselines(flow.id)}/${baseline.id}/variance?startDate=soon`,
      {
        token: s.adminKey,
      },
    );
    assertError(t, badStart, 400, 'VALIDATION_FAILED');
  },
);

t.test('added and removed tasks; a done task has no dates, so its slips are null', async (t) => {
  const s = await startFlowServer(t);
  const flow = await newFlow(t, s, LAUNCH);
  const id = taskIdOf(flow);
  const F = `/v1/flows/${flow.id}`;
  const plan = await ok<Baseline>(t, s, 'POST', baselines(flow.id), { name: 'Plan' }, 201);
  await ok(t, s, 'POST', `${F}/tasks/${id('Design')}/start`);
  await ok(t, s, 'POST', `${F}/tasks/${id('Design')}/complete`);
  await ok(t, s, 'DELETE', `${F}/tasks/${id('Docs')}`, undefined, 204);
  const qa = await ok<{ id: string }>(
    t,
    s,
    'POST',
    `${F}/tasks`,
    { name: 'QA', estimateHours: 8, after: [id('Release')] },
    201,
  );
  // A sub-task has no dates of its own: never added or removed.
  const smoke = await ok<{ id: string }>(
    t,
    s,
    'POST',
    `${F}/tasks`,
    { name: 'Smoke test', parentId: qa.id },
    201,
  );

  // Design done: Build starts at once, two days early; QA lands a day before Release did.
  t.strictSame(await variance(t, s, flow.id, plan.id), {
    baseline: plan,
    projectedFinish: (await ok<Schedule>(t, s, 'GET', `${F}/schedule`)).projectedFinish,
    slipDays: -1,
    tasks: [
      { taskId: id('Design'), startSlipDays: null, finishSlipDays: null },
      { taskId: id('Build'), startSlipDays: -2, finishSlipDays: -2 },
      { taskId: id('Release'), startSlipDays: -2, finishSlipDays: -2 },
    ],
    added: [qa.id],
    removed: [id('Docs')],
  });

  // Done then and now: still null. Nothing open now or then: slipDays null.
  const later = await ok<Baseline>(t, s, 'POST', baselines(flow.id), { name: 'Later' }, 201);
  const same = await variance(t, s, flow.id, later.id);
  t.strictSame(same.tasks, [
    { taskId: id('Design'), startSlipDays: null, finishSlipDays: null },
    ...unmoved([id('Build'), id('Release'), qa.id]),
  ]);
  t.strictSame([same.added, same.removed, same.slipDays], [[], [], 0]);
  // The sub-task's completion completes QA.
  for (const task of [id('Build'), id('Release'), smoke.id]) {
    await ok(t, s, 'POST', `${F}/tasks/${task}/start`);
    await ok(t, s, 'POST', `${F}/tasks/${task}/complete`);
  }
  const finished = await variance(t, s, flow.id, later.id);
  t.equal(finished.projectedFinish, null, 'nothing left open');
  t.equal(finished.slipDays, null, 'no finish to compare');
  t.ok(
    finished.tasks.every((x) => x.startSlipDays === null && x.finishSlipDays === null),
    'every task done: no slips',
  );
  const empty = await ok<Baseline>(t, s, 'POST', baselines(flow.id), { name: 'Done' }, 201);
  t.equal(empty.projectedFinish, null, 'a baseline of a finished flow has no finish');
});

t.test('bad names are refused and change nothing', async (t) => {
  const s = await startFlowServer(t);
  const flow = await newFlow(t, s, LAUNCH);
  const before = await visible(s, [flow.id]);
  const cases: [string, unknown][] = [
    ['empty', { name: '' }],
    ['blank', { name: '   ' }],
    ['too long', { name: 'x'.repeat(201) }],
    ['a control character', { name: 'Plan\u0007' }],
    ['a line break', { name: 'Plan\nB' }],
    ['missing', {}],
    ['not a string', { name: 7 }],
    ['an unknown field', { name: 'Plan', startDate: '2030-01-07' }],
  ];
  for (const [what, body] of cases) {
    const res = await s.api<Refusal>('POST', baselines(flow.id), { token: s.adminKey, body });
    assertError(t, res, 400, 'VALIDATION_FAILED', what);
    t.ok(res.body.error.details.errors.length > 0, `${what}: each problem listed`);
  }
  const notJson = await s.api('POST', baselines(flow.id), {
    token: s.adminKey,
    raw: '{"name":',
    headers: { 'content-type': 'application/json' },
  });
  assertError(t, notJson, 400, 'VALIDATION_FAILED', 'not JSON');
  await assertUnchanged(t, s, before, 'refused baselines');
  t.strictSame(await ok(t, s, 'GET', baselines(flow.id)), { total: 0, items: [] });
  const okName = await ok<Baseline>(
    t,
    s,
    'POST',
    baselines(flow.id),
    { name: 'x'.repeat(200) },
    201,
  );
  t.equal(okName.name.length, 200, '200 characters are allowed');
});

t.test('a viewer reads baselines but cannot take one', async (t) => {
  const s = await startFlowServer(t);
  const flow = await newFlow(t, s, LAUNCH);
  const plan = await ok<Baseline>(t, s, 'POST', baselines(flow.id), { name: 'Plan' }, 201);
  const { key: viewer } = await createKey(s.sql, {
    workspaceId: s.workspaceId,
    role: 'viewer',
    scopes: [...SCOPES],
  });
  const before = await visible(s, [flow.id]);
  const refused = await s.api('POST', baselines(flow.id), {
    token: viewer,
    body: { name: 'Mine' },
  });
  assertError(t, refused, 403, 'FORBIDDEN');
  await assertUnchanged(t, s, before, "a viewer's attempt");
  t.strictSame(await ok(t, s, 'GET', baselines(flow.id), undefined, 200, viewer), {
    total: 1,
    items: [plan],
  });
  const read = await ok<Variance>(
    t,
    s,
    'GET',
    `${baselines(flow.id)}/${plan.id}/variance`,
    undefined,
    200,
    viewer,
  );
  t.equal(read.slipDays, 0);
});

t.test('a guest the flow is shared with reads its baselines, and takes none', async (t) => {
  const s = await startFlowServer(t);
  const flow = await newFlow(t, s, LAUNCH);
  const plan = await ok<Baseline>(t, s, 'POST', baselines(flow.id), { name: 'Plan' }, 201);
  const { id: home } = await createWorkspace(s.sql, { name: 'Guest home' });
  const { id: guestId } = await createPerson(s.sql, {
    email: 'gia@example.com',
    name: 'Gia Guest',
    password: 'long enough password',
    workspaceId: home,
    role: 'admin',
  });
  const guest = await personToken(s, guestId, home);
  await ok(
    t,
    s,
    'POST',
    `/v1/flows/${flow.id}/shares`,
    { email: 'gia@example.com', role: 'viewer' },
    201,
  );
  t.strictSame(await ok(t, s, 'GET', baselines(flow.id), undefined, 200, guest), {
    total: 1,
    items: [plan],
  });
  const read = await ok<Variance>(
    t,
    s,
    'GET',
    `${baselines(flow.id)}/${plan.id}/variance`,
    undefined,
    200,
    guest,
  );
  t.equal(read.baseline.id, plan.id);
  // Only the routes open to guests reach a shared flow; taking a baseline is not one.
  const refused = await s.api('POST', baselines(flow.id), { token: guest, body: { name: 'Mine' } });
  assertError(t, refused, 404, 'NOT_FOUND');
});

t.test(
  "another workspace's flow or baseline is 404; so is a baseline under another flow",
  async (t) => {
    const s = await startFlowServer(t);
    const flow = await newFlow(t, s, LAUNCH);
    const plan = await ok<Baseline>(t, s, 'POST', baselines(flow.id), { name: 'Plan' }, 201);
    const other = await newFlow(t, s, { name: 'Other', tasks: [{ name: 'X' }] });
    const workspace = await createWorkspace(s.sql, { name: 'Elsewhere' });
    const { key } = await createKey(s.sql, {
      workspaceId: workspace.id,
      role: 'admin',
      scopes: [...SCOPES],
    });
    const before = await visible(s, [flow.id, other.id]);
    const theirs = (method: string, path: string, body?: unknown) =>
      s.api(method, path, { token: key, body });
    assertError(
      t,
      await theirs('POST', baselines(flow.id), { name: 'Mine now' }),
      404,
      'NOT_FOUND',
    );
    assertError(t, await theirs('GET', baselines(flow.id)), 404, 'NOT_FOUND');
    assertError(
      t,
      await theirs('GET', `${baselines(flow.id)}/${plan.id}/variance`),
      404,
      'NOT_FOUND',
    );
    await assertUnchanged(t, s, before, "another workspace's attempts");
    const mine = (path: string) => s.api('GET', path, { token: s.adminKey });
    assertError(t, await mine(`${baselines(other.id)}/${plan.id}/variance`), 404, 'NOT_FOUND');
    assertError(t, await mine(`${baselines(flow.id)}/bsl_nothing/variance`), 404, 'NOT_FOUND');
  },
);

t.test('a baseline outlives archive, restore and a restart of the server', async (t) => {
  const s = await startFlowServer(t);
  const flow = await newFlow(t, s, LAUNCH);
  const F = `/v1/flows/${flow.id}`;
  const plan = await ok<Baseline>(t, s, 'POST', baselines(flow.id), { name: 'Plan' }, 201);
  const kept = await variance(t, s, flow.id, plan.id);
  await ok(t, s, 'DELETE', F, undefined, 204);
  t.strictSame(await ok(t, s, 'GET', baselines(flow.id)), { total: 1, items: [plan] }, 'archived');
  t.strictSame(await variance(t, s, flow.id, plan.id), kept, 'archived: the same variance');
  await ok(t, s, 'POST', `${F}/restore`);
  t.strictSame(await ok(t, s, 'GET', baselines(flow.id)), { total: 1, items: [plan] }, 'restored');

  await s.app.close();
  const next = await startApp(
    loadConfig({ LOG_LEVEL: 'silent', METRICS_PORT: '0' }, { port: 0, databaseUrl: s.databaseUrl }),
  );
  t.teardown(() => next.close());
  const read = <T>(path: string) => request<T>(next.url, 'GET', path, { token: s.adminKey });
  const list = await read<BaselineList>(baselines(flow.id));
  t.equal(list.status, 200);
  t.strictSame(list.body, { total: 1, items: [plan] }, 'after a restart');
  const again = await read<Variance>(`${baselines(flow.id)}/${plan.id}/variance`);
  t.equal(again.status, 200);
  t.strictSame(again.body, kept, 'after a restart: the same variance');
});

t.test('baseline.created reaches the feed, a stream and a webhook', async (t) => {
  const s = await startFlowServer(t, { webhookAllowPrivate: true });
  const receiver = await startReceiver(t);
  await ok(
    t,
    s,
    'POST',
    '/v1/webhooks',
    { url: `${receiver.url}/hook`, events: ['baseline.created'], description: 'baselines' },
    201,
  );
  const stream = await sse(t, s.url, s.adminKey, '?types=baseline.created');
  t.equal(stream.res.status, 200);
  const flow = await newFlow(t, s, LAUNCH);
  const cursor = (await ok<EventPage>(t, s, 'GET', '/v1/events')).next;
  const plan = await ok<Baseline>(t, s, 'POST', baselines(flow.id), { name: 'Plan' }, 201);
  const data = { flowId: flow.id, baselineId: plan.id, name: 'Plan' };

  // Filtered by type: flow.created may be given its position after the cursor was read.
  const feed = await ok<EventPage>(
    t,
    s,
    'GET',
    `/v1/events?after=${cursor}&types=baseline.created&wait=10`,
  );
  t.strictSame(
    feed.items.map((e) => [e.type, e.workspaceId, e.data]),
    [['baseline.created', s.workspaceId, data]],
    'the feed',
  );

  await until(
    async () => stream.events().length,
    (n) => n >= 1,
    30_000,
  );
  t.strictSame(
    stream.events().map((e) => [e.type, e.data]),
    [['baseline.created', data]],
    'the stream',
  );

  const hook = item(await receiver.waitFor(1));
  t.strictSame([hook.json.type, hook.json.data], ['baseline.created', data], 'the webhook');
});

t.test('the OpenAPI document names the baseline routes and the event', async (t) => {
  const s = await startFlowServer(t);
  const doc = await ok<JsonDocument>(t, s, 'GET', '/v1/openapi.json', undefined, 200, '');
  t.equal(doc.paths['/v1/flows/{flowId}/baselines']?.post?.operationId, 'createBaseline');
  t.equal(doc.paths['/v1/flows/{flowId}/baselines']?.get?.operationId, 'listBaselines');
  t.equal(
    doc.paths['/v1/flows/{flowId}/baselines/{baselineId}/variance']?.get?.operationId,
    'getBaselineVariance',
  );
  t.ok(doc.webhooks['baseline.created'], 'the webhook event');
});

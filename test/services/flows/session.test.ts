import t, { type Test } from 'tap';
import { startApp } from '../../../src/compose.ts';
import { loadConfig } from '../../../src/platform/config.ts';
import { assertError, request, until, type TestServer } from '../../helpers/server.ts';
import { idsByName, newFlow, ok, startFlowServer } from '../../helpers/flows.ts';
import { rng } from '../../engine/random-dag.ts';
import type { Completed, Flow, Refusal, Report, Schedule, Task } from '../../helpers/wire.ts';

t.test('a write by another process: the next write here sees it', async (t) => {
  const s = await startFlowServer(t);
  const b = await startApp(
    loadConfig(
      { LOG_LEVEL: 'silent' },
      {
        port: 0,
        databaseUrl: s.databaseUrl,
        rateLimitPerMinute: 1_000_000,
        rateLimitBurst: 1_000_000,
      },
    ),
  );
  let closed = false;
  const closeB = async () => {
    if (!closed) await b.close();
    closed = true;
  };
  t.teardown(closeB);
  t.equal(b.demo, null, 'the second start created no second Demo workspace');
  const [{ n }] = await s.sql<[{ n: number }]>`select count(*)::int as n from workspaces`;
  t.equal(n, 1);
  const viaB = <T = unknown>(method: string, path: string, body?: unknown) =>
    request<T>(b.url, method, path, { token: s.adminKey, body });

  const flow = await newFlow(t, s, {
    name: 'Shared',
    tasks: [{ name: 'a' }, { name: 'b', after: [0] }, { name: 'c' }],
  });
  const id = idsByName(flow);
  const task = (name: string) => `/v1/flows/${flow.id}/tasks/${id[name]}`;
  t.equal(
    (await s.api<Flow>('GET', `/v1/flows/${flow.id}`, { token: s.adminKey })).body.name,
    'Shared',
    'hot in app A',
  );
  const renamed = await viaB('PATCH', `/v1/flows/${flow.id}`, { name: 'Renamed by B' });
  t.equal(renamed.status, 200);
  const started = await viaB<Task>('POST', `${task('a')}/start`);
  t.equal(started.status, 200);
  t.equal(started.body.status, 'in_progress');

  // A's next command on the flow runs against B's state (version guard or NOTIFY).
  const stale = await s.api<Refusal>('POST', `${task('a')}/start`, { token: s.adminKey });
  assertError(t, stale, 409, 'INVALID_TRANSITION', 'A does not start what B already started');
  t.strictSame(stale.body.error.details, { status: 'in_progress' });
  const completed = await s.api<Completed>('POST', `${task('a')}/complete`, { token: s.adminKey });
  t.equal(completed.status, 200, 'A completes the task B started');
  t.strictSame(
    completed.body.unblocked.map((x) => x.id),
    [id.b],
  );
  const seen = await s.api<Flow>('GET', `/v1/flows/${flow.id}`, { token: s.adminKey });
  t.equal(seen.body.name, 'Renamed by B', "A shows B's rename");
  t.strictSame(
    seen.body.tasks.map(({ id, status }: Record<string, unknown>) => ({ id, status })),
    [
      { id: id.a, status: 'done' },
      { id: id.b, status: 'ready' },
      { id: id.c, status: 'ready' },
    ],
    "the flow's three tasks as A sees them",
  );
  t.equal(seen.headers.get('etag'), `"${flow.id}.v4"`, 'versions 2 and 3 by B, 4 by A');

  // And the other way round: B writes after A without losing A's write.
  const fromB = await viaB('POST', `${task('c')}/start`);
  t.equal(fromB.status, 200);
  const onA = await s.api('POST', `${task('b')}/start`, { token: s.adminKey });
  t.equal(onA.status, 200);
  const finalB = (await viaB<Completed>('POST', `${task('b')}/complete`)).body;
  t.match(finalB.task, { id: id.b, status: 'done' });
  // A learns of B's last write through NOTIFY, asynchronously: wait for it.
  const final = await until(
    () => s.api<Flow>('GET', `/v1/flows/${flow.id}`, { token: s.adminKey }),
    (r) => r.headers.get('etag') === `"${flow.id}.v7"`,
  );
  t.strictSame(
    final.body.tasks.map(({ status }: Record<string, unknown>) => status),
    ['done', 'done', 'in_progress'],
    "the flow's three tasks after B's last write",
  );
  t.equal(final.headers.get('etag'), `"${flow.id}.v7"`);
  const [row] = await s.sql<{ version: string }[]>`select version from flows where id = ${flow.id}`;
  t.equal(Number(row!.version), 7);
  await closeB();
});

/** The same random 300-task flow, by index: names, estimates and `after` indexes. */
function randomFlow(seed: number, n = 300) {
  const random = rng(seed);
  return Array.from({ length: n }, (_, i) => {
    const after = new Set<number>();
    if (i > 0)
      for (let k = Math.floor(random() * 4); k > 0; k--) after.add(Math.floor(random() * i));
    const estimate = random() < 0.2 ? undefined : Math.floor(random() * 40);
    return {
      name: `t${i}`,
      ...(estimate === undefined ? {} : { estimateHours: estimate }),
      ...(after.size ? { after: [...after] } : {}),
    };
  });
}

async function metric(s: TestServer, name: string): Promise<number | null> {
  const text = await s.metrics();
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.slice(name.length + 1)) : null;
}

/** The derived state of a flow, by task name (ids differ between servers). */
async function derived(t: Test, s: TestServer, flowId: string) {
  const flow = await ok<Flow>(t, s, 'GET', `/v1/flows/${flowId}`);
  const name = new Map<string, string>(flow.tasks.map((x) => [x.id, x.name]));
  const schedule = await ok<Schedule>(
    t,
    s,
    'GET',
    `/v1/flows/${flowId}/schedule?startDate=2025-03-03`,
  );
  const report = await ok<Report>(t, s, 'GET', `/v1/flows/${flowId}/report`);
  return {
    counts: [flow.taskCount, flow.doneCount, flow.readyCount],
    tasks: flow.tasks.map((x) => [
      x.name,
      x.status,
      x.criticalPath,
      x.blockedBy.map((b: string) => name.get(b)).sort(),
    ]),
    schedule: {
      ...schedule,
      flowId: undefined,
      entries: schedule.entries.map((e) => ({ ...e, taskId: name.get(e.taskId) })),
    },
    report: {
      ...report,
      flowId: undefined,
      unestimatedTasks: report.unestimatedTasks.map((x: string) => name.get(x)),
      orphanedTasks: report.orphanedTasks.map((x: string) => name.get(x)),
      topBlockers: report.topBlockers.map((b) => ({ ...b, taskId: name.get(b.taskId) })),
    },
  };
}

t.test('the worker pool derives the same state as the in-thread path', async (t) => {
  const pooled = await startFlowServer(t, { offloadTasks: 50, workers: 2 });
  const local = await startFlowServer(t);
  t.equal(await metric(pooled, 'flowplan_pool_utilization'), 0, 'the pool has run nothing yet');
  const tasks = randomFlow(42);
  const results = [];
  for (const s of [pooled, local]) {
    const flow = await newFlow(t, s, { name: 'Big', dueDate: '2025-06-30', tasks });
    const id = idsByName(flow);
    // The same progress on both: start and complete a few chains of ready work.
    for (let round = 0; round < 3; round++) {
      const current = await ok<Flow>(t, s, 'GET', `/v1/flows/${flow.id}`);
      const ready = current.tasks
        .filter((x) => x.status === 'ready')
        .map((x) => x.name)
        .sort()
        .slice(0, 8);
      for (const name of ready)
        await ok(t, s, 'POST', `/v1/flows/${flow.id}/tasks/${id[name]}/start`);
      for (const name of ready.slice(0, 6))
        await ok(t, s, 'POST', `/v1/flows/${flow.id}/tasks/${id[name]}/complete`);
    }
    results.push(await derived(t, s, flow.id));
  }
  const [p, l] = results;
  t.ok(
    p!.tasks.some((x) => x[1] === 'done') && p!.tasks.some((x) => x[1] === 'blocked'),
    'a mixed state',
  );
  t.ok(p!.report.topBlockers.length > 0);
  t.strictSame(p!.counts, l!.counts, 'same counts');
  t.strictSame(p!.tasks, l!.tasks, 'same status, critical path and blockers per task');
  t.strictSame(p!.schedule, l!.schedule, 'same schedule');
  t.strictSame(p!.report, l!.report, 'same report, topBlockers included');
  // The pool is created on its first run only: utilisation above 0 proves it ran recomputes.
  t.ok(
    (await metric(pooled, 'flowplan_pool_utilization'))! > 0,
    'the pooled server really used the pool',
  );
  t.equal(await metric(local, 'flowplan_pool_utilization'), 0, 'the default server never did');
  t.equal(await metric(pooled, 'flowplan_pool_in_flight'), 0, 'nothing left pending');
});

t.test(
  'a refusal is checked against the committed state: a commit whose announcement has not arrived yet counts',
  async (t) => {
    const s = await startFlowServer(t);
    const flow = await newFlow(t, s, {
      name: 'Late news',
      tasks: [{ name: 'a' }, { name: 'b', after: [0] }],
    });
    const id = idsByName(flow);
    const task = (name: string) => `/v1/flows/${flow.id}/tasks/${id[name]}`;
    // Another process completed a and committed, and its NOTIFY is still on the way: written here without one.
    await s.sql`update tasks set progress = 2 where id = ${id.a!}`;
    await s.sql`update flows set version = version + 1 where id = ${flow.id}`;
    const started = await s.api('POST', `${task('b')}/start`, { token: s.adminKey });
    t.equal(started.status, 200, 'b is not refused as blocked: the committed state has a done');
    t.strictSame(
      (await ok<Flow>(t, s, 'GET', `/v1/flows/${flow.id}`)).tasks.map(({ name, status }) => ({
        name,
        status,
      })),
      [
        { name: 'a', status: 'done' },
        { name: 'b', status: 'in_progress' },
      ],
      "the flow's two tasks, as committed",
    );
    // A refusal the committed state agrees with stays a refusal.
    assertError(
      t,
      await s.api('POST', `${task('a')}/start`, { token: s.adminKey }),
      409,
      'INVALID_TRANSITION',
    );
  },
);

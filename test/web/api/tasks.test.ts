import t from 'tap';
import { assertError, type TestServer } from '../../helpers/server.ts';
import {
  assertUnchanged,
  idsByName,
  newFlow,
  ok,
  startFlowServer,
  taskNamed,
  visible,
} from '../../helpers/flows.ts';
import type { Flow, Refusal, Task } from '../../helpers/wire.ts';

const sorted = (ids: string[]) => [...ids].sort();
const tag = async (s: TestServer, flowId: string) =>
  (await s.api('GET', `/v1/flows/${flowId}`, { token: s.adminKey })).headers.get('etag');

t.test('create a task with after/before: links in, replacing the direct edge', async (t) => {
  const s = await startFlowServer(t);
  const flow = await newFlow(t, s, {
    name: 'Chain',
    tasks: [{ name: 'A' }, { name: 'B', after: [0] }, { name: 'X' }, { name: 'C', after: [0, 2] }],
  });
  const id = idsByName(flow);
  const base = `/v1/flows/${flow.id}/tasks`;
  const res = await s.api<Task>('POST', base, {
    token: s.adminKey,
    body: { name: 'M', description: 'middle', estimateHours: 6, after: [id.A], before: [id.B] },
  });
  t.equal(res.status, 201);
  const m = res.body;
  t.match(m.id, /^tsk_/);
  t.match(m, {
    flowId: flow.id,
    parentId: null,
    name: 'M',
    description: 'middle',
    estimateHours: 6,
    status: 'blocked',
  });
  t.strictSame(
    {
      dependsOn: m.dependsOn,
      blockedBy: m.blockedBy,
      subtasks: m.subtasks,
      requiredDeliverables: m.requiredDeliverables,
    },
    { dependsOn: [id.A], blockedBy: [id.A], subtasks: [], requiredDeliverables: [] },
    'waits on A alone; no sub-tasks, no deliverables',
  );
  const after = (await s.api<Flow>('GET', `/v1/flows/${flow.id}`, { token: s.adminKey })).body;
  const b = taskNamed(after, 'B');
  t.strictSame(b.dependsOn, [m.id], 'B now waits on M only: the A → B edge was replaced');
  t.strictSame(b.blockedBy, [m.id]);
  t.equal(after.taskCount, 5);
  t.strictSame(
    after.tasks.find((x) => x.id === m.id),
    m,
    'the Task answered is the one in the Flow',
  );

  // C waits on A and X: inserting between A and C keeps C's other dependency.
  const n = await ok<Task>(t, s, 'POST', base, { name: 'N', after: [id.A], before: [id.C] }, 201);
  const c = await ok<Task>(t, s, 'GET', `${base}/${id.C}`);
  t.strictSame(sorted(c.dependsOn), sorted([id.X!, n.id]));
  // Only before: the new task becomes a dependency, no edge removed.
  const p = await ok<Task>(t, s, 'POST', base, { name: 'P', before: [id.X] }, 201);
  t.match(p, { status: 'ready' });
  t.strictSame(p.dependsOn, [], 'P waits on nothing');
  t.strictSame((await ok<Task>(t, s, 'GET', `${base}/${id.X}`)).dependsOn, [p.id]);
  // No links at all: a free ready task.
  const free = await ok<Task>(t, s, 'POST', base, { name: 'Free' }, 201);
  t.match(free, { status: 'ready' });
  t.strictSame(
    { dependsOn: free.dependsOn, blockedBy: free.blockedBy },
    { dependsOn: [], blockedBy: [] },
    'Free waits on nothing',
  );

  // A cycle through after/before: 400 CIRCULAR_DEPENDENCY, nothing written.
  const before = await visible(s, [flow.id]);
  const loop = await s.api<Refusal>('POST', base, {
    token: s.adminKey,
    body: { name: 'Loop', after: [id.B], before: [id.A] },
  });
  assertError(t, loop, 400, 'CIRCULAR_DEPENDENCY');
  t.ok(Array.isArray(loop.body.error.details.cycle));
  t.equal(loop.body.error.details.cycle[0], id.A);
  t.ok(loop.body.error.details.cycle.includes(id.B));
  t.match(
    loop.body.error.message,
    `"A" (${id.A}) → `,
    'the refusal names the tasks (issue 29, item 11)',
  );
  t.match(loop.body.error.message, `"B" (${id.B}) → "Loop" (tsk_`);
  t.strictSame(
    loop.body.error.details.tasks[0],
    { id: id.A, name: 'A' },
    'the first task named is A, the cycle starting there',
  );
  const unknown = await s.api<Refusal>('POST', base, {
    token: s.adminKey,
    body: { name: 'U', after: ['tsk_unknown'] },
  });
  assertError(t, unknown, 400, 'VALIDATION_FAILED');
  t.equal(unknown.body.error.details.errors[0].pointer, '/after/0');
  const unknownBefore = await s.api<Refusal>('POST', base, {
    token: s.adminKey,
    body: { name: 'U', after: [id.A], before: [id.B, 'tsk_unknown'] },
  });
  assertError(t, unknownBefore, 400, 'VALIDATION_FAILED');
  t.equal(unknownBefore.body.error.details.errors[0].pointer, '/before/1');
  assertError(
    t,
    await s.api('POST', '/v1/flows/flw_missing/tasks', { token: s.adminKey, body: { name: 'U' } }),
    404,
    'NOT_FOUND',
  );
  await assertUnchanged(t, s, before, 'refused task creations');
});

t.test('before naming started work: 409 DOWNSTREAM_STARTED naming it', async (t) => {
  const s = await startFlowServer(t);
  const flow = await newFlow(t, s, {
    name: 'Started',
    tasks: [{ name: 'A' }, { name: 'B', after: [0] }, { name: 'C' }],
  });
  const id = idsByName(flow);
  const base = `/v1/flows/${flow.id}/tasks`;
  await ok(t, s, 'POST', `${base}/${id.A}/start`);
  await ok(t, s, 'POST', `${base}/${id.A}/complete`);
  await ok(t, s, 'POST', `${base}/${id.B}/start`);
  await ok(t, s, 'POST', `${base}/${id.C}/start`);
  await ok(t, s, 'POST', `${base}/${id.C}/complete`);
  const before = await visible(s, [flow.id]);
  const res = await s.api<Refusal>('POST', base, {
    token: s.adminKey,
    body: { name: 'Late', after: [id.A], before: [id.B] },
  });
  assertError(t, res, 409, 'DOWNSTREAM_STARTED');
  t.strictSame(res.body.error.details, { tasks: [{ id: id.B, name: 'B', status: 'in_progress' }] });
  const both = await s.api<Refusal>('POST', base, {
    token: s.adminKey,
    body: { name: 'Late', before: [id.C, id.B] },
  });
  assertError(t, both, 409, 'DOWNSTREAM_STARTED');
  t.strictSame(both.body.error.details.tasks, [
    { id: id.C, name: 'C', status: 'done' },
    { id: id.B, name: 'B', status: 'in_progress' },
  ]);
  await assertUnchanged(t, s, before, 'inserts before started work');
});

t.test('get and patch a task; refused with TASK_STARTED once work started', async (t) => {
  const s = await startFlowServer(t);
  const flow = await newFlow(t, s, {
    name: 'Edit',
    tasks: [
      { name: 'A', estimateHours: 3, description: 'd' },
      { name: 'B', after: [0] },
    ],
  });
  const id = idsByName(flow);
  const base = `/v1/flows/${flow.id}/tasks`;
  const got = await s.api('GET', `${base}/${id.A}`, { token: s.adminKey });
  t.equal(got.status, 200);
  t.strictSame(got.body, flow.tasks[0]);
  t.ok(got.headers.get('etag'));
  assertError(
    t,
    await s.api('GET', `${base}/tsk_missing`, { token: s.adminKey }),
    404,
    'NOT_FOUND',
  );
  assertError(
    t,
    await s.api('PATCH', `${base}/tsk_missing`, { token: s.adminKey, body: { name: 'x' } }),
    404,
    'NOT_FOUND',
  );

  const v1 = await tag(s, flow.id);
  const patched = await ok(t, s, 'PATCH', `${base}/${id.A}`, {
    name: 'A2',
    description: 'new',
    estimateHours: 16,
  });
  t.match(patched, {
    id: id.A,
    name: 'A2',
    description: 'new',
    estimateHours: 16,
    status: 'ready',
  });
  t.not(await tag(s, flow.id), v1, 'a new version');
  const cleared = await ok(t, s, 'PATCH', `${base}/${id.A}`, {
    estimateHours: null,
    description: null,
  });
  t.match(cleared, { name: 'A2', description: null, estimateHours: null });
  const blocked = await ok<Task>(t, s, 'PATCH', `${base}/${id.B}`, { name: 'B2' });
  t.match(blocked, { name: 'B2', status: 'blocked' }, 'a blocked task can still be re-planned');
  t.strictSame(blocked.blockedBy, [id.A], 'blocked by A alone');
  for (const body of [
    { status: 'done' },
    {},
    { estimateHours: -1 },
    { name: '' },
    { dependsOn: [] },
  ]) {
    assertError(
      t,
      await s.api('PATCH', `${base}/${id.A}`, { token: s.adminKey, body }),
      400,
      'VALIDATION_FAILED',
      JSON.stringify(body),
    );
  }

  await ok(t, s, 'POST', `${base}/${id.A}/start`);
  let before = await visible(s, [flow.id]);
  const started = await s.api<Refusal>('PATCH', `${base}/${id.A}`, {
    token: s.adminKey,
    body: { name: 'too late' },
  });
  assertError(t, started, 409, 'TASK_STARTED');
  t.strictSame(started.body.error.details, { status: 'in_progress' });
  await assertUnchanged(t, s, before, 'patch of an in-progress task');
  await ok(t, s, 'POST', `${base}/${id.A}/complete`);
  before = await visible(s, [flow.id]);
  const done = await s.api<Refusal>('PATCH', `${base}/${id.A}`, {
    token: s.adminKey,
    body: { estimateHours: 1 },
  });
  assertError(t, done, 409, 'TASK_STARTED');
  t.strictSame(done.body.error.details, { status: 'done' });
  await assertUnchanged(t, s, before, 'patch of a done task');
});

t.test('delete a task: dependents now depend on its dependencies', async (t) => {
  const s = await startFlowServer(t);
  const flow = await newFlow(t, s, {
    name: 'Bridge',
    tasks: [
      { name: 'A' },
      { name: 'Z' },
      { name: 'B', after: [0, 1] },
      { name: 'C', after: [2] },
      { name: 'D', after: [2, 0] },
      { name: 'E' },
    ],
  });
  const id = idsByName(flow);
  const base = `/v1/flows/${flow.id}/tasks`;
  const del = await s.api('DELETE', `${base}/${id.B}`, { token: s.adminKey });
  t.equal(del.status, 204);
  t.equal(del.text, '');
  const after = (await s.api<Flow>('GET', `/v1/flows/${flow.id}`, { token: s.adminKey })).body;
  t.equal(after.taskCount, 5);
  t.notOk(after.tasks.some((x) => x.id === id.B));
  const byId = Object.fromEntries(after.tasks.map((x) => [x.id, x]));
  t.strictSame(sorted(byId[id.C!]?.dependsOn ?? []), sorted([id.A!, id.Z!]), 'C inherits A and Z');
  t.strictSame(
    sorted(byId[id.D!]?.dependsOn ?? []),
    sorted([id.A!, id.Z!]),
    'D keeps A once and gains Z',
  );
  t.strictSame(byId[id.E!]?.dependsOn, []);
  assertError(t, await s.api('GET', `${base}/${id.B}`, { token: s.adminKey }), 404, 'NOT_FOUND');
  const before = await visible(s, [flow.id]);
  assertError(t, await s.api('DELETE', `${base}/${id.B}`, { token: s.adminKey }), 404, 'NOT_FOUND');
  await assertUnchanged(t, s, before, 'delete of a deleted task');
  // Delete a root: its dependents lose it and inherit nothing.
  t.equal((await s.api('DELETE', `${base}/${id.A}`, { token: s.adminKey })).status, 204);
  t.strictSame((await ok<Task>(t, s, 'GET', `${base}/${id.C}`)).dependsOn, [id.Z]);
  const d = await ok<Task>(t, s, 'GET', `${base}/${id.D}`);
  t.match(d, { status: 'blocked' });
  t.strictSame(
    { dependsOn: d.dependsOn, blockedBy: d.blockedBy },
    { dependsOn: [id.Z], blockedBy: [id.Z] },
    'D waits on Z alone',
  );
});

t.test('add and remove dependencies', async (t) => {
  const s = await startFlowServer(t);
  const flow = await newFlow(t, s, {
    name: 'Deps',
    tasks: [
      { name: 'A' },
      { name: 'B', after: [0] },
      { name: 'C', after: [1] },
      { name: 'D' },
      { name: 'S' },
    ],
  });
  const id = idsByName(flow);
  const base = `/v1/flows/${flow.id}/tasks`;
  const added = await s.api<Task>('POST', `${base}/${id.D}/dependencies`, {
    token: s.adminKey,
    body: { taskId: id.A },
  });
  t.equal(added.status, 200);
  t.match(added.body, { id: id.D, status: 'blocked' });
  t.strictSame(
    { dependsOn: added.body.dependsOn, blockedBy: added.body.blockedBy },
    { dependsOn: [id.A], blockedBy: [id.A] },
    'D waits on A alone',
  );

  await ok(t, s, 'POST', `${base}/${id.S}/start`);
  const before = await visible(s, [flow.id]);
  const cycle = await s.api<Refusal>('POST', `${base}/${id.A}/dependencies`, {
    token: s.adminKey,
    body: { taskId: id.C },
  });
  assertError(t, cycle, 400, 'CIRCULAR_DEPENDENCY');
  t.strictSame(cycle.body.error.details, {
    cycle: [id.A, id.B, id.C],
    tasks: [
      { id: id.A, name: 'A' },
      { id: id.B, name: 'B' },
      { id: id.C, name: 'C' },
    ],
  });
  t.equal(
    cycle.body.error.message,
    `"C" (${id.C}) already waits on "A" (${id.A}): "A" (${id.A}) → "B" (${id.B}) → "C" (${id.C}) → "A" (${id.A}) (each waits on the one before it)`,
    'the refusal names the tasks of the cycle (issue 29, item 11)',
  );
  const self = await s.api<Refusal>('POST', `${base}/${id.A}/dependencies`, {
    token: s.adminKey,
    body: { taskId: id.A },
  });
  assertError(t, self, 400, 'VALIDATION_FAILED');
  t.equal(self.body.error.details.errors[0].pointer, '/taskId');
  assertError(
    t,
    await s.api('POST', `${base}/${id.C}/dependencies`, {
      token: s.adminKey,
      body: { taskId: id.B },
    }),
    400,
    'VALIDATION_FAILED',
    'duplicate',
  );
  const unknown = await s.api<Refusal>('POST', `${base}/${id.C}/dependencies`, {
    token: s.adminKey,
    body: { taskId: 'tsk_unknown' },
  });
  assertError(t, unknown, 400, 'VALIDATION_FAILED');
  t.equal(unknown.body.error.details.errors[0].pointer, '/taskId');
  const started = await s.api<Refusal>('POST', `${base}/${id.S}/dependencies`, {
    token: s.adminKey,
    body: { taskId: id.A },
  });
  assertError(t, started, 409, 'TASK_STARTED');
  t.strictSame(started.body.error.details, { status: 'in_progress' });
  assertError(
    t,
    await s.api('POST', `${base}/tsk_missing/dependencies`, {
      token: s.adminKey,
      body: { taskId: id.A },
    }),
    404,
    'NOT_FOUND',
  );
  assertError(
    t,
    await s.api('POST', `${base}/${id.C}/dependencies`, { token: s.adminKey, body: {} }),
    400,
    'VALIDATION_FAILED',
  );
  assertError(
    t,
    await s.api('DELETE', `${base}/${id.C}/dependencies/${id.A}`, { token: s.adminKey }),
    404,
    'NOT_FOUND',
    'no such edge',
  );
  assertError(
    t,
    await s.api('DELETE', `${base}/${id.C}/dependencies/tsk_unknown`, { token: s.adminKey }),
    404,
    'NOT_FOUND',
  );
  await assertUnchanged(t, s, before, 'refused dependency changes');

  const removed = await s.api<Task>('DELETE', `${base}/${id.C}/dependencies/${id.B}`, {
    token: s.adminKey,
  });
  t.equal(removed.status, 200);
  t.match(removed.body, { id: id.C, status: 'ready' });
  t.strictSame(
    { dependsOn: removed.body.dependsOn, blockedBy: removed.body.blockedBy },
    { dependsOn: [], blockedBy: [] },
    'C waits on nothing',
  );
  // Now that C no longer waits on B, A may wait on C.
  const a = await ok<Task>(t, s, 'POST', `${base}/${id.A}/dependencies`, { taskId: id.C });
  t.match(a, { status: 'blocked' });
  t.strictSame(a.dependsOn, [id.C], 'A waits on C alone');
});

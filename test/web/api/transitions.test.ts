import t from 'tap';
import { createWorkspace } from '../../../src/services/auth/provision.ts';
import { assertError, item } from '../../helpers/server.ts';
import {
  assertUnchanged,
  idsByName,
  member,
  newFlow,
  ok,
  startFlowServer,
  taskIdOf,
  visible,
} from '../../helpers/flows.ts';
import type { Completed, Flow, Refusal, Task } from '../../helpers/wire.ts';

t.test('start, complete, reopen with their refusals', async (t) => {
  const s = await startFlowServer(t);
  const flow = await newFlow(t, s, {
    name: 'Moves',
    tasks: [
      { name: 'A' },
      { name: 'B', after: [0] },
      { name: 'C', after: [1] },
      { name: 'D', after: [0] },
      { name: 'E' },
      { name: 'F', after: [0, 4] },
    ],
  });
  const id = idsByName(flow);
  const task = (name: string) => `/v1/flows/${flow.id}/tasks/${id[name]}`;
  let before = await visible(s, [flow.id]);
  const blocked = await s.api<Refusal>('POST', `${task('B')}/start`, { token: s.adminKey });
  assertError(t, blocked, 409, 'TASK_BLOCKED');
  t.strictSame(blocked.body.error.details, { blockedBy: [id.A] });
  const twice = await s.api<Refusal>('POST', `${task('F')}/start`, { token: s.adminKey });
  assertError(t, twice, 409, 'TASK_BLOCKED');
  t.strictSame([...twice.body.error.details.blockedBy].sort(), [id.A, id.E].sort());
  const notStarted = await s.api<Refusal>('POST', `${task('E')}/complete`, { token: s.adminKey });
  assertError(t, notStarted, 409, 'INVALID_TRANSITION');
  t.strictSame(notStarted.body.error.details, { status: 'ready' });
  const blockedComplete = await s.api<Refusal>('POST', `${task('B')}/complete`, {
    token: s.adminKey,
  });
  assertError(t, blockedComplete, 409, 'INVALID_TRANSITION');
  t.strictSame(blockedComplete.body.error.details, { status: 'blocked' });
  const reopenReady = await s.api<Refusal>('POST', `${task('E')}/reopen`, { token: s.adminKey });
  assertError(t, reopenReady, 409, 'INVALID_TRANSITION');
  t.strictSame(reopenReady.body.error.details, { status: 'ready' });
  assertError(
    t,
    await s.api('POST', `/v1/flows/${flow.id}/tasks/tsk_missing/start`, { token: s.adminKey }),
    404,
    'NOT_FOUND',
  );
  await assertUnchanged(t, s, before, 'refused transitions');

  const started = await ok<Task>(t, s, 'POST', `${task('A')}/start`);
  t.match(started, { id: id.A, status: 'in_progress' });
  t.strictSame(started.blockedBy, [], 'A is blocked by nothing');
  before = await visible(s, [flow.id]);
  const again = await s.api<Refusal>('POST', `${task('A')}/start`, { token: s.adminKey });
  assertError(t, again, 409, 'INVALID_TRANSITION');
  t.strictSame(again.body.error.details, { status: 'in_progress' });
  const reopenStarted = await s.api<Refusal>('POST', `${task('A')}/reopen`, { token: s.adminKey });
  assertError(t, reopenStarted, 409, 'INVALID_TRANSITION');
  t.strictSame(reopenStarted.body.error.details, { status: 'in_progress' });
  await assertUnchanged(t, s, before, 'start of a started task');

  const completed = await s.api<Completed>('POST', `${task('A')}/complete`, { token: s.adminKey });
  t.equal(completed.status, 200);
  t.strictSame(Object.keys(completed.body).sort(), ['task', 'unblocked']);
  t.match(completed.body.task, { id: id.A, status: 'done' });
  t.strictSame(
    completed.body.unblocked.map((x) => x.id),
    [id.B, id.D],
    'exactly what became ready (F still waits on E)',
  );
  for (const x of completed.body.unblocked) {
    t.match(x, { status: 'ready' });
    t.strictSame(x.blockedBy, [], 'an unblocked task is blocked by nothing');
  }
  const flowNow = (await s.api<Flow>('GET', `/v1/flows/${flow.id}`, { token: s.adminKey })).body;
  t.strictSame(
    completed.body.unblocked,
    flowNow.tasks.filter((x) => x.id === id.B || x.id === id.D),
    'unblocked are full Tasks',
  );
  t.match(
    flowNow.tasks.find((x) => x.id === id.F),
    { status: 'blocked' },
  );
  t.strictSame(
    flowNow.tasks.find((x) => x.id === id.F)?.blockedBy,
    [id.E],
    'blockedBy lists only unfinished dependencies',
  );
  const doneAgain = await s.api<Refusal>('POST', `${task('A')}/complete`, { token: s.adminKey });
  assertError(t, doneAgain, 409, 'INVALID_TRANSITION');
  t.strictSame(doneAgain.body.error.details, { status: 'done' });
  const startDone = await s.api<Refusal>('POST', `${task('A')}/start`, { token: s.adminKey });
  assertError(t, startDone, 409, 'INVALID_TRANSITION');
  t.strictSame(startDone.body.error.details, { status: 'done' });

  // Reopen: done → in_progress; ready dependents are blocked again.
  const reopened = await ok(t, s, 'POST', `${task('A')}/reopen`);
  t.match(reopened, { id: id.A, status: 'in_progress' });
  for (const name of ['B', 'D']) {
    const again = await ok<Task>(t, s, 'GET', task(name));
    t.match(again, { status: 'blocked' }, `${name} blocked again`);
    t.strictSame(again.blockedBy, [id.A], `${name} blocked by A alone`);
  }
  const recompleted = await ok<Completed>(t, s, 'POST', `${task('A')}/complete`);
  t.strictSame(
    recompleted.unblocked.map((x) => x.id),
    [id.B, id.D],
  );

  // Downstream started (directly and transitively): reopen refused, naming them.
  await ok(t, s, 'POST', `${task('B')}/start`);
  let refused = await s.api<Refusal>('POST', `${task('A')}/reopen`, { token: s.adminKey });
  assertError(t, refused, 409, 'DOWNSTREAM_STARTED');
  t.strictSame(refused.body.error.details, {
    tasks: [{ id: id.B, name: 'B', status: 'in_progress' }],
  });
  const bDone = await ok<Completed>(t, s, 'POST', `${task('B')}/complete`);
  t.strictSame(
    bDone.unblocked.map((x) => x.id),
    [id.C],
  );
  await ok(t, s, 'POST', `${task('C')}/start`);
  before = await visible(s, [flow.id]);
  refused = await s.api('POST', `${task('A')}/reopen`, { token: s.adminKey });
  assertError(t, refused, 409, 'DOWNSTREAM_STARTED');
  t.strictSame(refused.body.error.details, {
    tasks: [
      { id: id.B, name: 'B', status: 'done' },
      { id: id.C, name: 'C', status: 'in_progress' },
    ],
  });
  await assertUnchanged(t, s, before, 'refused reopen');
  // C waits on B and has started: B cannot be reopened either.
  assertError(
    t,
    await s.api('POST', `${task('B')}/reopen`, { token: s.adminKey }),
    409,
    'DOWNSTREAM_STARTED',
  );
  await ok(t, s, 'POST', `${task('C')}/complete`);
  t.match(
    await ok(t, s, 'POST', `${task('C')}/reopen`),
    { status: 'in_progress' },
    'C reopens: nothing waits on it',
  );
});

t.test('assign: a member id, null unassigns, a non-member is refused', async (t) => {
  const s = await startFlowServer(t);
  const ann = await member(s, 'Ann');
  const other = await createWorkspace(s.sql, { name: 'Elsewhere' });
  const stranger = await member(s, 'Stranger', other.id);
  const flow = await newFlow(t, s, { name: 'Assign', tasks: [{ name: 'A' }] });
  const path = `/v1/flows/${flow.id}/tasks/${item(flow.tasks).id}/assign`;
  t.match(await ok(t, s, 'POST', path, { assigneeId: ann }), { assigneeId: ann, status: 'ready' });
  t.equal(
    (await ok<Task>(t, s, 'GET', `/v1/flows/${flow.id}/tasks/${item(flow.tasks).id}`)).assigneeId,
    ann,
  );
  const before = await visible(s, [flow.id]);
  for (const assigneeId of [stranger, 'usr_doesnotexist', 'bob', 42]) {
    const res = await s.api<Refusal>('POST', path, { token: s.adminKey, body: { assigneeId } });
    assertError(t, res, 400, 'VALIDATION_FAILED', String(assigneeId));
    t.equal(res.body.error.details.errors[0].pointer, '/assigneeId');
  }
  assertError(
    t,
    await s.api('POST', path, { token: s.adminKey, body: {} }),
    400,
    'VALIDATION_FAILED',
  );
  await assertUnchanged(t, s, before, 'refused assignments');
  t.match(await ok(t, s, 'POST', path, { assigneeId: null }), { assigneeId: null });
  t.equal(
    (await ok<Task>(t, s, 'GET', `/v1/flows/${flow.id}/tasks/${item(flow.tasks).id}`)).assigneeId,
    null,
  );
});

t.test(
  'two concurrent completes of one task: one 200, one 409; the flow stays consistent',
  async (t) => {
    const s = await startFlowServer(t);
    const flow = await newFlow(t, s, {
      name: 'Race',
      tasks: [{ name: 'X' }, { name: 'Y', after: [0] }],
    });
    const [x, y] = flow.tasks.map((task) => task.id);
    await ok(t, s, 'POST', `/v1/flows/${flow.id}/tasks/${x}/start`);
    const tagBefore = (
      await s.api('GET', `/v1/flows/${flow.id}`, { token: s.adminKey })
    ).headers.get('etag');
    t.equal(tagBefore, `"${flow.id}.v2"`);
    const results = await Promise.all(
      [1, 2].map(() =>
        // One answers the completion, the other the refusal: the test reads each as what it got.
        s.api<Completed & Refusal>('POST', `/v1/flows/${flow.id}/tasks/${x}/complete`, {
          token: s.adminKey,
        }),
      ),
    );
    t.strictSame(results.map((r) => r.status).sort(), [200, 409]);
    const winner = results.find((r) => r.status === 200)!;
    const loser = results.find((r) => r.status === 409)!;
    assertError(t, loser, 409, 'INVALID_TRANSITION');
    t.strictSame(loser.body.error.details, { status: 'done' });
    t.strictSame(
      winner.body.unblocked.map((u) => u.id),
      [y],
    );
    const after = await s.api<Flow>('GET', `/v1/flows/${flow.id}`, { token: s.adminKey });
    t.equal(after.headers.get('etag'), `"${flow.id}.v3"`, 'exactly one new version');
    t.hasStrict(after.body, { doneCount: 1, readyCount: 1 });
    t.strictSame(
      after.body.tasks.map(({ id, status }: Record<string, unknown>) => ({ id, status })),
      [
        { id: x, status: 'done' },
        { id: y, status: 'ready' },
      ],
      "the flow's two tasks: one completion, not two",
    );
    const [events] = await s.sql<
      { n: number }[]
    >`select count(*)::int as n from outbox where flow_id = ${flow.id} and type = 'task.completed'`;
    t.equal(events!.n, 1, 'one completion recorded');
  },
);

t.test('20 concurrent starts on 20 ready tasks all succeed, 20 versions', async (t) => {
  const s = await startFlowServer(t);
  const flow = await newFlow(t, s, {
    name: 'Fan',
    tasks: Array.from({ length: 20 }, (_, i) => ({ name: `T${i}` })),
  });
  const initial = (await s.api('GET', `/v1/flows/${flow.id}`, { token: s.adminKey })).headers.get(
    'etag',
  );
  t.equal(initial, `"${flow.id}.v1"`);
  const results = await Promise.all(
    flow.tasks.map((task) =>
      s.api<Task>('POST', `/v1/flows/${flow.id}/tasks/${task.id}/start`, { token: s.adminKey }),
    ),
  );
  t.strictSame(
    results.map((r) => r.status),
    Array(20).fill(200),
  );
  t.strictSame(
    results.map((r) => r.body.status),
    Array(20).fill('in_progress'),
  );
  const after = await s.api<Flow>('GET', `/v1/flows/${flow.id}`, { token: s.adminKey });
  t.equal(after.headers.get('etag'), `"${flow.id}.v21"`, 'initial version + 20');
  t.ok(after.body.tasks.every((task) => task.status === 'in_progress'));
  t.hasStrict(after.body, { taskCount: 20, readyCount: 0, doneCount: 0 });
  const [row] = await s.sql<{ version: string }[]>`select version from flows where id = ${flow.id}`;
  t.equal(Number(row!.version), 21, 'stored version agrees');
});

t.test('the hot sessions gauge counts the tasks of a flow transitions moved on', async (t) => {
  const s = await startFlowServer(t);
  const flow = await newFlow(t, s, {
    name: 'Gauge',
    tasks: [{ name: 'A' }, { name: 'B', after: [0] }, { name: 'C', after: [1] }],
  });
  const a = taskIdOf(flow)('A');
  await ok(t, s, 'POST', `/v1/flows/${flow.id}/tasks/${a}/start`);
  await ok(t, s, 'POST', `/v1/flows/${flow.id}/tasks/${a}/complete`);
  // The session's state is now the first version's list with records layered over it.
  const text = await s.metrics();
  t.match(text, /^flowplan_flow_sessions 1$/m);
  t.match(text, /^flowplan_flow_session_tasks 3$/m, 'its three tasks, read by size');
});

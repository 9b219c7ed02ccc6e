import t from 'tap';
import { assertError, item } from '../../helpers/server.ts';
import {
  assertUnchanged,
  idsByName,
  newFlow,
  ok,
  startFlowServer,
  taskNamed,
  visible,
} from '../../helpers/flows.ts';
import type { Completed, Flow, Refusal, Report, Schedule, Task } from '../../helpers/wire.ts';

t.test('sub-tasks: creation, status through the objective, completion through them', async (t) => {
  const s = await startFlowServer(t);
  const flow = await newFlow(t, s, {
    name: 'Objectives',
    tasks: [{ name: 'A' }, { name: 'O', after: [0], estimateHours: 40 }, { name: 'Z', after: [1] }],
  });
  const id = idsByName(flow);
  const base = `/v1/flows/${flow.id}/tasks`;
  const res = await s.api<Task>('POST', base, {
    token: s.adminKey,
    body: { name: 'S1', parentId: id.O, estimateHours: 4 },
  });
  t.equal(res.status, 201);
  const s1 = res.body;
  t.match(s1, { parentId: id.O, name: 'S1', status: 'blocked', estimateHours: 4, flowId: flow.id });
  t.strictSame(s1.dependsOn, [], 'S1 waits on nothing');
  const s2 = await ok<Task>(t, s, 'POST', base, { name: 'S2', parentId: id.O }, 201);
  const current = (await s.api<Flow>('GET', `/v1/flows/${flow.id}`, { token: s.adminKey })).body;
  t.equal(current.taskCount, 5, 'Flow.tasks lists sub-tasks too');
  t.match(
    current.tasks.find((x) => x.id === s2.id),
    { parentId: id.O, status: 'blocked' },
  );
  const objective = taskNamed(current, 'O');
  t.strictSame(objective.subtasks, [
    { id: s1.id, name: 'S1', done: false, assigneeId: null, estimateHours: 4, estimateRange: null },
    {
      id: s2.id,
      name: 'S2',
      done: false,
      assigneeId: null,
      estimateHours: null,
      estimateRange: null,
    },
  ]);
  t.equal(objective.status, 'blocked');

  const before = await visible(s, [flow.id]);
  const nested = await s.api<Refusal>('POST', base, {
    token: s.adminKey,
    body: { name: 'deep', parentId: s1.id },
  });
  assertError(t, nested, 400, 'VALIDATION_FAILED');
  t.equal(nested.body.error.details.errors[0].pointer, '/parentId');
  const withAfter = await s.api<Refusal>('POST', base, {
    token: s.adminKey,
    body: { name: 'x', parentId: id.O, after: [id.A] },
  });
  assertError(t, withAfter, 400, 'VALIDATION_FAILED');
  t.equal(withAfter.body.error.details.errors[0].pointer, '/after');
  const withBefore = await s.api<Refusal>('POST', base, {
    token: s.adminKey,
    body: { name: 'x', parentId: id.O, before: [id.Z] },
  });
  assertError(t, withBefore, 400, 'VALIDATION_FAILED');
  t.equal(withBefore.body.error.details.errors[0].pointer, '/before');
  const unknownParent = await s.api<Refusal>('POST', base, {
    token: s.adminKey,
    body: { name: 'x', parentId: 'tsk_nope' },
  });
  assertError(t, unknownParent, 400, 'VALIDATION_FAILED');
  t.equal(unknownParent.body.error.details.errors[0].pointer, '/parentId');
  assertError(
    t,
    await s.api('POST', `${base}/${s1.id}/dependencies`, {
      token: s.adminKey,
      body: { taskId: id.A },
    }),
    400,
    'VALIDATION_FAILED',
    'a sub-task carries no dependencies',
  );
  assertError(
    t,
    await s.api('POST', `${base}/${id.Z}/dependencies`, {
      token: s.adminKey,
      body: { taskId: s1.id },
    }),
    400,
    'VALIDATION_FAILED',
    'nothing depends on a sub-task',
  );
  assertError(
    t,
    await s.api('POST', base, { token: s.adminKey, body: { name: 'x', after: [s1.id] } }),
    400,
    'VALIDATION_FAILED',
    'after naming a sub-task',
  );
  const blocked = await s.api<Refusal>('POST', `${base}/${s1.id}/start`, { token: s.adminKey });
  assertError(t, blocked, 409, 'TASK_BLOCKED');
  t.strictSame(
    blocked.body.error.details,
    { blockedBy: [id.A] },
    'blocked by what holds its objective',
  );
  await assertUnchanged(t, s, before, 'refused sub-task changes');

  await ok(t, s, 'POST', `${base}/${id.A}/start`);
  const aDone = await ok<Completed>(t, s, 'POST', `${base}/${id.A}/complete`);
  t.strictSame(
    aDone.unblocked.map((x) => x.id),
    [id.O, s1.id, s2.id],
    'the objective and its sub-tasks became ready',
  );

  const started = await ok(t, s, 'POST', `${base}/${s1.id}/start`);
  t.match(started, { id: s1.id, status: 'in_progress' });
  t.match(
    await ok(t, s, 'GET', `${base}/${id.O}`),
    { status: 'in_progress' },
    'starting a sub-task starts its objective',
  );
  t.match(await ok(t, s, 'GET', `${base}/${s2.id}`), { status: 'ready' });

  let snapshot = await visible(s, [flow.id]);
  const early = await s.api<Refusal>('POST', `${base}/${id.O}/complete`, { token: s.adminKey });
  assertError(t, early, 409, 'SUBTASKS_OUTSTANDING');
  t.strictSame(early.body.error.details, {
    subtasks: [
      { id: s1.id, name: 'S1' },
      { id: s2.id, name: 'S2' },
    ],
  });
  await assertUnchanged(t, s, snapshot, 'objective completion with open sub-tasks');

  const first = await ok<Completed>(t, s, 'POST', `${base}/${s1.id}/complete`);
  t.match(first, { task: { id: s1.id, status: 'done' } });
  t.strictSame(first.unblocked, [], 'completing S1 unblocked nothing');
  const objectiveNow = await ok<Task>(t, s, 'GET', `${base}/${id.O}`);
  t.match(objectiveNow, { status: 'in_progress' });
  t.strictSame(
    objectiveNow.subtasks.map(({ id, done }) => ({ id, done })),
    [
      { id: s1.id, done: true },
      { id: s2.id, done: false },
    ],
    'its two sub-tasks, S1 done',
  );
  snapshot = await visible(s, [flow.id]);
  const stillOpen = await s.api<Refusal>('POST', `${base}/${id.O}/complete`, { token: s.adminKey });
  assertError(t, stillOpen, 409, 'SUBTASKS_OUTSTANDING');
  t.strictSame(stillOpen.body.error.details, { subtasks: [{ id: s2.id, name: 'S2' }] });
  await assertUnchanged(t, s, snapshot, 'objective completion with one open sub-task');

  await ok(t, s, 'POST', `${base}/${s2.id}/start`);
  const last = await ok<Completed>(t, s, 'POST', `${base}/${s2.id}/complete`);
  t.match(last.task, { id: s2.id, status: 'done' });
  t.strictSame(
    last.unblocked.map((x) => x.id),
    [id.Z],
    'completing the last sub-task completed the objective and unblocked Z',
  );
  const completed = await ok<Task>(t, s, 'GET', `${base}/${id.O}`);
  t.match(completed, { status: 'done' });
  t.strictSame(
    completed.subtasks.map(({ done }) => done),
    [true, true],
    'both sub-tasks done',
  );
  const objectiveComplete = await s.api<Refusal>('POST', `${base}/${id.O}/complete`, {
    token: s.adminKey,
  });
  assertError(t, objectiveComplete, 409, 'INVALID_TRANSITION');
  t.strictSame(objectiveComplete.body.error.details, { status: 'done' });
  const after = (await s.api('GET', `/v1/flows/${flow.id}`, { token: s.adminKey })).body;
  t.hasStrict(after, { taskCount: 5, doneCount: 4, readyCount: 1 });
});

t.test("an objective with sub-tasks lasts the sum of its open sub-tasks' hours", async (t) => {
  const s = await startFlowServer(t);
  const flow = await newFlow(t, s, {
    name: 'Hours',
    tasks: [
      { name: 'O', estimateHours: 80 },
      { name: 'Next', after: [0], estimateHours: 8 },
    ],
  });
  const id = idsByName(flow);
  const base = `/v1/flows/${flow.id}/tasks`;
  const schedule = async () =>
    await ok<Schedule>(t, s, 'GET', `/v1/flows/${flow.id}/schedule?startDate=2025-03-03`);
  // Only its own estimate: 80h = 10 working days.
  let plan = await schedule();
  t.strictSame(
    plan.entries.map(({ taskId, earliestStart, earliestFinish }: Record<string, unknown>) => ({
      taskId,
      earliestStart,
      earliestFinish,
    })),
    [
      { taskId: id.O, earliestStart: '2025-03-03', earliestFinish: '2025-03-14' },
      { taskId: id.Next, earliestStart: '2025-03-17', earliestFinish: '2025-03-17' },
    ],
    'one entry per task: the objective, then Next',
  );
  t.equal(item(plan.entries).estimated, true, 'the objective is estimated');
  // An unestimated sub-task alone changes nothing.
  const s0 = await ok(t, s, 'POST', base, { name: 'none', parentId: id.O }, 201);
  plan = await schedule();
  t.equal(plan.entries[0]?.earliestFinish, '2025-03-14');
  const s1 = await ok<Task>(
    t,
    s,
    'POST',
    base,
    { name: 'ten', parentId: id.O, estimateHours: 10 },
    201,
  );
  const s2 = await ok<Task>(
    t,
    s,
    'POST',
    base,
    { name: 'fourteen', parentId: id.O, estimateHours: 14 },
    201,
  );
  plan = await schedule();
  t.equal(plan.entries.length, 2, 'one entry per objective, none for sub-tasks');
  t.match(
    plan.entries[0],
    { taskId: id.O, earliestStart: '2025-03-03', earliestFinish: '2025-03-05', estimated: true },
    '24h = 3 days',
  );
  t.match(plan.entries[1], {
    taskId: id.Next,
    earliestStart: '2025-03-06',
    earliestFinish: '2025-03-06',
  });
  t.equal(plan.projectedFinish, '2025-03-06');
  await ok(t, s, 'POST', `${base}/${s2.id}/start`);
  await ok(t, s, 'POST', `${base}/${s2.id}/complete`);
  plan = await schedule();
  t.match(
    plan.entries[0],
    { taskId: id.O, earliestFinish: '2025-03-04' },
    'only open sub-tasks count: 10h = 2 days',
  );
  const report = await ok<Report>(t, s, 'GET', `/v1/flows/${flow.id}/report`);
  t.hasStrict(report, {
    tasksTotal: 2,
    tasksDone: 0,
    tasksReady: 0,
    tasksBlocked: 1,
    hoursEstimated: 32,
    hoursRemaining: 18,
  });
  t.strictSame(report.unestimatedTasks, []);
  void s0;
  void s1;
});

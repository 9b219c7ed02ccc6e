import t from 'tap';
import { assertError } from '../../helpers/server.ts';
import { idsByName, member, newFlow, ok, startFlowServer } from '../../helpers/flows.ts';
import type { Member, Schedule } from '../../helpers/wire.ts';

// 2025-03-03 is a Monday.
const START = 'startDate=2025-03-03';

/** A levelled entry, scheduled: dates, critical flag, delay. */
const on = (
  taskId: string | undefined,
  taskName: string,
  earliestStart: string,
  earliestFinish: string,
  delayDays: number,
  criticalPath = true,
) => ({
  taskId,
  taskName,
  estimated: true,
  earliestStart,
  earliestFinish,
  criticalPath,
  delayDays,
});

/** A levelled entry left unscheduled. */
const off = (taskId: string | undefined, taskName: string) => ({
  taskId,
  taskName,
  estimated: true,
  earliestStart: null,
  earliestFinish: null,
  criticalPath: false,
  delayDays: null,
});

t.test(
  'one person holds up two parallel branches; hoursPerDay 4 doubles their days, 0 unschedules them',
  async (t) => {
    const s = await startFlowServer(t);
    const ada = await member(s, 'Ada');
    const flow = await newFlow(t, s, {
      name: 'Branches',
      dueDate: '2025-03-07',
      tasks: [
        { name: 'A', estimateHours: 8 },
        { name: 'B', after: [0], estimateHours: 16, assigneeId: ada },
        { name: 'C', after: [0], estimateHours: 16, assigneeId: ada },
        { name: 'D', after: [1, 2], estimateHours: 8 },
      ],
    });
    const id = idsByName(flow);
    const path = `/v1/flows/${flow.id}/schedule`;
    const unlevelled = {
      flowId: flow.id,
      startDate: '2025-03-03',
      dueDate: '2025-03-07',
      projectedFinish: '2025-03-06',
      onTrack: true,
      entries: [
        ['A', '2025-03-03', '2025-03-03'],
        ['B', '2025-03-04', '2025-03-05'],
        ['C', '2025-03-04', '2025-03-05'],
        ['D', '2025-03-06', '2025-03-06'],
      ].map(([name = '', earliestStart, earliestFinish]) => ({
        taskId: id[name],
        taskName: name,
        earliestStart,
        earliestFinish,
        criticalPath: true,
        estimated: true,
      })),
    };
    const plain = await s.api<Schedule>('GET', `${path}?${START}`, { token: s.adminKey });
    t.strictSame(plain.body, unlevelled, 'without level: the plain schedule, as before');
    t.strictSame(
      await ok(t, s, 'GET', `${path}?${START}&level=false`),
      unlevelled,
      'level=false: the same',
    );

    const first = await s.api<Schedule>('GET', `${path}?${START}&level=true`, {
      token: s.adminKey,
    });
    t.equal(first.status, 200);
    // Ada does B, then C: C and what waits on it move two working days.
    t.strictSame(first.body, {
      flowId: flow.id,
      startDate: '2025-03-03',
      dueDate: '2025-03-07',
      projectedFinish: '2025-03-10',
      onTrack: false,
      entries: [
        on(id.A, 'A', '2025-03-03', '2025-03-03', 0),
        on(id.B, 'B', '2025-03-04', '2025-03-05', 0),
        on(id.C, 'C', '2025-03-06', '2025-03-07', 2),
        on(id.D, 'D', '2025-03-10', '2025-03-10', 2),
      ],
      unscheduled: [],
    });
    const etag = first.headers.get('etag');
    t.ok(etag, 'tagged');
    t.not(etag, plain.headers.get('etag'), 'apart from the plain schedule');
    const again = await s.api('GET', `${path}?${START}&level=true`, {
      token: s.adminKey,
      headers: { 'If-None-Match': etag ?? '' },
    });
    t.equal(again.status, 304, 'unchanged: 304');

    const hours = (hoursPerDay: number) =>
      ok<Member>(t, s, 'PATCH', `/v1/team/members/${ada}`, { hoursPerDay });
    t.match(await hours(4), { id: ada, hoursPerDay: 4 });
    const half = await s.api<Schedule>('GET', `${path}?${START}&level=true`, {
      token: s.adminKey,
      headers: { 'If-None-Match': etag ?? '' },
    });
    t.equal(half.status, 200, "a change of Ada's hours is seen at once, and changes the tag");
    t.strictSame(half.body.entries, [
      on(id.A, 'A', '2025-03-03', '2025-03-03', 0),
      on(id.B, 'B', '2025-03-04', '2025-03-07', 0),
      on(id.C, 'C', '2025-03-10', '2025-03-13', 4),
      on(id.D, 'D', '2025-03-14', '2025-03-14', 6),
    ]);
    t.equal(half.body.projectedFinish, '2025-03-14');

    await hours(0);
    const idle = await ok<Schedule>(t, s, 'GET', `${path}?${START}&level=true`);
    t.strictSame(idle, {
      flowId: flow.id,
      startDate: '2025-03-03',
      dueDate: '2025-03-07',
      projectedFinish: null,
      onTrack: false,
      entries: [
        // Alone on the levelled schedule, A is all there is to finish: it is the critical path.
        on(id.A, 'A', '2025-03-03', '2025-03-03', 0),
        off(id.B, 'B'),
        off(id.C, 'C'),
        off(id.D, 'D'),
      ],
      unscheduled: [id.B, id.C, id.D],
    });
    t.strictSame(
      await ok(t, s, 'GET', `${path}?${START}`),
      unlevelled,
      "the plain schedule never sees a person's hours",
    );
  },
);

t.test(
  'an unassigned task is untouched by person limits; a flow with no dependencies',
  async (t) => {
    const s = await startFlowServer(t);
    const ada = await member(s, 'Ada');
    const bob = await member(s, 'Bob');
    const flow = await newFlow(t, s, {
      name: 'Loose',
      tasks: [
        { name: 'X', estimateHours: 8, assigneeId: ada },
        { name: 'Y', estimateHours: 8, assigneeId: ada },
        { name: 'Z', estimateHours: 8 },
        { name: 'W', estimateHours: 24, assigneeId: bob },
      ],
    });
    const id = idsByName(flow);
    const levelled = await ok<Schedule>(
      t,
      s,
      'GET',
      `/v1/flows/${flow.id}/schedule?${START}&level=true`,
    );
    // W (least slack) first; then X, Y and Z in flow order: Ada takes X, then Y; Z is nobody's.
    t.strictSame(levelled, {
      flowId: flow.id,
      startDate: '2025-03-03',
      dueDate: null,
      projectedFinish: '2025-03-05',
      onTrack: null,
      entries: [
        on(id.X, 'X', '2025-03-03', '2025-03-03', 0, false),
        on(id.Y, 'Y', '2025-03-04', '2025-03-04', 1, false),
        on(id.Z, 'Z', '2025-03-03', '2025-03-03', 0, false),
        on(id.W, 'W', '2025-03-03', '2025-03-05', 0),
      ],
      unscheduled: [],
    });
  },
);

t.test('done and started work, an objective of sub-tasks, and an empty flow', async (t) => {
  const s = await startFlowServer(t);
  const ada = await member(s, 'Ada');
  const flow = await newFlow(t, s, {
    name: 'Mixed',
    tasks: [
      { name: 'P', estimateHours: 8, assigneeId: ada },
      { name: 'Q', after: [0], estimateHours: 8, assigneeId: ada },
      { name: 'R', estimateHours: 8, assigneeId: ada },
      { name: 'O', assigneeId: ada },
    ],
  });
  const id = idsByName(flow);
  const task = (name: string) => `/v1/flows/${flow.id}/tasks/${id[name]}`;
  for (const sub of ['s1', 's2'])
    await ok(
      t,
      s,
      'POST',
      `/v1/flows/${flow.id}/tasks`,
      { name: sub, parentId: id.O, estimateHours: 8 },
      201,
    );
  await ok(t, s, 'POST', `${task('P')}/start`);
  await ok(t, s, 'POST', `${task('P')}/complete`);
  await ok(t, s, 'POST', `${task('R')}/start`);
  await ok(t, s, 'PATCH', `/v1/team/members/${ada}`, { hoursPerDay: 4 });
  const levelled = await ok<Schedule>(
    t,
    s,
    'GET',
    `/v1/flows/${flow.id}/schedule?${START}&level=true`,
  );
  // O's sub-tasks make 16 hours: 4 of Ada's days, and the longest work, so it goes first; the
  // rule orders started work like any other, so R (in progress) waits behind Q.
  t.strictSame(levelled.entries, [
    { taskId: id.P, taskName: 'P', estimated: true, criticalPath: false },
    on(id.Q, 'Q', '2025-03-07', '2025-03-10', 4),
    on(id.R, 'R', '2025-03-11', '2025-03-12', 6),
    on(id.O, 'O', '2025-03-03', '2025-03-06', 0),
  ]);
  t.equal(levelled.projectedFinish, '2025-03-12');

  const empty = await newFlow(t, s, { name: 'Empty' });
  t.strictSame(await ok(t, s, 'GET', `/v1/flows/${empty.id}/schedule?${START}&level=true`), {
    flowId: empty.id,
    startDate: '2025-03-03',
    dueDate: null,
    projectedFinish: null,
    onTrack: null,
    entries: [],
    unscheduled: [],
  });
});

t.test('level is a boolean; a levelled finish past the last day is refused', async (t) => {
  const s = await startFlowServer(t);
  const ada = await member(s, 'Ada');
  const flow = await newFlow(t, s, {
    name: 'Late',
    tasks: [{ name: 'only', estimateHours: 8, assigneeId: ada }],
  });
  const path = `/v1/flows/${flow.id}/schedule`;
  for (const level of ['yes', '2'])
    assertError(
      t,
      await s.api('GET', `${path}?level=${level}`, { token: s.adminKey }),
      400,
      'VALIDATION_FAILED',
    );
  assertError(
    t,
    await s.api('GET', `/v1/flows/flw_missing/schedule?level=true`, { token: s.adminKey }),
    404,
    'NOT_FOUND',
  );
  // 9999-12-31 is a Friday, the last day a date can name: one day fits, two do not.
  const last = 'startDate=9999-12-31';
  await ok(t, s, 'GET', `${path}?${last}&level=true`);
  await ok(t, s, 'PATCH', `/v1/team/members/${ada}`, { hoursPerDay: 4 });
  await ok(t, s, 'GET', `${path}?${last}`);
  assertError(
    t,
    await s.api('GET', `${path}?${last}&level=true`, { token: s.adminKey }),
    400,
    'VALIDATION_FAILED',
    "at 4 hours a day Ada's task needs two days: refused, not clamped",
  );
});

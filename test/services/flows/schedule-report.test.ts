import t from 'tap';
import { assertError, item } from '../../helpers/server.ts';
import { idsByName, member, newFlow, ok, startFlowServer } from '../../helpers/flows.ts';
import type { FlowList, Refusal, Schedule, TemplateList } from '../../helpers/wire.ts';

// 2025-03-03 is a Monday; 2025-03-01 the Saturday before it.
t.test('schedule: working days, durations, critical path, onTrack', async (t) => {
  const s = await startFlowServer(t);
  const flow = await newFlow(t, s, {
    name: 'Plan',
    dueDate: '2025-03-11',
    tasks: [
      { name: 'A', estimateHours: 8 }, // 1 day
      { name: 'B', after: [0], estimateHours: 20 }, // 3 days
      { name: 'C', after: [0] }, // unestimated: 1 day
      { name: 'D', after: [1, 2], estimateHours: 4 }, // 1 day
      { name: 'E', estimateHours: 32 }, // 4 days, free
      { name: 'G', after: [3], estimateHours: 9 }, // 2 days, across the weekend
      { name: 'H', estimateHours: 0 }, // 1 day
    ],
  });
  const id = idsByName(flow);
  const path = `/v1/flows/${flow.id}/schedule`;
  const monday = await s.api('GET', `${path}?startDate=2025-03-03`, { token: s.adminKey });
  t.equal(monday.status, 200);
  t.ok(monday.headers.get('etag'));
  const entry = (
    taskId: string,
    name: string,
    earliestStart: string,
    earliestFinish: string,
    criticalPath: boolean,
    estimated = true,
  ) => ({ taskId, taskName: name, earliestStart, earliestFinish, criticalPath, estimated });
  const expected = [
    entry(id.A!, 'A', '2025-03-03', '2025-03-03', true),
    entry(id.B!, 'B', '2025-03-04', '2025-03-06', true),
    entry(id.C!, 'C', '2025-03-04', '2025-03-04', false, false),
    entry(id.D!, 'D', '2025-03-07', '2025-03-07', true),
    entry(id.E!, 'E', '2025-03-03', '2025-03-06', false),
    entry(id.G!, 'G', '2025-03-10', '2025-03-11', true),
    entry(id.H!, 'H', '2025-03-03', '2025-03-03', false),
  ];
  t.strictSame(monday.body, {
    flowId: flow.id,
    startDate: '2025-03-03',
    dueDate: '2025-03-11',
    projectedFinish: '2025-03-11',
    onTrack: true,
    entries: expected,
  });
  const saturday = await ok(t, s, 'GET', `${path}?startDate=2025-03-01`);
  t.strictSame(saturday, monday.body, 'a Saturday start moves to Monday');
  t.strictSame(
    await ok(t, s, 'GET', `${path}?startDate=2025-03-02T23:00:00Z`),
    monday.body,
    'a Sunday date-time too',
  );
  const wednesday = await ok<Schedule>(t, s, 'GET', `${path}?startDate=2025-03-05`);
  t.equal(wednesday.projectedFinish, '2025-03-13');
  t.equal(wednesday.onTrack, false, 'finishing after the due date is not on track');
  t.match(wednesday.entries[5], {
    taskName: 'G',
    earliestStart: '2025-03-12',
    earliestFinish: '2025-03-13',
  });
  assertError(
    t,
    await s.api('GET', `${path}?startDate=tomorrow`, { token: s.adminKey }),
    400,
    'VALIDATION_FAILED',
  );
  assertError(
    t,
    await s.api('GET', `/v1/flows/flw_missing/schedule?startDate=2025-03-03`, {
      token: s.adminKey,
    }),
    404,
    'NOT_FOUND',
  );

  await ok(t, s, 'PATCH', `/v1/flows/${flow.id}`, { dueDate: '2025-03-10' });
  t.match(await ok(t, s, 'GET', `${path}?startDate=2025-03-03`), {
    dueDate: '2025-03-10',
    projectedFinish: '2025-03-11',
    onTrack: false,
  });
  await ok(t, s, 'PATCH', `/v1/flows/${flow.id}`, { dueDate: null });
  t.match(await ok(t, s, 'GET', `${path}?startDate=2025-03-03`), {
    dueDate: null,
    projectedFinish: '2025-03-11',
    onTrack: null,
  });

  // Done tasks take no time and have no dates; in-progress work starts at startDate.
  const task = (name: string) => `/v1/flows/${flow.id}/tasks/${id[name]}`;
  await ok(t, s, 'POST', `${task('A')}/start`);
  await ok(t, s, 'POST', `${task('A')}/complete`);
  await ok(t, s, 'POST', `${task('B')}/start`);
  const later = await ok<Schedule>(t, s, 'GET', `${path}?startDate=2025-03-03`);
  t.strictSame(later.entries, [
    { taskId: id.A, taskName: 'A', criticalPath: false, estimated: true },
    entry(id.B!, 'B', '2025-03-03', '2025-03-05', true),
    entry(id.C!, 'C', '2025-03-03', '2025-03-03', false, false),
    entry(id.D!, 'D', '2025-03-06', '2025-03-06', true),
    entry(id.E!, 'E', '2025-03-03', '2025-03-06', false),
    entry(id.G!, 'G', '2025-03-07', '2025-03-10', true),
    entry(id.H!, 'H', '2025-03-03', '2025-03-03', false),
  ]);
  t.equal(later.projectedFinish, '2025-03-10');
  // Finishing on the due date itself is on track.
  await ok(t, s, 'PATCH', `/v1/flows/${flow.id}`, { dueDate: '2025-03-10' });
  t.match(
    await ok(t, s, 'GET', `${path}?startDate=2025-03-03`),
    { projectedFinish: '2025-03-10', onTrack: true },
    'on the due date is on track',
  );
});

t.test('schedule with nothing open, and an empty flow', async (t) => {
  const s = await startFlowServer(t);
  const flow = await newFlow(t, s, {
    name: 'Done',
    dueDate: '2025-03-20',
    tasks: [{ name: 'only', estimateHours: 3 }],
  });
  const only = item(flow.tasks).id;
  await ok(t, s, 'POST', `/v1/flows/${flow.id}/tasks/${only}/start`);
  await ok(t, s, 'POST', `/v1/flows/${flow.id}/tasks/${only}/complete`);
  const plan = await ok<Schedule>(
    t,
    s,
    'GET',
    `/v1/flows/${flow.id}/schedule?startDate=2025-03-03`,
  );
  t.strictSame(plan.entries, [
    { taskId: only, taskName: 'only', criticalPath: false, estimated: true },
  ]);
  t.equal(plan.projectedFinish, null, 'nothing open: no projected finish');
  const empty = await newFlow(t, s, { name: 'Empty' });
  t.strictSame(await ok(t, s, 'GET', `/v1/flows/${empty.id}/schedule?startDate=2025-03-03`), {
    flowId: empty.id,
    startDate: '2025-03-03',
    dueDate: null,
    projectedFinish: null,
    onTrack: null,
    entries: [],
  });
  t.strictSame(await ok(t, s, 'GET', `/v1/flows/${empty.id}/report`), {
    flowId: empty.id,
    flowName: 'Empty',
    completion: 0,
    tasksTotal: 0,
    tasksDone: 0,
    tasksReady: 0,
    tasksBlocked: 0,
    hoursEstimated: null,
    hoursRemaining: null,
    unestimatedTasks: [],
    orphanedTasks: [],
    workload: [],
    topBlockers: [],
  });
});

t.test('report: counts over objectives, hours, workload, transitive blockers', async (t) => {
  const s = await startFlowServer(t);
  const ann = await member(s, 'Ann');
  const bob = await member(s, 'Bob');
  const flow = await newFlow(t, s, {
    name: 'Delivery',
    tasks: [
      { name: 'A', estimateHours: 8, assigneeId: ann },
      { name: 'B', after: [0], estimateHours: 20, assigneeId: ann },
      { name: 'C', after: [0], assigneeId: bob },
      { name: 'D', after: [1, 2], estimateHours: 4 },
      { name: 'E', estimateHours: 32 },
      { name: 'F' },
      { name: 'K', after: [3] },
    ],
  });
  const id = idsByName(flow);
  const path = `/v1/flows/${flow.id}/report`;
  const first = await s.api('GET', path, { token: s.adminKey });
  t.equal(first.status, 200);
  t.strictSame(first.body, {
    flowId: flow.id,
    flowName: 'Delivery',
    completion: 0,
    tasksTotal: 7,
    tasksDone: 0,
    tasksReady: 3,
    tasksBlocked: 4,
    hoursEstimated: 64,
    hoursRemaining: 64,
    unestimatedTasks: [id.C, id.F, id.K],
    orphanedTasks: [id.E, id.F],
    workload: [
      { memberId: ann, name: 'Ann', openTasks: 2, hoursRemaining: 28 },
      { memberId: bob, name: 'Bob', openTasks: 1, hoursRemaining: null },
    ],
    topBlockers: [
      { taskId: id.A, taskName: 'A', blocking: 4 },
      { taskId: id.B, taskName: 'B', blocking: 2 },
      { taskId: id.C, taskName: 'C', blocking: 2 },
      { taskId: id.D, taskName: 'D', blocking: 1 },
    ],
  });

  const task = (name: string) => `/v1/flows/${flow.id}/tasks/${id[name]}`;
  await ok(t, s, 'POST', `${task('A')}/start`);
  let report = await ok(t, s, 'GET', path);
  t.hasStrict(
    report,
    { tasksDone: 0, tasksReady: 2, tasksBlocked: 4 },
    'in progress is neither ready nor blocked',
  );
  await ok(t, s, 'POST', `${task('A')}/complete`);
  // A sub-task of F with an estimate: F now lasts 6h; Bob gets it.
  await ok(
    t,
    s,
    'POST',
    `/v1/flows/${flow.id}/tasks`,
    { name: 'F1', parentId: id.F, estimateHours: 6, assigneeId: bob },
    201,
  );
  report = await ok(t, s, 'GET', path);
  t.strictSame(report, {
    flowId: flow.id,
    flowName: 'Delivery',
    completion: 1 / 7,
    tasksTotal: 7,
    tasksDone: 1,
    tasksReady: 4,
    tasksBlocked: 2,
    hoursEstimated: 70,
    hoursRemaining: 62,
    unestimatedTasks: [id.C, id.K],
    orphanedTasks: [id.E, id.F],
    workload: [
      { memberId: ann, name: 'Ann', openTasks: 1, hoursRemaining: 20 },
      { memberId: bob, name: 'Bob', openTasks: 2, hoursRemaining: 6 },
    ].sort((x, y) => y.openTasks - x.openTasks),
    topBlockers: [
      { taskId: id.B, taskName: 'B', blocking: 2 },
      { taskId: id.C, taskName: 'C', blocking: 2 },
      { taskId: id.D, taskName: 'D', blocking: 1 },
    ],
  });

  const unestimated = await newFlow(t, s, {
    name: 'Guesses',
    tasks: [{ name: 'x' }, { name: 'y', after: [0] }],
  });
  t.strictSame(await ok(t, s, 'GET', `/v1/flows/${unestimated.id}/report`), {
    flowId: unestimated.id,
    flowName: 'Guesses',
    completion: 0,
    tasksTotal: 2,
    tasksDone: 0,
    tasksReady: 1,
    tasksBlocked: 1,
    hoursEstimated: null,
    hoursRemaining: null,
    unestimatedTasks: [item(unestimated.tasks).id, item(unestimated.tasks, 1).id],
    orphanedTasks: [],
    workload: [],
    topBlockers: [{ taskId: unestimated.tasks[0]?.id, taskName: 'x', blocking: 1 }],
  });
  assertError(
    t,
    await s.api('GET', '/v1/flows/flw_missing/report', { token: s.adminKey }),
    404,
    'NOT_FOUND',
  );
});

t.test(
  'dates outside 1970-01-01..9999-12-31 are a 400 at their pointer, and no answer carries a date past 9999-12-31 (issue 29, item 3)',
  async (t) => {
    const s = await startFlowServer(t);
    const flow = await newFlow(t, s, {
      name: 'Two days',
      tasks: [{ name: 'A' }, { name: 'B', after: [0] }],
    });
    const path = `/v1/flows/${flow.id}/schedule`;
    const refused = async (query: string, message: string | RegExp) => {
      const res = await s.api<Refusal>('GET', `${path}?startDate=${encodeURIComponent(query)}`, {
        token: s.adminKey,
      });
      assertError(t, res, 400, 'VALIDATION_FAILED', `startDate=${query}`);
      t.same(
        res.body?.error?.details?.errors?.map((e: { in: string; pointer: string }) => [
          e.in,
          e.pointer,
        ]),
        [['query', '/startDate']],
        `startDate=${query}: pointer`,
      );
      t.match(
        res.body?.error?.details?.errors?.[0]?.message,
        message,
        `startDate=${query}: says why`,
      );
    };
    const range = 'must be between 1970-01-01 and 9999-12-31 (UTC)';
    await refused('0093-01-28', range); // Date.UTC reads year 93 as 1993
    await refused('0000-01-01', range);
    await refused('1969-12-31', range);
    await refused('9999-12-31T23:00:00-05:00', range); // year 10000 in UTC
    await refused('10000-01-01', 'YYYY-MM-DD');
    await refused('9999-12-31', /would end after 9999-12-31.*choose an earlier startDate/);
    const first = await ok<Schedule>(t, s, 'GET', `${path}?startDate=1970-01-01`);
    t.equal(first.projectedFinish, '1970-01-02', 'the first day of the range starts a schedule');
    const fits = await ok<Schedule>(t, s, 'GET', `${path}?startDate=9999-12-30`);
    t.equal(fits.projectedFinish, '9999-12-31', 'a finish on the last day is answered');

    const dueCases: [string, string, unknown][] = [
      ['POST', '/v1/flows', { name: 'x', dueDate: '0000-01-01' }],
      ['POST', '/v1/flows', { name: 'x', dueDate: '0099-12-31T12:00:00Z' }],
      ['PATCH', `/v1/flows/${flow.id}`, { dueDate: '1969-07-20' }],
      ['PATCH', `/v1/flows/${flow.id}`, { dueDate: '9999-12-31T22:00:00-02:00' }],
      [
        'POST',
        `/v1/templates/${item((await ok<TemplateList>(t, s, 'GET', '/v1/templates')).items).id}/flows`,
        { dueDate: '0001-01-01' },
      ],
    ];
    for (const [method, route, body] of dueCases) {
      const res = await s.api<Refusal>(method, route, { token: s.adminKey, body });
      assertError(t, res, 400, 'VALIDATION_FAILED', `${method} ${route} ${JSON.stringify(body)}`);
      t.same(res.body?.error?.details?.errors, [
        { in: 'body', pointer: '/dueDate', message: range },
      ]);
    }
    t.equal(
      (await ok<FlowList>(t, s, 'GET', '/v1/flows?size=100')).total,
      1,
      'no flow was created',
    );
    await ok(t, s, 'PATCH', `/v1/flows/${flow.id}`, { dueDate: '9999-12-31' });
    t.equal(
      (await ok<Schedule>(t, s, 'GET', `${path}?startDate=2026-01-05`)).dueDate,
      '9999-12-31',
      'the last day is a due date',
    );

    // 200 tasks of 12,500 working days each: 2.5 million working days, past 9999 from any start.
    const long = await newFlow(t, s, {
      name: 'Long',
      tasks: Array.from({ length: 200 }, (_, i) => ({
        name: `T${i}`,
        estimateHours: 100_000,
        ...(i ? { after: [i - 1] } : {}),
      })),
    });
    const today = await ok<Schedule>(t, s, 'GET', `/v1/flows/${long.id}/schedule`);
    t.equal(
      today.projectedFinish,
      '9999-12-31',
      'from today, a finish past the range reads its last day',
    );
    t.ok(
      today.entries.every(
        (e) =>
          /^\d{4}-\d{2}-\d{2}$/.test(e.earliestStart ?? '') &&
          /^\d{4}-\d{2}-\d{2}$/.test(e.earliestFinish ?? ''),
      ),
      'every entry is a YYYY-MM-DD',
    );
    const chosen = await s.api<Refusal>(
      'GET',
      `/v1/flows/${long.id}/schedule?startDate=2026-01-05`,
      {
        token: s.adminKey,
      },
    );
    assertError(
      t,
      chosen,
      400,
      'VALIDATION_FAILED',
      'a chosen start whose finish would pass the range',
    );
    t.match(chosen.body.error.details.errors[0], {
      in: 'query',
      pointer: '/startDate',
      message: /2500000 working days would end after 9999-12-31/,
    });
  },
);

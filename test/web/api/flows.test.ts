import t from 'tap';
import { assertError, item } from '../../helpers/server.ts';
import {
  assertUnchanged,
  idsByName,
  member,
  newFlow,
  ok,
  startFlowServer,
  taskNamed,
  visible,
} from '../../helpers/flows.ts';
import type { Flow, FlowList, FlowSummary, Refusal, Task } from '../../helpers/wire.ts';

const sorted = (ids: string[]) => [...ids].sort();

t.test('create with a task graph: 201 Flow with derived status', async (t) => {
  const s = await startFlowServer(t);
  const ann = await member(s, 'Ann');
  const res = await s.api<Flow>('POST', '/v1/flows', {
    token: s.adminKey,
    body: {
      name: 'Launch',
      description: 'Ship it',
      dueDate: '2030-03-15',
      tasks: [
        { name: 'A', estimateHours: 4 },
        { name: 'B', after: [0], description: 'second' },
        { name: 'C', after: [0, 1], assigneeId: ann, estimateHours: 12 },
        { name: 'D' },
      ],
    },
  });
  t.equal(res.status, 201);
  t.match(res.headers.get('content-type'), /^application\/json/);
  const flow = res.body;
  t.match(flow.id, /^flw_/);
  t.strictSame(
    { ...flow, tasks: undefined, id: undefined, createdAt: undefined, updatedAt: undefined },
    {
      id: undefined,
      name: 'Launch',
      description: 'Ship it',
      archived: false,
      public: false,
      publicUrl: null,
      dueDate: '2030-03-15T00:00:00.000Z',
      taskCount: 4,
      doneCount: 0,
      readyCount: 2,
      version: 1,
      createdAt: undefined,
      updatedAt: undefined,
      tasks: undefined,
    },
  );
  t.ok(!Number.isNaN(Date.parse(flow.createdAt)) && !Number.isNaN(Date.parse(flow.updatedAt)));
  t.equal(flow.tasks.length, 4);
  const id = idsByName(flow);
  for (const task of flow.tasks) {
    t.match(task.id, /^tsk_/);
    t.equal(task.flowId, flow.id);
    t.equal(task.parentId, null);
    t.strictSame(task.subtasks, []);
    t.strictSame(task.requiredDeliverables, []);
  }
  const [a, b, c, d] = ['A', 'B', 'C', 'D'].map((n) => taskNamed(flow, n)) as [
    Task,
    Task,
    Task,
    Task,
  ];
  t.match(a, {
    status: 'ready',
    estimateHours: 4,
    assigneeId: null,
    description: null,
    criticalPath: true,
  });
  t.strictSame(
    { dependsOn: a.dependsOn, blockedBy: a.blockedBy },
    { dependsOn: [], blockedBy: [] },
    'A waits on nothing',
  );
  t.match(b, { status: 'blocked', estimateHours: null, description: 'second', criticalPath: true });
  t.strictSame(
    { dependsOn: b.dependsOn, blockedBy: b.blockedBy },
    { dependsOn: [id.A], blockedBy: [id.A] },
    'B waits on A alone',
  );
  t.equal(c.status, 'blocked');
  t.strictSame(sorted(c.dependsOn), sorted([id.A!, id.B!]));
  t.strictSame(sorted(c.blockedBy), sorted([id.A!, id.B!]));
  t.equal(c.assigneeId, ann);
  t.equal(c.criticalPath, true, 'A → B → C decides the finish');
  t.match(d, { status: 'ready', criticalPath: false });
  t.strictSame(
    { dependsOn: d.dependsOn, blockedBy: d.blockedBy },
    { dependsOn: [], blockedBy: [] },
    'D waits on nothing',
  );

  const got = await s.api<Flow>('GET', `/v1/flows/${flow.id}`, { token: s.adminKey });
  t.equal(got.status, 200);
  t.strictSame(got.body, flow, 'GET answers the same Flow');
});

t.test(
  'a cycle among after references: 400 CIRCULAR_DEPENDENCY with the cycle, nothing written',
  async (t) => {
    const s = await startFlowServer(t);
    const kept = await newFlow(t, s, { name: 'Existing', tasks: [{ name: 'x' }] });
    const before = await visible(s, [kept.id]);
    const tasks = [
      { name: 't0' },
      { name: 't1', after: [3] },
      { name: 't2', after: [1] },
      { name: 't3', after: [2] },
      { name: 't4', after: [1] },
    ];
    const res = await s.api<Refusal>('POST', '/v1/flows', {
      token: s.adminKey,
      body: { name: 'Loop', tasks },
    });
    assertError(t, res, 400, 'CIRCULAR_DEPENDENCY');
    const cycle: number[] = res.body.error.details.cycle;
    t.strictSame([...cycle].sort(), [1, 2, 3], 'exactly the tasks of the cycle');
    cycle.forEach((from, i) => {
      const next = cycle[(i + 1) % cycle.length]!;
      t.ok(
        (tasks[next] as { after?: number[] }).after?.includes(from),
        `task ${next} waits on ${from}`,
      );
    });
    const two = await s.api<Refusal>('POST', '/v1/flows', {
      token: s.adminKey,
      body: {
        name: 'Pair',
        tasks: [
          { name: 'a', after: [1] },
          { name: 'b', after: [0] },
        ],
      },
    });
    assertError(t, two, 400, 'CIRCULAR_DEPENDENCY');
    t.strictSame([...two.body.error.details.cycle].sort(), [0, 1]);
    await assertUnchanged(t, s, before, 'refused cycles');
  },
);

t.test('list: archived, q, size, from, newest first, total counts every match', async (t) => {
  const s = await startFlowServer(t);
  const empty = await s.api('GET', '/v1/flows', { token: s.adminKey });
  t.equal(empty.status, 200);
  t.strictSame(empty.body, { total: 0, items: [] });
  const names = ['Alpha launch', 'Beta launch', 'Gamma', 'Delta LAUNCH', 'Odd 100%_done'];
  const flows: Flow[] = [];
  for (const name of names)
    flows.push(
      await newFlow(t, s, { name, tasks: [{ name: 'one' }, { name: 'two', after: [0] }] }),
    );
  const list = async (query: string) => {
    const res = await s.api<FlowList>('GET', `/v1/flows${query}`, { token: s.adminKey });
    t.equal(res.status, 200, `list ${query}`);
    return res.body;
  };
  const all = await list('');
  t.equal(all.total, 5);
  t.strictSame(
    all.items.map((f) => f.name),
    [...names].reverse(),
    'newest first',
  );
  const summary = all.items.find((f) => f.id === item(flows).id);
  const { tasks: _tasks, ...created } = item(flows);
  t.strictSame(summary, created, 'items are the FlowSummary of the created flow');
  t.notOk('tasks' in (summary ?? {}));
  t.hasStrict(summary, { taskCount: 2, doneCount: 0, readyCount: 1 });

  const q = await list('?q=launch');
  t.equal(q.total, 3, 'case-insensitive name match');
  t.strictSame(
    q.items.map((f) => f.name),
    ['Delta LAUNCH', 'Beta launch', 'Alpha launch'],
  );
  t.strictSame(
    (await list('?q=%25')).items.map((f) => f.name),
    ['Odd 100%_done'],
    '% is matched literally',
  );
  t.equal((await list('?q=_')).total, 1, '_ is matched literally');
  t.strictSame(await list('?q=nothing-matches'), { total: 0, items: [] });

  const page1 = await list('?size=2');
  t.equal(page1.total, 5, 'total counts every match, not the page');
  t.strictSame(
    page1.items.map((f) => f.name),
    ['Odd 100%_done', 'Delta LAUNCH'],
  );
  const page2 = await list('?size=2&from=2');
  t.equal(page2.total, 5);
  t.strictSame(
    page2.items.map((f) => f.name),
    ['Gamma', 'Beta launch'],
  );
  const page3 = await list('?size=2&from=4');
  t.strictSame(
    page3.items.map((f) => f.name),
    ['Alpha launch'],
  );
  t.strictSame(await list('?from=5'), { total: 5, items: [] }, 'past the end: total still counts');
  t.equal((await list('?size=1&q=launch&from=1')).items[0]?.name, 'Beta launch');
  t.equal((await list('?size=100')).items.length, 5);
  t.equal((await list('?size=1')).items.length, 1);
  for (const bad of ['size=0', 'size=101', 'size=abc', 'from=-1', 'archived=maybe']) {
    const res = await s.api<Refusal>('GET', `/v1/flows?${bad}`, { token: s.adminKey });
    assertError(t, res, 400, 'VALIDATION_FAILED', bad);
    t.equal(res.body.error.details.errors[0].in, 'query');
  }

  // Archive: leaves the default list, shows with archived=true.
  const gamma = item(flows, 2);
  const del = await s.api('DELETE', `/v1/flows/${gamma.id}`, { token: s.adminKey });
  t.equal(del.status, 204);
  t.equal(del.text, '');
  const live = await list('');
  t.equal(live.total, 4);
  t.notOk(live.items.some((f) => f.id === gamma.id));
  const archived = await list('?archived=true');
  t.equal(archived.total, 1);
  t.strictSame(
    archived.items.map((f) => [f.id, f.archived]),
    [[gamma.id, true]],
  );
  t.equal((await list('?archived=true&q=gam')).total, 1);
  t.equal((await list('?archived=false&q=gam')).total, 0);
  const still = await s.api<Flow>('GET', `/v1/flows/${gamma.id}`, { token: s.adminKey });
  t.equal(still.status, 200, 'an archived flow is still readable');
  t.equal(still.body.archived, true);
  t.equal(still.body.tasks.length, 2, 'archiving destroys nothing');

  // Restore: 200 FlowSummary; again → 404 NOT_ARCHIVED, nothing written.
  const restored = await s.api<FlowSummary>('POST', `/v1/flows/${gamma.id}/restore`, {
    token: s.adminKey,
  });
  t.equal(restored.status, 200);
  t.equal(restored.body.archived, false);
  t.equal(restored.body.id, gamma.id);
  t.notOk('tasks' in restored.body, 'restore answers a FlowSummary');
  t.hasStrict(restored.body, { taskCount: 2, doneCount: 0, readyCount: 1 });
  t.strictSame(
    (await list('')).items.map((f) => f.name),
    [...names].reverse(),
    'back in the live list, in creation order',
  );
  t.strictSame(await list('?archived=true'), { total: 0, items: [] });
  const before = await visible(s, [gamma.id, item(flows).id]);
  assertError(
    t,
    await s.api('POST', `/v1/flows/${gamma.id}/restore`, { token: s.adminKey }),
    404,
    'NOT_ARCHIVED',
  );
  assertError(
    t,
    await s.api('POST', `/v1/flows/flw_nope/restore`, { token: s.adminKey }),
    404,
    'NOT_FOUND',
  );
  assertError(
    t,
    await s.api('DELETE', `/v1/flows/flw_nope`, { token: s.adminKey }),
    404,
    'NOT_FOUND',
  );
  await assertUnchanged(t, s, before, 'restore of a live flow');
});

t.test('get, patch (name, description, dueDate null clears), ETag and 304', async (t) => {
  const s = await startFlowServer(t);
  const flow = await newFlow(t, s, {
    name: 'Plan',
    description: 'first',
    dueDate: '2030-01-10T12:30:00+02:00',
    tasks: [{ name: 'a' }],
  });
  t.equal(flow.dueDate, '2030-01-10T10:30:00.000Z', 'date-time stored as the instant');
  assertError(
    t,
    await s.api('GET', '/v1/flows/flw_unknown', { token: s.adminKey }),
    404,
    'NOT_FOUND',
  );

  const first = await s.api('GET', `/v1/flows/${flow.id}`, { token: s.adminKey });
  const tag = first.headers.get('etag');
  t.equal(tag, `"${flow.id}.v1"`, 'the ETag is the version tag');
  t.equal(first.headers.get('vary'), 'Authorization, Accept');
  const again = await s.api('GET', `/v1/flows/${flow.id}`, {
    token: s.adminKey,
    headers: { 'if-none-match': tag! },
  });
  t.equal(again.status, 304);
  t.equal(again.text, '');
  t.equal(again.headers.get('etag'), tag);

  const renamed = await s.api<FlowSummary>('PATCH', `/v1/flows/${flow.id}`, {
    token: s.adminKey,
    body: { name: 'Plan B' },
  });
  t.equal(renamed.status, 200);
  t.notOk('tasks' in renamed.body, 'PATCH answers a FlowSummary');
  t.hasStrict(renamed.body, {
    id: flow.id,
    name: 'Plan B',
    description: 'first',
    dueDate: '2030-01-10T10:30:00.000Z',
    archived: false,
    taskCount: 1,
    readyCount: 1,
    doneCount: 0,
  });
  t.ok(renamed.body.updatedAt >= flow.updatedAt);
  const afterWrite = await s.api<Flow>('GET', `/v1/flows/${flow.id}`, {
    token: s.adminKey,
    headers: { 'if-none-match': tag! },
  });
  t.equal(afterWrite.status, 200, 'the old tag no longer matches after a write');
  t.equal(afterWrite.headers.get('etag'), `"${flow.id}.v2"`);
  t.equal(afterWrite.body.name, 'Plan B');

  const cleared = await s.api<FlowSummary>('PATCH', `/v1/flows/${flow.id}`, {
    token: s.adminKey,
    body: { dueDate: null, description: null },
  });
  t.equal(cleared.status, 200);
  t.equal(cleared.body.dueDate, null, 'null clears the due date');
  t.equal(cleared.body.description, null);
  const dated = await s.api<FlowSummary>('PATCH', `/v1/flows/${flow.id}`, {
    token: s.adminKey,
    body: { dueDate: '2031-02-03' },
  });
  t.equal(dated.body.dueDate, '2031-02-03T00:00:00.000Z', 'a plain date is accepted');
  const got = await s.api('GET', `/v1/flows/${flow.id}`, { token: s.adminKey });
  t.match(got.body, { name: 'Plan B', description: null, dueDate: '2031-02-03T00:00:00.000Z' });
  t.equal(got.headers.get('etag'), `"${flow.id}.v4"`);

  // A patch that changes nothing writes nothing.
  const before = await visible(s, [flow.id]);
  const same = await s.api<FlowSummary>('PATCH', `/v1/flows/${flow.id}`, {
    token: s.adminKey,
    body: { name: 'Plan B' },
  });
  t.equal(same.status, 200);
  t.equal(same.body.name, 'Plan B');
  await assertUnchanged(t, s, before, 'no-op patch');

  // Refused patches write nothing.
  for (const [body, pointer] of [
    [{}, ''],
    [{ name: '' }, '/name'],
    [{ name: '   ' }, '/name'],
    [{ color: 'red' }, '/color'],
    [{ dueDate: 'next week' }, '/dueDate'],
    [{ name: 42 }, '/name'],
    [{ dueDate: '2031-02-30' }, '/dueDate'],
  ] as const) {
    const res = await s.api<Refusal>('PATCH', `/v1/flows/${flow.id}`, { token: s.adminKey, body });
    assertError(t, res, 400, 'VALIDATION_FAILED', JSON.stringify(body));
    t.ok(
      res.body.error.details.errors.some((e: { pointer: string }) => e.pointer === pointer),
      `pointer ${pointer} for ${JSON.stringify(body)}`,
    );
  }
  assertError(
    t,
    await s.api('PATCH', '/v1/flows/flw_missing', { token: s.adminKey, body: { name: 'x' } }),
    404,
    'NOT_FOUND',
  );
  await assertUnchanged(t, s, before, 'refused patches');
});

t.test(
  'publish (fresh link each time) and unpublish; summary counts follow progress',
  async (t) => {
    const s = await startFlowServer(t);
    const flow = await newFlow(t, s, {
      name: 'Public',
      tasks: [{ name: 'a' }, { name: 'b', after: [0] }, { name: 'c', after: [1] }],
    });
    const id = idsByName(flow);
    const first = await s.api<FlowSummary>('POST', `/v1/flows/${flow.id}/publish`, {
      token: s.adminKey,
    });
    t.equal(first.status, 200);
    t.notOk('tasks' in first.body);
    t.equal(first.body.public, true);
    t.match(first.body.publicUrl, /\/p\/flows\/[A-Za-z0-9_-]{24,}$/);
    const second = await s.api<FlowSummary>('POST', `/v1/flows/${flow.id}/publish`, {
      token: s.adminKey,
    });
    t.equal(second.status, 200);
    t.equal(second.body.public, true);
    t.not(second.body.publicUrl, first.body.publicUrl, 'a fresh link each time');
    t.equal(
      (await s.api<Flow>('GET', `/v1/flows/${flow.id}`, { token: s.adminKey })).body.publicUrl,
      second.body.publicUrl,
    );
    const listed = (await s.api<FlowList>('GET', '/v1/flows', { token: s.adminKey })).body.items[0];
    t.match(listed, { public: true, publicUrl: second.body.publicUrl });

    const off = await s.api<FlowSummary>('POST', `/v1/flows/${flow.id}/unpublish`, {
      token: s.adminKey,
    });
    t.equal(off.status, 200);
    t.match(off.body, { id: flow.id, public: false, publicUrl: null });
    t.notOk('tasks' in off.body);
    t.match((await s.api('GET', `/v1/flows/${flow.id}`, { token: s.adminKey })).body, {
      public: false,
      publicUrl: null,
    });
    assertError(
      t,
      await s.api('POST', '/v1/flows/flw_missing/publish', { token: s.adminKey }),
      404,
      'NOT_FOUND',
    );
    assertError(
      t,
      await s.api('POST', '/v1/flows/flw_missing/unpublish', { token: s.adminKey }),
      404,
      'NOT_FOUND',
    );

    await ok(t, s, 'POST', `/v1/flows/${flow.id}/tasks/${id.a}/start`);
    let summary = (await s.api<FlowList>('GET', '/v1/flows', { token: s.adminKey })).body.items[0];
    t.hasStrict(
      summary,
      { taskCount: 3, doneCount: 0, readyCount: 0 },
      'in progress is neither done nor ready',
    );
    await ok(t, s, 'POST', `/v1/flows/${flow.id}/tasks/${id.a}/complete`);
    summary = (await s.api<FlowList>('GET', '/v1/flows', { token: s.adminKey })).body.items[0];
    t.hasStrict(summary, { taskCount: 3, doneCount: 1, readyCount: 1 });
    const full = (await s.api('GET', `/v1/flows/${flow.id}`, { token: s.adminKey })).body;
    t.hasStrict(full, { taskCount: 3, doneCount: 1, readyCount: 1 });
  },
);

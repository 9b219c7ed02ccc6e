import t from 'tap';
import fc from 'fast-check';
import { commandsFor, flowArb, seededFlow, symsArb } from '../../helpers/commands.ts';
import { startApp } from '../../../src/compose.ts';
import { loadConfig } from '../../../src/platform/config.ts';
import { createKey, createWorkspace } from '../../../src/services/auth/provision.ts';
import {
  assertError,
  request,
  until,
  type ApiResponse,
  type TestServer,
} from '../../helpers/server.ts';
import {
  assertUnchanged,
  taskIdOf,
  member,
  newFlow,
  ok,
  startFlowServer,
  visible,
} from '../../helpers/flows.ts';
import type { BatchResult, Command, Event, EventPage, Flow, Refusal } from '../../helpers/wire.ts';

const batch = (s: TestServer, flowId: string, body: unknown, token = s.adminKey, headers = {}) =>
  s.api<BatchResult & Refusal>('POST', `/v1/flows/${flowId}/batch`, { token, body, headers });

async function eventsAfter(s: TestServer, cursor: string, count: number): Promise<Event[]> {
  const events: Event[] = [];
  let next = cursor;
  await until(
    async () => {
      for (;;) {
        const res = await s.api<EventPage>('GET', `/v1/events?after=${next}&size=100`, {
          token: s.adminKey,
        });
        events.push(...res.body.items);
        next = res.body.next;
        if (!res.body.hasMore) return events.length;
      }
    },
    (n) => n >= count,
    30_000,
  );
  return events;
}

t.test('a batch: every command applied in one version step, events in order', async (t) => {
  const s = await startFlowServer(t);
  const alice = await member(s, 'Alice');
  const cursor = (await s.api<EventPage>('GET', '/v1/events', { token: s.adminKey })).body.next;
  const flow = await newFlow(t, s, {
    name: 'Launch',
    tasks: [{ name: 'Design' }, { name: 'Build', after: [0] }, { name: 'Release', after: [1] }],
  });
  t.equal(flow.version, 1, 'a new flow is at version 1');
  const id = taskIdOf(flow);
  const commands: Command[] = [
    { op: 'createTask', ref: 'qa', name: 'QA', estimateHours: 16, after: [id('Build')] },
    { op: 'addDependency', taskId: id('Release'), dependsOnId: '$qa' },
    { op: 'assign', taskId: '$qa', assigneeId: alice },
    { op: 'start', taskId: id('Design') },
    { op: 'complete', taskId: id('Design') },
    { op: 'updateTask', taskId: id('Build'), estimateHours: 24 },
  ];
  const res = await batch(s, flow.id, { commands, ifVersion: 1 });
  t.equal(res.status, 200, res.text);
  t.equal(res.body.version, 2, 'one version step for six commands');
  const qa = res.body.results[0]?.taskId ?? '';
  t.match(qa, /^tsk_/);
  t.strictSame(res.body.results, [
    { index: 0, taskId: qa },
    { index: 1, taskId: id('Release') },
    { index: 2, taskId: qa },
    { index: 3, taskId: id('Design') },
    { index: 4, taskId: id('Design') },
    { index: 5, taskId: id('Build') },
  ]);

  const after = await ok<Flow>(t, s, 'GET', `/v1/flows/${flow.id}`);
  t.equal(after.version, 2);
  const byId = new Map(after.tasks.map((task) => [task.id, task]));
  t.equal(byId.get(qa)?.name, 'QA');
  t.equal(byId.get(qa)?.assigneeId, alice);
  t.strictSame(byId.get(qa)?.dependsOn, [id('Build')]);
  t.strictSame(byId.get(id('Release'))?.dependsOn, [id('Build'), qa]);
  t.equal(byId.get(id('Design'))?.status, 'done');
  t.equal(byId.get(id('Build'))?.status, 'ready', 'Design done: Build ready');
  t.equal(byId.get(id('Build'))?.estimateHours, 24);
  const summary = await ok<{ items: { id: string; version: number }[] }>(t, s, 'GET', '/v1/flows');
  t.equal(summary.items.find((f) => f.id === flow.id)?.version, 2, 'the list shows it too');

  const events = await eventsAfter(s, cursor, 8);
  t.strictSame(
    events.map((e) => [e.type, (e.data as { taskId?: string }).taskId]),
    [
      ['flow.created', undefined],
      ['task.created', qa],
      ['task.updated', id('Release')],
      ['task.assigned', qa],
      ['task.started', id('Design')],
      ['task.completed', id('Design')],
      ['task.unblocked', id('Build')],
      ['task.updated', id('Build')],
    ],
    'each command’s events, in order, as if sent one by one',
  );
});

t.test(
  'a refused command: its route’s status and code with its index, nothing applied',
  async (t) => {
    const s = await startFlowServer(t);
    const flow = await newFlow(t, s, {
      name: 'Chain',
      tasks: [{ name: 'A' }, { name: 'B', after: [0] }],
    });
    const id = taskIdOf(flow);
    const before = await visible(s, [flow.id]);
    const cases: [string, Command[], number, string, number][] = [
      [
        'start of a blocked task',
        [
          { op: 'createTask', name: 'C' },
          { op: 'start', taskId: id('B') },
        ],
        409,
        'TASK_BLOCKED',
        1,
      ],
      [
        'a cycle the list itself makes',
        [
          { op: 'createTask', ref: 'c', name: 'C', after: [id('B')] },
          { op: 'addDependency', taskId: id('A'), dependsOnId: '$c' },
        ],
        400,
        'CIRCULAR_DEPENDENCY',
        1,
      ],
      [
        'a task an earlier command deleted',
        [
          { op: 'deleteTask', taskId: id('A') },
          { op: 'start', taskId: id('A') },
        ],
        404,
        'NOT_FOUND',
        1,
      ],
      [
        'completing what is not started',
        [{ op: 'complete', taskId: id('A') }],
        409,
        'INVALID_TRANSITION',
        0,
      ],
      [
        'an estimate after work started',
        [
          { op: 'start', taskId: id('A') },
          { op: 'updateTask', taskId: id('A'), estimateHours: 3 },
        ],
        409,
        'TASK_STARTED',
        1,
      ],
      ['a task of another flow', [{ op: 'start', taskId: 'tsk_nowhere' }], 404, 'NOT_FOUND', 0],
    ];
    for (const [what, commands, status, code, index] of cases) {
      const res = await batch(s, flow.id, { commands });
      assertError(t, res, status, code, what);
      t.equal(res.body.error.details.index, index, `${what}: details.index`);
      if (code === 'CIRCULAR_DEPENDENCY')
        t.match(res.body.error.message, /^Command 1 \(addDependency\): /, 'the message names it');
    }
    await assertUnchanged(t, s, before, 'refused batches');
  },
);

t.test('bad lists are 400 at the failing command’s pointer, with its index', async (t) => {
  const s = await startFlowServer(t);
  const flow = await newFlow(t, s, { name: 'Small', tasks: [{ name: 'A' }] });
  const id = taskIdOf(flow);
  const before = await visible(s, [flow.id]);
  const cases: [string, unknown, string, number | undefined][] = [
    ['no commands', { commands: [] }, '/commands', undefined],
    [
      'too many',
      { commands: Array.from({ length: 501 }, () => ({ op: 'start', taskId: id('A') })) },
      '/commands',
      undefined,
    ],
    [
      'an unknown op',
      {
        commands: [
          { op: 'start', taskId: id('A') },
          { op: 'explode', taskId: id('A') },
        ],
      },
      '/commands/1/op',
      1,
    ],
    ['no op', { commands: [{ taskId: id('A') }] }, '/commands/0/op', 0],
    [
      'a field of another op',
      { commands: [{ op: 'start', taskId: id('A'), name: 'x' }] },
      '/commands/0/name',
      0,
    ],
    [
      'a control character in a name',
      { commands: [{ op: 'createTask', name: 'a\u0007b' }] },
      '/commands/0/name',
      0,
    ],
    [
      'an update with nothing to change',
      { commands: [{ op: 'updateTask', taskId: id('A') }] },
      '/commands/0',
      0,
    ],
    [
      'a ref no earlier command made',
      {
        commands: [
          { op: 'start', taskId: '$later' },
          { op: 'createTask', ref: 'later', name: 'L' },
        ],
      },
      '/commands/0/taskId',
      0,
    ],
    [
      'a ref made twice',
      {
        commands: [
          { op: 'createTask', ref: 'x', name: 'X1' },
          { op: 'createTask', ref: 'x', name: 'X2' },
        ],
      },
      '/commands/1/ref',
      1,
    ],
    [
      'a dependency on itself',
      { commands: [{ op: 'addDependency', taskId: id('A'), dependsOnId: id('A') }] },
      '/commands/0/dependsOnId',
      0,
    ],
    [
      'an assignee who is no member',
      { commands: [{ op: 'assign', taskId: id('A'), assigneeId: 'usr_nobody' }] },
      '/commands/0/assigneeId',
      0,
    ],
    [
      'ifVersion not a version',
      { commands: [{ op: 'start', taskId: id('A') }], ifVersion: 0 },
      '/ifVersion',
      undefined,
    ],
  ];
  for (const [what, body, pointer, index] of cases) {
    const res = await batch(s, flow.id, body);
    assertError(t, res, 400, 'VALIDATION_FAILED', what);
    t.equal(res.body.error.details.errors[0]?.pointer, pointer, `${what}: pointer`);
    t.equal(res.body.error.details.index, index, `${what}: index`);
  }
  const op = await batch(s, flow.id, { commands: [{ op: 'explode' }] });
  t.match(op.body.error.details.errors[0]?.message, /^must be one of: createTask, updateTask, /);
  await assertUnchanged(t, s, before, 'bad lists');
});

t.test('ifVersion: 409 VERSION_MISMATCH naming the version, nothing applied', async (t) => {
  const s = await startFlowServer(t);
  const flow = await newFlow(t, s, { name: 'Versioned', tasks: [{ name: 'A' }] });
  const id = taskIdOf(flow);
  await ok(t, s, 'POST', `/v1/flows/${flow.id}/tasks/${id('A')}/start`);
  const before = await visible(s, [flow.id]);
  const stale = await batch(s, flow.id, {
    ifVersion: 1,
    commands: [{ op: 'complete', taskId: id('A') }],
  });
  assertError(t, stale, 409, 'VERSION_MISMATCH');
  t.strictSame(stale.body.error.details, { version: 2 });
  await assertUnchanged(t, s, before, 'a stale batch');
  const fresh = await batch(s, flow.id, {
    ifVersion: 2,
    commands: [{ op: 'complete', taskId: id('A') }],
  });
  t.equal(fresh.status, 200);
  t.equal(fresh.body.version, 3);
});

// In this thread, and on the pool's commands lane (every list sent there), alike.
for (const [where, offload] of [
  ['', {}],
  [', on the commands lane', { commandsOffloadWork: 0 }],
] as const)
  t.test(`a batch that changes nothing takes no version step${where}`, async (t) => {
    const s = await startFlowServer(t, offload);
    const alice = await member(s, 'Alice');
    const flow = await newFlow(t, s, {
      name: 'Still',
      tasks: [{ name: 'A', assigneeId: alice }],
    });
    const id = taskIdOf(flow);
    const res = await batch(s, flow.id, {
      commands: [{ op: 'assign', taskId: id('A'), assigneeId: alice }],
    });
    t.equal(res.status, 200);
    t.strictSame(res.body, { version: 1, results: [{ index: 0, taskId: id('A') }] });
    t.equal((await ok<Flow>(t, s, 'GET', `/v1/flows/${flow.id}`)).version, 1);
  });

t.test('Idempotency-Key: the same batch again is its answer replayed, applied once', async (t) => {
  const s = await startFlowServer(t);
  const flow = await newFlow(t, s, { name: 'Once', tasks: [{ name: 'A' }] });
  const body = { commands: [{ op: 'createTask', name: 'Made once' }] };
  const headers = { 'idempotency-key': 'batch-once-1' };
  const first = await batch(s, flow.id, body, s.adminKey, headers);
  t.equal(first.status, 200);
  const again = await batch(s, flow.id, body, s.adminKey, headers);
  t.equal(again.status, 200);
  t.equal(again.headers.get('idempotent-replayed'), 'true');
  t.strictSame(again.body, first.body);
  const after = await ok<Flow>(t, s, 'GET', `/v1/flows/${flow.id}`);
  t.equal(after.tasks.filter((task) => task.name === 'Made once').length, 1);
  t.equal(after.version, 2);
});

t.test('moving work needs work:write; another workspace’s flow is 404', async (t) => {
  const s = await startFlowServer(t);
  const flow = await newFlow(t, s, { name: 'Scoped', tasks: [{ name: 'A' }] });
  const id = taskIdOf(flow);
  const { key: planner } = await createKey(s.sql, {
    workspaceId: s.workspaceId,
    role: 'member',
    scopes: ['flows:read', 'flows:write'],
  });
  const before = await visible(s, [flow.id]);
  const moving = await batch(
    s,
    flow.id,
    {
      commands: [
        { op: 'createTask', name: 'B' },
        { op: 'start', taskId: id('A') },
      ],
    },
    planner,
  );
  assertError(t, moving, 403, 'INSUFFICIENT_SCOPE');
  t.strictSame(moving.body.error.details.missing, ['work:write']);
  await assertUnchanged(t, s, before, 'a batch beyond its scopes');
  const planning = await batch(
    s,
    flow.id,
    { commands: [{ op: 'createTask', name: 'B' }] },
    planner,
  );
  t.equal(planning.status, 200);

  const { key: viewer } = await createKey(s.sql, {
    workspaceId: s.workspaceId,
    role: 'viewer',
    scopes: ['flows:read', 'flows:write', 'work:write'],
  });
  assertError(
    t,
    await batch(s, flow.id, { commands: [{ op: 'createTask', name: 'C' }] }, viewer),
    403,
    'FORBIDDEN',
  );

  const { id: elsewhere } = await createWorkspace(s.sql, { name: 'Elsewhere', plan: 'pro' });
  const { key: stranger } = await createKey(s.sql, {
    workspaceId: elsewhere,
    role: 'admin',
    scopes: ['flows:read', 'flows:write', 'work:write'],
  });
  const before2 = await visible(s, [flow.id]);
  assertError(
    t,
    await batch(s, flow.id, { commands: [{ op: 'start', taskId: id('A') }] }, stranger),
    404,
    'NOT_FOUND',
  );
  await assertUnchanged(t, s, before2, 'another workspace’s batch');
});

t.test(
  'two processes racing batches on one flow: no lost update, no double transition',
  async (t) => {
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
    t.teardown(() => b.close());
    const flow = await newFlow(t, s, {
      name: 'Raced',
      tasks: [{ name: 'Gate' }, { name: 'After', after: [0] }],
    });
    const id = taskIdOf(flow);
    // Both processes hold the flow hot before the race.
    await ok(t, s, 'GET', `/v1/flows/${flow.id}`);
    t.equal(
      (await request<Flow>(b.url, 'GET', `/v1/flows/${flow.id}`, { token: s.adminKey })).status,
      200,
    );
    const ROUNDS = 12;
    const sends = Array.from({ length: ROUNDS * 2 }, (_, k) => {
      const url = k % 2 === 0 ? s.url : b.url;
      // Each makes its own task, and every one tries to start the gate: only one may.
      return request<BatchResult & Refusal>(url, 'POST', `/v1/flows/${flow.id}/batch`, {
        token: s.adminKey,
        body: {
          commands: [
            { op: 'createTask', name: `Made ${k}`, after: [id('Gate')] },
            ...(k % 3 === 0 ? [{ op: 'start', taskId: id('Gate') }] : []),
          ],
        },
      });
    });
    const answers = await Promise.all(sends);
    const taken = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status !== 200);
    for (const answer of refused) {
      assertError(t, answer, 409, 'INVALID_TRANSITION', 'a second start of the gate');
      t.equal(answer.body.error?.details.index, 1);
    }
    const starters = answers.filter((_, k) => k % 3 === 0);
    t.equal(starters.filter((a) => a.status === 200).length, 1, 'the gate started once');
    t.equal(refused.length, starters.length - 1, 'every other start refused, nothing else');
    const versions = taken.map((a) => a.body.version).sort((x, y) => x - y);
    t.strictSame(
      versions,
      Array.from({ length: taken.length }, (_, k) => 2 + k),
      'each batch its own version step',
    );
    for (const url of [s.url, b.url]) {
      const seen = await until(
        () => request<Flow>(url, 'GET', `/v1/flows/${flow.id}`, { token: s.adminKey }),
        (res) => res.body.version === 1 + taken.length,
      );
      const made = seen.body.tasks
        .filter((task) => task.name.startsWith('Made '))
        .map((task) => task.name);
      t.strictSame(
        made.sort(),
        answers
          .map((a, k) => (a.status === 200 ? `Made ${k}` : null))
          .filter((x) => x !== null)
          .sort(),
        'every taken batch’s task is there, once, in both processes',
      );
      t.equal(seen.body.tasks.find((task) => task.id === id('Gate'))?.status, 'in_progress');
    }
    const [{ n }] = await s.sql<[{ n: number }]>`
    select count(*)::int as n from outbox where data->>'taskId' = ${id('Gate')} and type = 'task.started'`;
    t.equal(n, 1, 'one task.started event for the gate');
  },
);

/** One command through its own route, its `$ref`s resolved from the tasks made before it. */
async function sendAlone(
  s: TestServer,
  flowId: string,
  command: Command,
  made: Map<string, string>,
): Promise<ApiResponse<{ id?: string }>> {
  const id = (ref: string) => (ref.startsWith('$') ? (made.get(ref.slice(1)) ?? ref) : ref);
  const tasks = `/v1/flows/${flowId}/tasks`;
  const send = (method: string, path: string, body?: unknown) =>
    s.api<{ id?: string }>(method, path, { token: s.adminKey, body });
  switch (command.op) {
    case 'createTask': {
      const { op: _op, ref, ...body } = command;
      const res = await send('POST', tasks, {
        ...body,
        ...(body.parentId !== undefined && { parentId: id(body.parentId) }),
        ...(body.after && { after: body.after.map(id) }),
        ...(body.before && { before: body.before.map(id) }),
      });
      if (ref !== undefined && res.body.id) made.set(ref, res.body.id);
      return res;
    }
    case 'updateTask': {
      const { op: _op, taskId, ...body } = command;
      return send('PATCH', `${tasks}/${id(taskId)}`, body);
    }
    case 'deleteTask':
      return send('DELETE', `${tasks}/${id(command.taskId)}`);
    case 'addDependency':
      return send('POST', `${tasks}/${id(command.taskId)}/dependencies`, {
        taskId: id(command.dependsOnId),
      });
    case 'removeDependency':
      return send(
        'DELETE',
        `${tasks}/${id(command.taskId)}/dependencies/${id(command.dependsOnId)}`,
      );
    case 'assign':
      return send('POST', `${tasks}/${id(command.taskId)}/assign`, {
        assigneeId: command.assigneeId,
      });
    default:
      return send('POST', `${tasks}/${id(command.taskId)}/${command.op}`);
  }
}

/** A flow's events after outbox id `after`, with every id of `names` read as its name. */
async function eventsOf(
  s: TestServer,
  flowId: string,
  after: number,
  names: ReadonlyMap<string, string>,
): Promise<unknown[]> {
  const rows = await s.sql<{ type: string; data: unknown }[]>`
    select type, data from outbox where flow_id = ${flowId} and id > ${after} order by id`;
  const named = (value: unknown): unknown =>
    typeof value === 'string'
      ? value === flowId
        ? 'the flow'
        : (names.get(value) ?? value)
      : Array.isArray(value)
        ? value.map(named)
        : value && typeof value === 'object'
          ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, named(v)]))
          : value;
  return rows.map((row) => [row.type, named(row.data)]);
}

t.test('a batch’s events are its commands’ events, sent one by one', async (t) => {
  const s = await startFlowServer(t);
  const alice = await member(s, 'Alice');
  let runs = 0;
  let taken = 0;
  await fc.assert(
    fc.asyncProperty(flowArb, symsArb, async (seed, syms) => {
      runs++;
      const batched = await seededFlow(t, s, seed, `Batched ${runs}`);
      const alone = await seededFlow(t, s, seed, `Alone ${runs}`);
      const [{ last }] = await s.sql<[{ last: number }]>`
        select coalesce(max(id), 0)::int as last from outbox`;
      const commands = commandsFor(syms, batched, alice);
      const res = await batch(s, batched.id, { commands });
      // Refused lists are compared with the what-if's refusals (what-if.test.ts).
      if (res.status !== 200) return;
      taken++;
      const batchedNames = new Map(batched.tasks.map((task) => [task.id, task.name]));
      res.body.results.forEach(({ index, taskId }) => {
        const command = commands[index];
        if (command?.op === 'createTask') batchedNames.set(taskId, command.name);
      });
      const aloneNames = new Map(alone.tasks.map((task) => [task.id, task.name]));
      const made = new Map<string, string>();
      for (const command of commandsFor(syms, alone, alice)) {
        const answer = await sendAlone(s, alone.id, command, made);
        t.ok(answer.status < 300, `${command.op} alone is taken as in the batch: ${answer.text}`);
        if (command.op === 'createTask' && answer.body.id)
          aloneNames.set(answer.body.id, command.name);
      }
      t.strictSame(
        await eventsOf(s, batched.id, last, batchedNames),
        await eventsOf(s, alone.id, last, aloneNames),
        'the same events in the same order',
      );
    }),
    { numRuns: 80, seed: 20261127 },
  );
  t.ok(taken > 5, `lists taken: ${taken} of ${runs}`);
});

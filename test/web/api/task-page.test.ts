import t, { type Test } from 'tap';
import { SCOPES } from '../../../src/services/auth/principal.ts';
import { createKey, createWorkspace } from '../../../src/services/auth/provision.ts';
import { createPerson, personToken } from '../../helpers/people.ts';
import { newFlow, ok, startFlowServer, taskIdOf } from '../../helpers/flows.ts';
import { assertError, until, type TestServer } from '../../helpers/server.ts';
import { announceFlowChange } from '../../../src/storage/flows.store.ts';
import type { Flow, Task, TaskPage } from '../../helpers/wire.ts';

const tasks = (flowId: string, query = '') => `/v1/flows/${flowId}/tasks${query}`;

const page = (t: Test, s: TestServer, flowId: string, query = '', token = s.adminKey) =>
  ok<TaskPage>(t, s, 'GET', tasks(flowId, query), undefined, 200, token);

/** Every task a walk by `next` meets, in the order met. */
async function walk(t: Test, s: TestServer, flowId: string, query: string): Promise<Task[]> {
  const met: Task[] = [];
  let from: number | null = 0;
  while (from !== null) {
    const at: TaskPage = await page(t, s, flowId, `?${query}&from=${from}`);
    met.push(...at.items);
    from = at.next;
  }
  return met;
}

const names = (list: { name: string }[]) => list.map((task) => task.name);

/** Design → Build → Release, and Docs on its own: the chain is critical, Docs never. */
const LAUNCH = {
  name: 'Launch',
  tasks: [
    { name: 'Design', estimateHours: 8 },
    { name: 'Build', estimateHours: 40, after: [0] },
    { name: 'Release', estimateHours: 16, after: [1] },
    { name: 'Docs', estimateHours: 8 },
  ],
};

t.test('paging: none, one, many; next walks every task once in flow order', async (t) => {
  const s = await startFlowServer(t);
  const empty = await newFlow(t, s, { name: 'Empty', tasks: [] });
  t.strictSame(await page(t, s, empty.id), {
    total: 0,
    items: [],
    version: empty.version,
    next: null,
  });

  const one = await newFlow(t, s, { name: 'One', tasks: [{ name: 'Only' }] });
  t.strictSame(await page(t, s, one.id), {
    total: 1,
    items: one.tasks,
    version: one.version,
    next: null,
  });

  const many = await newFlow(t, s, {
    name: 'Many',
    tasks: Array.from({ length: 11 }, (_, i) => ({
      name: `T${i}`,
      ...(i > 0 ? { after: [i - 1] } : {}),
    })),
  });
  const first = await page(t, s, many.id, '?size=4');
  t.equal(first.total, 11);
  t.strictSame(first.items, many.tasks.slice(0, 4), 'the Task each, as the Flow shows it');
  t.type(first.next, 'number');
  t.strictSame(await walk(t, s, many.id, 'size=4'), many.tasks, 'each task once, in flow order');
  t.strictSame(await walk(t, s, many.id, 'size=1'), many.tasks);
  t.strictSame((await page(t, s, many.id)).items, many.tasks, 'a page of 100 by default');

  // Deleting a task already read does not make the walk skip the one after the page.
  const start = await page(t, s, many.id, '?size=4');
  await ok(t, s, 'DELETE', tasks(many.id, `/${many.tasks[1]?.id}`), undefined, 204);
  const rest = await page(t, s, many.id, `?size=4&from=${start.next}`);
  t.strictSame(names(rest.items), ['T4', 'T5', 'T6', 'T7']);
  t.equal(rest.total, 10);

  // Sub-tasks are tasks of the flow, in creation order.
  const sub = await ok<Task>(
    t,
    s,
    'POST',
    tasks(one.id),
    { name: 'Part', parentId: one.tasks[0]?.id },
    201,
  );
  t.strictSame(
    (await page(t, s, one.id)).items.map((task) => task.id),
    [one.tasks[0]?.id, sub.id],
  );
});

t.test('status filters by derived status; a comma list takes several', async (t) => {
  const s = await startFlowServer(t);
  const flow = await newFlow(t, s, LAUNCH);
  const id = taskIdOf(flow);
  await ok(t, s, 'POST', tasks(flow.id, `/${id('Design')}/start`), {});
  await ok(t, s, 'POST', tasks(flow.id, `/${id('Design')}/complete`), {});
  await ok(t, s, 'POST', tasks(flow.id, `/${id('Build')}/start`), {});
  const pick = async (status: string) => {
    const got = await page(t, s, flow.id, `?status=${status}`);
    t.equal(got.total, got.items.length);
    return names(got.items);
  };
  t.strictSame(await pick('ready'), ['Docs']);
  t.strictSame(await pick('blocked'), ['Release']);
  t.strictSame(await pick('in_progress'), ['Build']);
  t.strictSame(await pick('done,blocked'), ['Design', 'Release'], 'still in flow order');
  t.strictSame(await pick('blocked,ready,in_progress,done'), names(flow.tasks));
  const paged = await page(t, s, flow.id, '?status=done,ready&size=1');
  t.strictSame([paged.total, names(paged.items)], [2, ['Design']]);
  const second = await page(t, s, flow.id, `?status=done,ready&size=1&from=${paged.next}`);
  t.strictSame([second.total, names(second.items), second.next], [2, ['Docs'], null]);
});

t.test(
  'changedSince: the tasks whose Task changed after a version, derived state included',
  async (t) => {
    const s = await startFlowServer(t);
    const flow = await newFlow(t, s, LAUNCH);
    const id = taskIdOf(flow);
    const changed = async (since: number) => {
      const got = await page(t, s, flow.id, `?changedSince=${since}`);
      t.equal(got.total, got.items.length);
      return { names: names(got.items), version: got.version, items: got.items };
    };
    const v0 = flow.version;
    t.strictSame((await changed(v0)).names, [], 'nothing changed since the version read');
    t.strictSame((await changed(0)).names, names(flow.tasks), 'every task was created after 0');

    await ok(t, s, 'POST', tasks(flow.id, `/${id('Design')}/start`), {});
    const v1 = (await changed(v0)).version;
    t.equal(v1, v0 + 1);
    t.strictSame((await changed(v0)).names, ['Design'], 'the started task, no other');

    await ok(t, s, 'POST', tasks(flow.id, `/${id('Design')}/complete`), {});
    const after = await changed(v1);
    t.strictSame(after.names, ['Design', 'Build'], 'the completed task and the one it unblocked');
    t.equal(after.items[1]?.status, 'ready');
    t.strictSame((await changed(v0)).names, ['Design', 'Build'], 'both steps since v0');
    t.strictSame((await changed(after.version)).names, []);

    // Release stays blocked, but what holds it changes when Build is done.
    await ok(t, s, 'POST', tasks(flow.id, `/${id('Build')}/start`), {});
    const v3 = (await changed(0)).version;
    await ok(t, s, 'POST', tasks(flow.id, `/${id('Build')}/complete`), {});
    t.strictSame((await changed(v3)).names, ['Build', 'Release']);

    // A new sub-task changes its objective's Task (its subtasks); a new task is listed too.
    const v4 = (await changed(0)).version;
    const part = await ok<Task>(
      t,
      s,
      'POST',
      tasks(flow.id),
      { name: 'Part', parentId: id('Docs') },
      201,
    );
    t.strictSame((await changed(v4)).names, ['Docs', 'Part']);

    // A change of the graph's shape: a dependency added, then a task deleted.
    const v5 = (await changed(0)).version;
    await ok(t, s, 'POST', tasks(flow.id, `/${id('Docs')}/dependencies`), {
      taskId: id('Release'),
    });
    t.strictSame(
      (await changed(v5)).names,
      ['Docs', 'Part'],
      'Docs now waits (blocked, so is its sub-task); the rest moved not',
    );
    const v6 = (await changed(0)).version;
    await ok(t, s, 'DELETE', tasks(flow.id, `/${part.id}`), undefined, 204);
    t.strictSame(
      (await changed(v6)).names,
      ['Docs'],
      'a deleted task is not listed; its objective is',
    );

    const both = await page(t, s, flow.id, `?changedSince=${v5}&status=blocked`);
    t.strictSame(names(both.items), ['Docs'], 'filters combine');

    // Two tasks of a day each are both critical; lengthen one and the other is critical no more.
    const pair = await newFlow(t, s, { name: 'Pair', tasks: [{ name: 'A' }, { name: 'B' }] });
    t.strictSame(
      pair.tasks.map((task) => task.criticalPath),
      [true, true],
    );
    await ok(t, s, 'PATCH', tasks(pair.id, `/${pair.tasks[0]?.id}`), { estimateHours: 40 });
    const moved = await page(t, s, pair.id, `?changedSince=${pair.version}`);
    t.strictSame(
      moved.items.map((task) => [task.name, task.criticalPath]),
      [
        ['A', true],
        ['B', false],
      ],
      'B is listed for its derived criticalPath alone',
    );
  },
);

t.test(
  'changedSince before the flow was loaded afresh lists every task, never fewer',
  async (t) => {
    const s = await startFlowServer(t);
    const flow = await newFlow(t, s, LAUNCH);
    const id = taskIdOf(flow);
    await ok(t, s, 'POST', tasks(flow.id, `/${id('Docs')}/start`), {});
    const v1 = flow.version + 1;
    t.strictSame(names((await page(t, s, flow.id, `?changedSince=${flow.version}`)).items), [
      'Docs',
    ]);
    // Another server renames the flow (no task changes): this one drops its session and loads anew.
    await s.sql`update flows set version = version + 1, name = 'Renamed' where id = ${flow.id}`;
    await announceFlowChange(s.sql, s.workspaceId, flow.id, v1 + 1);
    await until(
      () => page(t, s, flow.id, `?changedSince=${v1}`),
      (got) => got.version === v1 + 1,
    );
    t.strictSame(
      names((await page(t, s, flow.id, `?changedSince=${flow.version}`)).items),
      names(flow.tasks),
      'a version from before the load: every task, as a full read',
    );
    t.strictSame((await page(t, s, flow.id, `?changedSince=${v1}`)).total, 4);
    t.strictSame((await page(t, s, flow.id, `?changedSince=${v1 + 1}`)).items, [], 'exact after');
    await ok(t, s, 'POST', tasks(flow.id, `/${id('Design')}/start`), {});
    t.strictSame(names((await page(t, s, flow.id, `?changedSince=${v1 + 1}`)).items), ['Design']);
  },
);

t.test(
  'changedSince of a version committed by another server, not announced here yet',
  async (t) => {
    const s = await startFlowServer(t);
    const flow = await newFlow(t, s, LAUNCH);
    // Committed elsewhere; its NOTIFY is still on the way (never sent here).
    await s.sql`update flows set version = version + 1, name = 'Renamed' where id = ${flow.id}`;
    const got = await page(t, s, flow.id, `?changedSince=${flow.version + 1}`);
    t.strictSame([got.version, got.items], [flow.version + 1, []], 'read again, not refused');
    assertError(
      t,
      await s.api('GET', tasks(flow.id, `?changedSince=${flow.version + 2}`), {
        token: s.adminKey,
      }),
      400,
      'VALIDATION_FAILED',
    );
  },
);

t.test('ETag: a repeated read is 304; a change or another query is not', async (t) => {
  const s = await startFlowServer(t);
  const flow = await newFlow(t, s, LAUNCH);
  const id = taskIdOf(flow);
  const read = (query: string, tag?: string) =>
    s.api<TaskPage>('GET', tasks(flow.id, query), {
      token: s.adminKey,
      headers: tag ? { 'if-none-match': tag } : {},
    });
  const first = await read('?size=2');
  const tag = first.headers.get('etag') ?? '';
  t.equal(first.status, 200);
  t.not(tag, '');
  const again = await read('?size=2', tag);
  t.equal(again.status, 304);
  t.equal(again.text, '');
  t.equal((await read('?size=3', tag)).status, 200, 'another page has another tag');
  t.equal((await read(`?size=2&changedSince=${flow.version}`, tag)).status, 200);
  await ok(t, s, 'POST', tasks(flow.id, `/${id('Docs')}/start`), {});
  const moved = await read('?size=2', tag);
  t.equal(moved.status, 200, 'a new version answers anew');
  t.not(moved.headers.get('etag'), tag);
});

t.test('a guest with a share reads the pages; another workspace meets 404', async (t) => {
  const s = await startFlowServer(t);
  const flow: Flow = await newFlow(t, s, LAUNCH);
  const { id: home } = await createWorkspace(s.sql, { name: 'Guest home' });
  const { id: guestId } = await createPerson(s.sql, {
    email: 'gail@example.com',
    name: 'Gail Guest',
    password: 'long enough password',
    workspaceId: home,
    role: 'admin',
  });
  const guest = await personToken(s, guestId, home);
  assertError(t, await s.api('GET', tasks(flow.id), { token: guest }), 404, 'NOT_FOUND');
  await ok(t, s, 'POST', `/v1/flows/${flow.id}/shares`, { email: 'gail@example.com' }, 201);
  t.strictSame((await page(t, s, flow.id, '', guest)).items, flow.tasks);

  const elsewhere = await createWorkspace(s.sql, { name: 'Elsewhere' });
  const { key } = await createKey(s.sql, {
    workspaceId: elsewhere.id,
    role: 'admin',
    scopes: [...SCOPES],
  });
  assertError(t, await s.api('GET', tasks(flow.id), { token: key }), 404, 'NOT_FOUND');
  assertError(
    t,
    await s.api('GET', tasks(flow.id, `?changedSince=${flow.version}`), { token: key }),
    404,
    'NOT_FOUND',
  );
  assertError(t, await s.api('GET', tasks('flw_nothing'), { token: s.adminKey }), 404, 'NOT_FOUND');
});

t.test('bad query values are 400 VALIDATION_FAILED at their pointer', async (t) => {
  const s = await startFlowServer(t);
  const flow = await newFlow(t, s, LAUNCH);
  for (const [query, pointer] of [
    ['size=0', '/size'],
    ['size=1001', '/size'],
    ['size=ten', '/size'],
    ['from=-1', '/from'],
    ['from=1.5', '/from'],
    ['status=open', '/status'],
    ['status=ready,', '/status'],
    ['status=ready,,done', '/status'],
    ['status=Ready', '/status'],
    ['status=', '/status'],
    ['changedSince=-1', '/changedSince'],
    ['changedSince=x', '/changedSince'],
    [`changedSince=${flow.version + 1}`, '/changedSince'],
  ] as const) {
    const res = await s.api<{ error: { details: { errors: { pointer: string }[] } } }>(
      'GET',
      tasks(flow.id, `?${query}`),
      { token: s.adminKey },
    );
    assertError(t, res, 400, 'VALIDATION_FAILED', query);
    t.equal(res.body.error.details.errors[0]?.pointer, pointer, `${query} at ${pointer}`);
  }
  t.equal((await page(t, s, flow.id, '?size=1000')).items.length, 4, 'size 1000 is allowed');
  t.equal((await page(t, s, flow.id, '?from=1000000')).items.length, 0, 'past the end: none');
});

/**
 * Work views through HTTP (spec §2 WorkItem, §4; CONTRACT §1 ETag/304, §3 work views,
 * §4 blocking counts): objectives of every live flow of the caller's workspace, ranked by
 * what decides finish dates, with exact transitive blocking counts, cheap conditional polls
 * and no staleness after a write.
 */
import t from 'tap';
import type { Test } from 'tap';
import { SCOPES } from '../../../src/services/auth/principal.ts';
import { createKey, createWorkspace } from '../../../src/services/auth/provision.ts';
import { startApp } from '../../../src/compose.ts';
import { loadConfig } from '../../../src/platform/config.ts';
import {
  assertError,
  item,
  request,
  startTestServer,
  until,
  type ApiResponse,
  type TestServer,
} from '../../helpers/server.ts';
import { idsByName, member, newFlow, ok, startFlowServer } from '../../helpers/flows.ts';
import { personToken } from '../../helpers/people.ts';
import { rawRequest } from '../../helpers/raw.ts';
import type {
  Context,
  Flow,
  Overview,
  Refusal,
  Schedule,
  Task,
  WorkList,
} from '../../helpers/wire.ts';

type View = 'available' | 'blocked' | 'in-progress' | 'mine' | 'overview';
/** What a view answers: the overview, or a page of work items. */
type ViewBody<V extends View> = V extends 'overview' ? Overview : WorkList;

function work<V extends View, T = ViewBody<V>>(
  s: TestServer,
  view: V,
  query = '',
  token = s.adminKey,
  headers: Record<string, string> = {},
): Promise<ApiResponse<T>> {
  return s.api<T>('GET', `/v1/work/${view}${query ? `?${query}` : ''}`, { token, headers });
}

/** A view that must answer 200; its body. */
async function items<V extends View>(
  t: Test,
  s: TestServer,
  view: V,
  query = '',
  token = s.adminKey,
): Promise<ViewBody<V>> {
  const res = await work(s, view, query, token);
  t.equal(res.status, 200, `GET /v1/work/${view}?${query} → 200`);
  if (res.status !== 200) t.comment(res.text);
  return res.body;
}

const names = (body: { items: { taskName: string }[] }) => body.items.map((i) => i.taskName);

/** A workspace of its own with an admin key holding every scope. */
async function workspace(s: TestServer, name: string): Promise<{ id: string; key: string }> {
  const { id } = await createWorkspace(s.sql, { name, plan: 'pro' });
  const { key } = await createKey(s.sql, {
    workspaceId: id,
    role: 'admin',
    scopes: [...SCOPES],
    name: `${name} admin`,
  });
  return { id, key };
}

const taskPath = (flowId: string, taskId: string, action = '') =>
  `/v1/flows/${flowId}/tasks/${taskId}${action ? `/${action}` : ''}`;

async function start(t: Test, s: TestServer, flowId: string, taskId: string, token = s.adminKey) {
  return ok(t, s, 'POST', taskPath(flowId, taskId, 'start'), undefined, 200, token);
}

async function finish(t: Test, s: TestServer, flowId: string, taskId: string, token = s.adminKey) {
  await start(t, s, flowId, taskId, token);
  return ok(t, s, 'POST', taskPath(flowId, taskId, 'complete'), undefined, 200, token);
}

/** Blocking counts computed independently from a Flow: unfinished objectives reachable downstream. */
function referenceBlocking(flow: Flow): Map<string, number> {
  const objectives = flow.tasks.filter((task) => task.parentId === null);
  const dependents = new Map<string, string[]>(objectives.map((task) => [task.id, []]));
  for (const task of objectives)
    for (const dep of task.dependsOn) dependents.get(dep)!.push(task.id);
  const status = new Map(objectives.map((task) => [task.id, task.status]));
  const counts = new Map<string, number>();
  for (const task of objectives) {
    const seen = new Set<string>();
    const stack = [...dependents.get(task.id)!];
    while (stack.length) {
      const id = stack.pop()!;
      if (seen.has(id)) continue;
      seen.add(id);
      stack.push(...dependents.get(id)!);
    }
    counts.set(task.id, [...seen].filter((id) => status.get(id) !== 'done').length);
  }
  return counts;
}

/** A deterministic PRNG (mulberry32), so a failing graph can be rebuilt. */
function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

t.test(
  'available, blocked, in-progress: objectives of live flows as WorkItems, sub-tasks embedded',
  async (t) => {
    const s = await startFlowServer(t);
    const ann = await member(s, 'Ann');
    const bob = await member(s, 'Bob');
    const flow = await newFlow(t, s, {
      name: 'Launch',
      dueDate: '2099-03-15',
      tasks: [
        { name: 'A', estimateHours: 16 },
        { name: 'B', after: [0] },
        { name: 'C', after: [1], assigneeId: ann },
        { name: 'D', assigneeId: ann, estimateHours: 4 },
        { name: 'E', assigneeId: bob },
      ],
    });
    const id = idsByName(flow);
    const sub = await ok<Task>(
      t,
      s,
      'POST',
      `/v1/flows/${flow.id}/tasks`,
      { name: 'A.1', parentId: id.A, assigneeId: bob, estimateHours: 4 },
      201,
    );
    t.equal(sub.parentId, id.A);

    const available = await items(t, s, 'available');
    t.equal(available.total, 3, 'A, D and E are ready; the sub-task is not an item');
    t.strictSame(names(available), ['A', 'D', 'E'], 'A decides the finish; D and E have slack');
    const a = available.items[0];
    t.strictSame(
      a,
      {
        taskId: id.A,
        taskName: 'A',
        flowId: flow.id,
        flowName: 'Launch',
        status: 'ready',
        assigneeId: null,
        estimateHours: 16,
        criticalPath: true,
        subtasks: [
          {
            id: sub.id,
            name: 'A.1',
            done: false,
            assigneeId: bob,
            estimateHours: 4,
            estimateRange: null,
          },
        ],
      },
      'a WorkItem with its sub-tasks, no blockedBy on ready work',
    );
    t.match(available.items[1], {
      taskId: id.D,
      status: 'ready',
      assigneeId: ann,
      estimateHours: 4,
      criticalPath: false,
    });
    t.strictSame(item(available.items, 1).subtasks, [], 'D has no sub-tasks');
    t.notOk(
      available.items.some((i) => i.taskId === sub.id),
      'sub-tasks are never items',
    );

    t.strictSame(
      names(await items(t, s, 'available', `assigneeId=${ann}`)),
      ['D'],
      "assigneeId: that member's ready work only (C is blocked)",
    );
    t.strictSame(
      names(await items(t, s, 'available', `assigneeId=${bob}`)),
      ['E'],
      'a sub-task assigned to Bob does not make its objective his',
    );
    t.strictSame(
      names(await items(t, s, 'available', 'assigneeId=none')),
      ['A'],
      'assigneeId=none: unassigned ready work',
    );
    const nobody = await items(t, s, 'available', 'assigneeId=usr_nobody');
    t.strictSame(nobody, { total: 0, items: [] }, 'an unknown member has no work');

    const blocked = await items(t, s, 'blocked');
    t.strictSame(names(blocked), ['B', 'C']);
    t.strictSame(
      blocked.items[0]?.blockedBy,
      [{ taskId: id.A, taskName: 'A', blocking: 2 }],
      'A holds up B and C',
    );
    t.strictSame(blocked.items[1]?.blockedBy, [{ taskId: id.B, taskName: 'B', blocking: 1 }]);
    t.match(blocked.items[1], { status: 'blocked', assigneeId: ann, criticalPath: true });
    t.strictSame(await items(t, s, 'in-progress'), { total: 0, items: [] });

    await start(t, s, flow.id, id.D!);
    const sub2 = await ok<Task>(t, s, 'POST', taskPath(flow.id, sub.id, 'start'));
    t.equal(sub2.status, 'in_progress');
    const inProgress = await items(t, s, 'in-progress');
    t.strictSame(
      names(inProgress),
      ['A', 'D'],
      'starting a sub-task starts its objective; ranked like every list',
    );
    t.match(inProgress.items[0], { status: 'in_progress' });
    t.strictSame(
      item(inProgress.items).subtasks.map(({ id, done }) => ({ id, done })),
      [{ id: sub.id, done: false }],
      'its one open sub-task',
    );
    t.strictSame(names(await items(t, s, 'available')), ['E']);
    await ok(t, s, 'POST', taskPath(flow.id, sub.id, 'complete'));
    const afterA = await items(t, s, 'available');
    t.strictSame(names(afterA), ['B', 'E'], 'completing the last sub-task completes A: B is ready');
    t.strictSame(names(await items(t, s, 'in-progress')), ['D']);
    const stillBlocked = await items(t, s, 'blocked');
    t.strictSame(names(stillBlocked), ['C']);
    t.strictSame(stillBlocked.items[0]?.blockedBy, [{ taskId: id.B, taskName: 'B', blocking: 1 }]);
  },
);

t.test(
  'blockedBy: unfinished direct dependencies, exact transitive blocking counts, most-blocking first',
  async (t) => {
    const s = await startFlowServer(t);
    // X → P1, P2 → P3 (a diamond: P3 counts once); Y → Q; T waits on Z, Y and X, listed in that order.
    const flow = await newFlow(t, s, {
      name: 'Diamond',
      tasks: [
        { name: 'X' },
        { name: 'Y' },
        { name: 'Z' },
        { name: 'P1', after: [0] },
        { name: 'P2', after: [0] },
        { name: 'P3', after: [3, 4] },
        { name: 'Q', after: [1] },
        { name: 'T', after: [2, 1, 0] },
      ],
    });
    const id = idsByName(flow);
    const blockedOf = async (name: string) =>
      (await items(t, s, 'blocked', 'size=100')).items.find((i) => i.taskName === name)?.blockedBy;
    t.strictSame(
      await blockedOf('T'),
      [
        { taskId: id.X, taskName: 'X', blocking: 4 },
        { taskId: id.Y, taskName: 'Y', blocking: 2 },
        { taskId: id.Z, taskName: 'Z', blocking: 1 },
      ],
      'X holds up P1, P2, P3 and T (P3 once), Y holds up Q and T, Z only T',
    );
    t.strictSame(await blockedOf('P3'), [
      { taskId: id.P1, taskName: 'P1', blocking: 1 },
      { taskId: id.P2, taskName: 'P2', blocking: 1 },
    ]);

    await start(t, s, flow.id, id.Y!);
    t.strictSame(
      (await blockedOf('T'))?.map((b) => [b.taskName, b.blocking]),
      [
        ['X', 4],
        ['Y', 2],
        ['Z', 1],
      ],
      'work in progress still holds up what waits on it',
    );
    await ok(t, s, 'POST', taskPath(flow.id, id.Y!, 'complete'));
    t.strictSame(
      (await blockedOf('T'))?.map((b) => [b.taskName, b.blocking]),
      [
        ['X', 4],
        ['Z', 1],
      ],
      'a done dependency is no blocker',
    );
    await finish(t, s, flow.id, id.X!);
    t.strictSame(
      (await blockedOf('T'))?.map((b) => [b.taskName, b.blocking]),
      [['Z', 1]],
    );
    t.equal(await blockedOf('P2'), undefined, 'P1 and P2 are ready now');
    await finish(t, s, flow.id, id.P2!);
    t.strictSame(await blockedOf('P3'), [{ taskId: id.P1, taskName: 'P1', blocking: 1 }]);
  },
);

t.test('blockedBy and topBlockers agree with a reference count on random graphs', async (t) => {
  const s = await startFlowServer(t);
  const random = prng(20240611);
  const flows: Flow[] = [];
  for (let f = 0; f < 3; f++) {
    const tasks = Array.from({ length: 30 }, (_, i) => {
      const after = new Set<number>();
      if (i > 0)
        for (let k = Math.floor(random() * 4); k > 0; k--) after.add(Math.floor(random() * i));
      return {
        name: `f${f}t${i}`,
        estimateHours: 1 + Math.floor(random() * 24),
        after: [...after],
      };
    });
    const flow = await newFlow(t, s, { name: `Random ${f}`, tasks });
    // Move some work along so done and in-progress tasks are in the graph.
    for (let round = 0; round < 6; round++) {
      const current = (await s.api<Flow>('GET', `/v1/flows/${flow.id}`, { token: s.adminKey }))
        .body;
      const ready = current.tasks.filter((task) => task.status === 'ready');
      const pick = ready[Math.floor(random() * ready.length)];
      if (!pick) break;
      if (round % 3 === 2) await start(t, s, flow.id, pick.id);
      else await finish(t, s, flow.id, pick.id);
    }
    flows.push(flow);
  }
  const reference = new Map<string, number>();
  const blockedIds = new Set<string>();
  const byId = new Map<string, Task>();
  for (const flow of flows) {
    const current = (await s.api<Flow>('GET', `/v1/flows/${flow.id}`, { token: s.adminKey })).body;
    for (const [taskId, n] of referenceBlocking(current)) reference.set(taskId, n);
    for (const task of current.tasks) {
      byId.set(task.id, task);
      if (task.status === 'blocked') blockedIds.add(task.id);
    }
  }
  const blocked = await items(t, s, 'blocked', 'size=100');
  t.equal(blocked.total, blockedIds.size, 'every blocked objective is listed');
  t.strictSame(new Set(blocked.items.map((i) => i.taskId)), blockedIds);
  let checked = 0;
  for (const item of blocked.items) {
    const task = byId.get(item.taskId);
    const expected = (task?.dependsOn ?? [])
      .filter((dep: string) => byId.get(dep)?.status !== 'done')
      .map((dep: string) => ({
        taskId: dep,
        taskName: byId.get(dep)?.name,
        blocking: reference.get(dep)!,
      }));
    t.strictSame(
      new Set(item.blockedBy?.map((b) => b.taskId)),
      new Set(expected.map((e) => e.taskId)),
      `${item.taskName}: blockedBy are its unfinished dependencies`,
    );
    for (const b of item.blockedBy ?? [])
      t.equal(b.blocking, reference.get(b.taskId), `${item.taskName} ← ${b.taskName}: blocking`);
    for (let k = 1; k < (item.blockedBy?.length ?? 0); k++)
      t.ok(
        (item.blockedBy?.[k - 1]?.blocking ?? 0) >= (item.blockedBy?.[k]?.blocking ?? 0),
        `${item.taskName}: most-blocking first`,
      );
    checked++;
  }
  t.ok(checked > 20, `checked ${checked} blocked items`);
  const overview = await items(t, s, 'overview');
  const top = [...reference.entries()]
    .filter(([taskId, n]) => n > 0 && byId.get(taskId)?.status !== 'done')
    .map(([, n]) => n)
    .sort((a, b) => b - a);
  t.strictSame(
    overview.topBlockers.map((b) => b.blocking),
    top.slice(0, overview.topBlockers.length),
    'topBlockers: the most-blocking unfinished tasks, most first',
  );
  t.ok(overview.topBlockers.length >= Math.min(top.length, 5));
  for (const b of overview.topBlockers)
    t.equal(b.blocking, reference.get(b.taskId), `topBlocker ${b.taskName}`);
});

t.test(
  'ranking: critical path, then least slack, then earliest due date, then most held up',
  async (t) => {
    const s = await startFlowServer(t);

    t.test(
      'critical-path work first, ahead of an earlier due date and more work held up',
      async (t) => {
        const w = await workspace(s, 'Rule 1');
        // Soon (due first): L (5 days) decides its finish; s1 → s1a → s1b (3 days) has slack and holds up 2.
        await newFlow(
          t,
          s,
          {
            name: 'Soon',
            dueDate: '2098-01-10',
            tasks: [
              { name: 's1', estimateHours: 8 },
              { name: 's1a', estimateHours: 8, after: [0] },
              { name: 's1b', estimateHours: 8, after: [1] },
              { name: 'L', estimateHours: 40 },
            ],
          },
          w.key,
        );
        // Later: C alone is its flow's critical path and holds up nothing.
        await newFlow(
          t,
          s,
          { name: 'Later', dueDate: '2099-01-10', tasks: [{ name: 'C', estimateHours: 8 }] },
          w.key,
        );
        const body = await items(t, s, 'available', '', w.key);
        t.strictSame(names(body), ['L', 'C', 's1']);
        t.strictSame(
          body.items.map((i) => i.criticalPath),
          [true, true, false],
        );
      },
    );

    t.test('least slack next, ahead of an earlier due date and more work held up', async (t) => {
      const w = await workspace(s, 'Rule 2');
      // P (due first): N3 → N3a → N3b is 3 days beside a 5-day M: slack 2, holds up 2.
      await newFlow(
        t,
        s,
        {
          name: 'P',
          dueDate: '2098-01-10',
          tasks: [
            { name: 'M', estimateHours: 40 },
            { name: 'N3', estimateHours: 8 },
            { name: 'N3a', estimateHours: 8, after: [1] },
            { name: 'N3b', estimateHours: 8, after: [2] },
          ],
        },
        w.key,
      );
      // Q (due later): N1 → N1a is 4 days beside a 5-day M2: slack 1, holds up 1.
      await newFlow(
        t,
        s,
        {
          name: 'Q',
          dueDate: '2099-01-10',
          tasks: [
            { name: 'N1', estimateHours: 8 },
            { name: 'N1a', estimateHours: 24, after: [0] },
            { name: 'M2', estimateHours: 40 },
          ],
        },
        w.key,
      );
      t.strictSame(names(await items(t, s, 'available', '', w.key)), ['M', 'M2', 'N1', 'N3']);
    });

    t.test(
      'earliest flow due date next (no due date last), ahead of more work held up',
      async (t) => {
        const w = await workspace(s, 'Rule 3');
        // Created in the reverse of the expected order, each task alone on its flow's critical path.
        await newFlow(
          t,
          s,
          {
            name: 'NoDue',
            tasks: [
              { name: 'X' },
              { name: 'x1', after: [0] },
              { name: 'x2', after: [1] },
              { name: 'x3', after: [2] },
            ],
          },
          w.key,
        );
        await newFlow(
          t,
          s,
          {
            name: 'Late',
            dueDate: '2099-06-01T12:00:00Z',
            tasks: [{ name: 'Y' }, { name: 'y1', after: [0] }],
          },
          w.key,
        );
        await newFlow(
          t,
          s,
          { name: 'Early', dueDate: '2098-06-01', tasks: [{ name: 'Z' }] },
          w.key,
        );
        const body = await items(t, s, 'available', '', w.key);
        t.strictSame(names(body), ['Z', 'Y', 'X']);
        t.ok(body.items.every((i) => i.criticalPath));
        t.strictSame(
          names(await items(t, s, 'blocked', '', w.key)),
          ['y1', 'x1', 'x2', 'x3'],
          'blocked work ranks the same way',
        );
      },
    );

    t.test(
      'most work held up last, within one flow and across flows due the same day',
      async (t) => {
        const w = await workspace(s, 'Rule 4');
        const due = '2099-01-10';
        // Two 3-day chains, both critical: B1 (2 days) → B2 holds up 1; A1 → A2 → A3 holds up 2. B1 comes first in the array.
        await newFlow(
          t,
          s,
          {
            name: 'Two chains',
            dueDate: due,
            tasks: [
              { name: 'B1', estimateHours: 16 },
              { name: 'B2', estimateHours: 8, after: [0] },
              { name: 'A1', estimateHours: 8 },
              { name: 'A2', estimateHours: 8, after: [2] },
              { name: 'A3', estimateHours: 8, after: [3] },
            ],
          },
          w.key,
        );
        await newFlow(
          t,
          s,
          { name: 'Single', dueDate: due, tasks: [{ name: 'E1', estimateHours: 8 }] },
          w.key,
        );
        await newFlow(
          t,
          s,
          {
            name: 'Long',
            dueDate: due,
            tasks: [
              { name: 'G1' },
              { name: 'G2', after: [0] },
              { name: 'G3', after: [1] },
              { name: 'G4', after: [2] },
            ],
          },
          w.key,
        );
        const body = await items(t, s, 'available', '', w.key);
        t.strictSame(names(body), ['G1', 'A1', 'B1', 'E1']);
        t.ok(
          body.items.every((i) => i.criticalPath),
          'all critical, all with zero slack, all due the same day',
        );

        t.test('size, from and total page through the ranked list', async (t) => {
          t.strictSame(names(await items(t, s, 'available', 'size=2', w.key)), ['G1', 'A1']);
          const second = await items(t, s, 'available', 'size=2&from=2', w.key);
          t.strictSame(second.total, 4);
          t.strictSame(names(second), ['B1', 'E1']);
          t.strictSame(
            await items(t, s, 'available', 'size=3&from=4', w.key),
            { total: 4, items: [] },
            'past the end: no items, same total',
          );
          t.strictSame(names(await items(t, s, 'available', 'size=100&from=3', w.key)), ['E1']);
          t.equal((await items(t, s, 'blocked', 'size=1', w.key)).total, 6);
          for (const view of ['available', 'blocked', 'in-progress'] as const) {
            for (const query of ['size=0', 'size=101', 'from=-1', 'size=abc']) {
              assertError(
                t,
                await work(s, view, query, w.key),
                400,
                'VALIDATION_FAILED',
                `${view}?${query}`,
              );
            }
          }
        });
      },
    );
  },
);

t.test(
  "/mine: a person token's ready and in-progress work; an API key is pointed to assigneeId",
  async (t) => {
    const s = await startFlowServer(t);
    const ann = await member(s, 'Ann');
    const bob = await member(s, 'Bob');
    const flow = await newFlow(t, s, {
      name: 'Mine',
      tasks: [
        { name: 'ready', assigneeId: ann, estimateHours: 40 },
        { name: 'started', assigneeId: ann },
        { name: 'waiting', assigneeId: ann, after: [0] },
        { name: 'finished', assigneeId: ann },
        { name: 'bobs', assigneeId: bob },
        { name: 'nobodys' },
      ],
    });
    const other = await newFlow(t, s, {
      name: 'Other',
      dueDate: '2099-01-01',
      tasks: [{ name: 'elsewhere', assigneeId: ann }],
    });
    const id = idsByName(flow);
    await start(t, s, flow.id, id.started!);
    await finish(t, s, flow.id, id.finished!);

    const annToken = await personToken(s, ann);
    const me = await s.api<Context>('GET', '/v1/me', { token: annToken });
    t.equal(me.body.userId, ann, 'the token acts as Ann');
    const mine = await items(t, s, 'mine', '', annToken);
    // elsewhere and ready are both critical; elsewhere's flow is due first, ready's has no due date; started has slack.
    t.strictSame(
      names(mine),
      ['elsewhere', 'ready', 'started'],
      'ready and in-progress work assigned to Ann across flows, ranked',
    );
    t.strictSame(
      mine.items.map((i) => i.status),
      ['ready', 'ready', 'in_progress'],
    );
    t.ok(mine.items.every((i) => i.assigneeId === ann));
    t.equal(mine.total, 3);
    t.strictSame(names(await items(t, s, 'mine', 'size=1&from=1', annToken)), ['ready']);
    assertError(t, await work(s, 'mine', 'size=0', annToken), 400, 'VALIDATION_FAILED');
    t.strictSame(names(await items(t, s, 'mine', '', await personToken(s, bob))), ['bobs']);

    const viaKey = await work<'mine', Refusal>(s, 'mine');
    assertError(t, viaKey, 403, 'FORBIDDEN', 'an API key has no work of its own');
    t.match(viaKey.body.error.message, '/v1/work/available?assigneeId=');
    const conditional = await work(s, 'mine', '', s.adminKey, { 'if-none-match': '*' });
    assertError(t, conditional, 403, 'FORBIDDEN', 'a conditional poll is refused the same way');
    t.strictSame(
      names(await items(t, s, 'available', `assigneeId=${ann}`)),
      ['elsewhere', 'ready'],
      'what the message points to',
    );

    // The person's view follows writes like every other.
    await start(t, s, other.id, idsByName(other).elsewhere!, annToken);
    const moved = await items(t, s, 'mine', '', annToken);
    t.strictSame(names(moved), ['elsewhere', 'ready', 'started']);
    t.strictSame(
      moved.items.map((i) => i.status),
      ['in_progress', 'ready', 'in_progress'],
    );
  },
);

t.test("never an archived flow, never another workspace's", async (t) => {
  const s = await startFlowServer(t);
  const keep = await newFlow(t, s, {
    name: 'Keep',
    tasks: [{ name: 'k' }, { name: 'k2', after: [0] }],
  });
  const gone = await newFlow(t, s, {
    name: 'Gone',
    tasks: [{ name: 'g' }, { name: 'g2', after: [0] }, { name: 'g3' }],
  });
  await start(t, s, gone.id, idsByName(gone).g3!);
  const w = await workspace(s, 'Elsewhere');
  const theirs = await newFlow(
    t,
    s,
    { name: 'Theirs', tasks: [{ name: 'z' }, { name: 'z2', after: [0] }] },
    w.key,
  );

  // Both critical, no due dates, each holding up one: the older flow first.
  t.strictSame(names(await items(t, s, 'available')), ['k', 'g']);
  t.strictSame(
    names(await items(t, s, 'available', '', w.key)),
    ['z'],
    'the other workspace sees only its own',
  );
  t.strictSame(names(await items(t, s, 'blocked', '', w.key)), ['z2']);
  t.strictSame(
    (await items(t, s, 'overview', '', w.key)).flows.map((f) => f.flowId),
    [theirs.id],
  );

  const before = await work(s, 'available');
  t.equal((await s.api('DELETE', `/v1/flows/${gone.id}`, { token: s.adminKey })).status, 204);
  const after = await work(s, 'available');
  t.strictSame(names(after.body), ['k'], "an archived flow's items leave at the next poll");
  t.not(after.headers.get('etag'), before.headers.get('etag'));
  t.strictSame(names(await items(t, s, 'blocked')), ['k2']);
  t.strictSame(await items(t, s, 'in-progress'), { total: 0, items: [] });
  const overview = await items(t, s, 'overview');
  t.strictSame(
    overview.flows.map((f) => f.flowId),
    [keep.id],
  );
  t.strictSame(overview.counts, { available: 1, blocked: 1, inProgress: 0, done: 0 });
  t.notOk(overview.topBlockers.some((b) => b.flowId === gone.id));

  await ok(t, s, 'POST', `/v1/flows/${gone.id}/restore`);
  t.strictSame(names(await items(t, s, 'available')), ['k', 'g'], 'restore brings them back');
  t.strictSame(names(await items(t, s, 'in-progress')), ['g3']);
  t.strictSame(
    names(await items(t, s, 'available', '', w.key)),
    ['z'],
    'still nothing of the other workspace',
  );

  // Another workspace's task ids do not leak through assigneeId or paging either.
  t.equal(
    (await items(t, s, 'available', 'size=100')).items.some((i) => i.flowId === theirs.id),
    false,
  );
});

t.test('/overview: counts over objectives, flows at a glance, top blockers', async (t) => {
  const s = await startFlowServer(t);
  const ahead = await newFlow(t, s, {
    name: 'Ahead',
    dueDate: '2099-01-01',
    tasks: [
      { name: 'A', estimateHours: 16 },
      { name: 'B', after: [0] },
      { name: 'C', after: [1] },
      { name: 'D' },
      { name: 'E' },
    ],
  });
  const idA = idsByName(ahead);
  await ok(t, s, 'POST', `/v1/flows/${ahead.id}/tasks`, { name: 'A.1', parentId: idA.A }, 201);
  await ok(t, s, 'POST', `/v1/flows/${ahead.id}/tasks`, { name: 'A.2', parentId: idA.A }, 201);
  await start(t, s, ahead.id, idA.D!);
  await finish(t, s, ahead.id, idA.E!);
  const behind = await newFlow(t, s, {
    name: 'Behind',
    dueDate: '2020-01-01',
    tasks: [{ name: 'x' }, { name: 'y', after: [0] }],
  });
  const open = await newFlow(t, s, { name: 'Open', tasks: [{ name: 'o' }] });
  const closed = await newFlow(t, s, {
    name: 'Closed',
    dueDate: '2099-01-01',
    tasks: [{ name: 'c' }],
  });
  await finish(t, s, closed.id, idsByName(closed).c!);

  const res = await work(s, 'overview');
  t.equal(res.status, 200);
  t.ok(res.headers.get('etag'));
  const body = res.body;
  t.strictSame(
    body.counts,
    { available: 3, blocked: 3, inProgress: 1, done: 2 },
    'objectives only: A, x, o ready; B, C, y blocked; D started; E, c done',
  );
  const flows = new Map(body.flows.map((f) => [f.flowId, f]));
  t.equal(flows.size, 4);
  const schedule = async (flowId: string) =>
    (await s.api<Schedule>('GET', `/v1/flows/${flowId}/schedule`, { token: s.adminKey })).body;
  for (const flow of [ahead, behind, open, closed]) {
    const row = flows.get(flow.id);
    if (!row) throw new Error(`no work row for ${flow.name}`);
    const sched = await schedule(flow.id);
    t.equal(row.flowName, flow.name);
    t.equal(row.dueDate, flow.dueDate);
    t.equal(
      row.projectedFinish,
      sched.projectedFinish,
      `${flow.name}: projectedFinish as the schedule says`,
    );
    t.equal(row.onTrack, sched.onTrack, `${flow.name}: onTrack as the schedule says`);
  }
  t.hasStrict(flows.get(ahead.id), { readyCount: 1, blockedCount: 2, onTrack: true });
  t.hasStrict(flows.get(behind.id), { readyCount: 1, blockedCount: 1, onTrack: false });
  t.hasStrict(flows.get(open.id), { readyCount: 1, blockedCount: 0, onTrack: null, dueDate: null });
  t.hasStrict(flows.get(closed.id), { readyCount: 0, blockedCount: 0, projectedFinish: null });
  t.type(flows.get(ahead.id)?.projectedFinish, 'string');
  t.equal(body.topBlockers.length, 3, 'only unfinished tasks that hold something up');
  t.strictSame(
    body.topBlockers[0],
    { taskId: idA.A, taskName: 'A', flowId: ahead.id, blocking: 2 },
    'A holds up most',
  );
  t.strictSame(
    new Set(body.topBlockers.slice(1).map((b) => `${b.taskName}:${b.blocking}`)),
    new Set(['B:1', 'x:1']),
  );

  const etag = res.headers.get('etag')!;
  const again = await work(s, 'overview', '', s.adminKey, { 'if-none-match': etag });
  t.equal(again.status, 304);
  t.equal(again.text, '');
  await start(t, s, behind.id, idsByName(behind).x!);
  const changed = await work(s, 'overview', '', s.adminKey, { 'if-none-match': etag });
  t.equal(changed.status, 200, 'a write anywhere changes the overview');
  t.strictSame(changed.body.counts, { available: 2, blocked: 3, inProgress: 2, done: 2 });
});

t.test(
  'ETag and If-None-Match: 304 without a body and without spending the rate budget; writes show at once',
  async (t) => {
    // A budget that barely refills, so X-RateLimit-Remaining moves only when a request spends.
    const s = await startTestServer(t, { rateLimitPerMinute: 1, rateLimitBurst: 1000 });
    const flow = await newFlow(t, s, {
      name: 'Polled',
      tasks: [{ name: 'a' }, { name: 'b', after: [0] }, { name: 'c' }],
    });
    const id = idsByName(flow);
    const w = await workspace(s, 'Quiet');
    await newFlow(t, s, { name: 'Still', tasks: [{ name: 'q' }] }, w.key);

    const first = await work(s, 'available');
    t.equal(first.status, 200);
    const etag = first.headers.get('etag')!;
    t.match(etag, /^"[^"]+"$/, 'a strong ETag');
    t.equal(first.headers.get('vary'), 'Authorization, Accept');
    const remaining = Number(first.headers.get('x-ratelimit-remaining'));

    const second = await work(s, 'available');
    t.equal(second.headers.get('etag'), etag, 'unchanged workspace, same tag');
    t.equal(second.text, first.text, 'and the same bytes');
    t.equal(Number(second.headers.get('x-ratelimit-remaining')), remaining - 1, 'a 200 spends one');

    for (let i = 0; i < 5; i++) {
      const res = await work(s, 'available', '', s.adminKey, { 'if-none-match': etag });
      t.equal(res.status, 304, `conditional poll ${i} → 304`);
      t.equal(res.text, '', 'no body');
      t.equal(res.headers.get('etag'), etag);
      t.equal(
        Number(res.headers.get('x-ratelimit-remaining')),
        remaining - 1,
        'the budget is untouched',
      );
    }
    t.equal(
      (await work(s, 'available', '', s.adminKey, { 'if-none-match': `W/${etag}` })).status,
      304,
      'weak comparison for If-None-Match',
    );
    t.equal(
      (await work(s, 'available', '', s.adminKey, { 'if-none-match': `"other", ${etag}` })).status,
      304,
      'a list of tags',
    );
    const otherPage = await work(s, 'available', 'size=1', s.adminKey, { 'if-none-match': etag });
    t.equal(otherPage.status, 200, 'another page has another tag');
    t.not(otherPage.headers.get('etag'), etag);
    const blocked = await work(s, 'blocked', '', s.adminKey, { 'if-none-match': etag });
    t.equal(blocked.status, 200, 'another view has another tag');
    const otherTag = (await work(s, 'available', '', w.key)).headers.get('etag')!;
    t.equal((await work(s, 'available', '', w.key, { 'if-none-match': otherTag })).status, 304);

    // A write in the flow: the very next poll has a new tag and shows it (no staleness).
    await start(t, s, flow.id, id.c!);
    const afterWrite = await work(s, 'available', '', s.adminKey, { 'if-none-match': etag });
    t.equal(afterWrite.status, 200, 'the next conditional poll after a write is a 200');
    t.not(afterWrite.headers.get('etag'), etag);
    t.strictSame(names(afterWrite.body), ['a'], 'and shows the change');
    t.strictSame(names(await items(t, s, 'in-progress')), ['c']);
    t.equal(
      (await work(s, 'available', '', w.key, { 'if-none-match': otherTag })).status,
      304,
      "another workspace's tag is untouched by the write",
    );

    // A write that leaves this page's content alone still moves the tag (it is a version, not a hash).
    const tag2 = afterWrite.headers.get('etag')!;
    await ok(t, s, 'POST', taskPath(flow.id, id.c!, 'complete'));
    const afterComplete = await work(s, 'available', '', s.adminKey, { 'if-none-match': tag2 });
    t.equal(afterComplete.status, 200);
    t.strictSame(names(afterComplete.body), ['a']);

    // A write in the other workspace moves only its own tag.
    const tag3 = afterComplete.headers.get('etag')!;
    await newFlow(t, s, { name: 'Another', tasks: [{ name: 'r' }] }, w.key);
    t.equal(
      (await work(s, 'available', '', s.adminKey, { 'if-none-match': tag3 })).status,
      304,
      'our tag survives their write',
    );
    t.equal(
      (await work(s, 'available', '', w.key, { 'if-none-match': otherTag })).status,
      200,
      'their tag moved',
    );
  },
);

t.test(
  'an assigneeId of any characters never reaches a response header: no header injected, the ETag a valid value that answers 304',
  async (t) => {
    const s = await startFlowServer(t);
    // Control characters are no id (refused 400 at /assigneeId); printable oddities are asked for.
    const hostile = ['\r\nX-Injected: 1', 'a\nb', '\u0012\u0005\u0001', '"quoted"\\', 'é ש', 'a b'];
    for (const view of ['available', 'blocked', 'in-progress'] as const) {
      for (const assigneeId of hostile) {
        const target = `/v1/work/${view}?assigneeId=${encodeURIComponent(assigneeId)}`;
        const raw = await rawRequest(
          s.app.port,
          `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${s.adminKey}\r\nConnection: close\r\n\r\n`,
          10_000,
        );
        t.notOk('x-injected' in raw.headers, `${target}: no header of the client's making`);
        if (/[\u0000-\u001f]/.test(assigneeId)) {
          t.equal(raw.status, 400, `${target} → 400`);
          continue;
        }
        t.equal(raw.status, 200, `${target} → 200`);
        const etag = raw.headers.etag ?? '';
        t.match(
          etag,
          /^"[\x21\x23-\x7e]+"$/,
          `${target}: the ETag is an entity tag of visible characters (RFC 9110 §8.8.3)`,
        );
        // fetch refuses a response with a control character in a header outright.
        const res = await work(
          s,
          view,
          `assigneeId=${encodeURIComponent(assigneeId)}`,
          s.adminKey,
          { 'if-none-match': etag },
        );
        t.equal(res.status, 304, `${target}: its ETag answers a conditional poll`);
      }
    }
    const one = (await work(s, 'available', `assigneeId=${encodeURIComponent('a"b')}`)).headers.get(
      'etag',
    );
    const other = (
      await work(s, 'available', `assigneeId=${encodeURIComponent('a b')}`)
    ).headers.get('etag');
    t.not(one, other, 'two assignees, two tags');
  },
);

t.test(
  'a write committed by another process shows at the next poll after its notification',
  async (t) => {
    const s = await startFlowServer(t);
    const flow = await newFlow(t, s, {
      name: 'Shared',
      tasks: [{ name: 'a' }, { name: 'b', after: [0] }],
    });
    const id = idsByName(flow);
    const first = await work(s, 'available');
    t.strictSame(names(first.body), ['a']);
    const etag = first.headers.get('etag')!;

    const otherApp = await startApp(
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
    t.teardown(() => otherApp.close());
    const res = await request(otherApp.url, 'POST', taskPath(flow.id, id.a!, 'start'), {
      token: s.adminKey,
    });
    t.equal(res.status, 200, 'started through the other process');
    const seen = await until(
      () => work(s, 'available', '', s.adminKey, { 'if-none-match': etag }),
      (poll) => poll.status === 200,
    );
    t.strictSame(names(seen.body), [], 'seen at a poll after the notification');
    t.strictSame(names(await items(t, s, 'in-progress')), ['a']);
  },
);

/** Every live objective of a workspace as the ranking sees it, fully sorted: the reference merged pages must equal. */
async function referenceRanking(s: TestServer, workspaceId: string) {
  const ids = await s.sql<
    { id: string }[]
  >`select id from flows where workspace_id = ${workspaceId} and not archived order by created_at, id`;
  const rows = [];
  for (const [position, { id }] of ids.entries()) {
    const snapshot = await s.app.services.registry.snapshot(workspaceId, id);
    const blocking = referenceBlocking(
      (await s.api<Flow>('GET', `/v1/flows/${id}`, { token: s.adminKey })).body,
    );
    const due = snapshot.flow.dueDate
      ? Date.parse(snapshot.flow.dueDate)
      : Number.POSITIVE_INFINITY;
    for (const [i, task] of snapshot.state.tasks.entries()) {
      if (task.parentId !== null) continue;
      rows.push({
        taskId: task.id,
        assigneeId: task.assigneeId,
        status: ['blocked', 'ready', 'in_progress', 'done'][snapshot.status[i]!]!,
        critical: snapshot.critical[i]!,
        slack: snapshot.slack[i]!,
        due,
        blocking: blocking.get(task.id)!,
        position,
        i,
      });
    }
  }
  // Critical first, least slack, earliest due date, most held up; then oldest flow, then task position.
  return rows.sort(
    (a, b) =>
      b.critical - a.critical ||
      a.slack - b.slack ||
      (a.due === b.due ? 0 : a.due < b.due ? -1 : 1) ||
      b.blocking - a.blocking ||
      a.position - b.position ||
      a.i - b.i,
  );
}

t.test(
  'merged pages equal a full sort of every objective, on random workspaces under random writes',
  async (t) => {
    const s = await startFlowServer(t);
    const random = prng(7_2026);
    const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
    const people = [await member(s, 'Ann'), await member(s, 'Bob')];
    const annToken = await personToken(s, people[0]!);
    const dues = [undefined, undefined, '2098-03-01', '2098-03-01', '2099-01-01'];
    const flowIds: string[] = [];
    const archived: string[] = [];
    const createFlow = async (f: number) => {
      const tasks = Array.from({ length: 4 + Math.floor(random() * 10) }, (_, i) => {
        const after = new Set<number>();
        if (i > 0)
          for (let k = Math.floor(random() * 3); k > 0; k--) after.add(Math.floor(random() * i));
        const assigneeId = pick([null, ...people]);
        return {
          name: `f${f}t${i}`,
          estimateHours: random() < 0.2 ? undefined : 1 + Math.floor(random() * 30),
          ...(assigneeId ? { assigneeId } : {}),
          after: [...after],
        };
      });
      const due = pick(dues);
      flowIds.push(
        (await newFlow(t, s, { name: `Random ${f}`, ...(due ? { dueDate: due } : {}), tasks })).id,
      );
    };
    for (let f = 0; f < 8; f++) await createFlow(f);

    const views = ['available', 'blocked', 'in-progress'] as const;
    const statusesOf = {
      available: ['ready'],
      blocked: ['blocked'],
      'in-progress': ['in_progress'],
      mine: ['ready', 'in_progress'],
    };
    const pages = [
      [0, 25],
      [0, 3],
      [2, 4],
      [5, 100],
      [40, 10],
    ] as const;
    const check = async (round: number) => {
      const reference = await referenceRanking(s, s.workspaceId);
      const cases = [
        ...views.flatMap((view) =>
          [undefined, 'none', ...people].map((assigneeId) => ({
            view,
            assigneeId,
            token: s.adminKey,
          })),
        ),
        { view: 'mine' as const, assigneeId: people[0], token: annToken },
      ];
      let compared = 0;
      for (const { view, assigneeId, token } of cases) {
        const wanted = assigneeId === 'none' ? null : assigneeId;
        const expected = reference.filter(
          (row) =>
            statusesOf[view].includes(row.status) &&
            (assigneeId === undefined || row.assigneeId === wanted),
        );
        for (const [from, size] of pages) {
          const query = `from=${from}&size=${size}${assigneeId && view !== 'mine' ? `&assigneeId=${assigneeId}` : ''}`;
          const body = await items(t, s, view, query, token);
          const same =
            body.total === expected.length &&
            JSON.stringify(body.items.map((i) => i.taskId)) ===
              JSON.stringify(expected.slice(from, from + size).map((row) => row.taskId));
          if (!same)
            t.fail(`round ${round}: ${view}?${query} differs from the full sort`, {
              found: body.items.map((i) => i.taskId),
              wanted: expected.slice(from, from + size).map((row) => row.taskId),
            });
          compared++;
        }
      }
      t.pass(`round ${round}: ${compared} pages equal the full sort`);
    };

    await check(0);
    for (let round = 1; round <= 6; round++) {
      for (let w = 0; w < 6; w++) {
        const flowId = pick(flowIds);
        const flow = (await s.api<Flow>('GET', `/v1/flows/${flowId}`, { token: s.adminKey })).body;
        const objectives = flow.tasks.filter((task) => task.parentId === null);
        const ready = objectives.filter((task) => task.status === 'ready');
        const started = objectives.filter((task) => task.status === 'in_progress');
        const move = random();
        if (move < 0.3 && ready.length)
          await ok(t, s, 'POST', `/v1/flows/${flowId}/tasks/${pick(ready).id}/start`);
        else if (move < 0.5 && started.length)
          await ok(t, s, 'POST', `/v1/flows/${flowId}/tasks/${pick(started).id}/complete`);
        else if (move < 0.7)
          await ok(t, s, 'POST', `/v1/flows/${flowId}/tasks/${pick(objectives).id}/assign`, {
            assigneeId: pick([null, ...people]),
          });
        else if (move < 0.8)
          await ok(t, s, 'PATCH', `/v1/flows/${flowId}`, { dueDate: pick(dues) ?? null });
        else if (move < 0.85)
          await ok(
            t,
            s,
            'POST',
            `/v1/flows/${flowId}/tasks`,
            { name: `added ${round}.${w}`, estimateHours: 8, after: [pick(objectives).id] },
            201,
          );
        else if (move < 0.9 && flowIds.length > 3) {
          await ok(t, s, 'DELETE', `/v1/flows/${flowId}`, undefined, 204);
          flowIds.splice(flowIds.indexOf(flowId), 1);
          archived.push(flowId);
        } else if (move < 0.95 && archived.length) {
          const back = archived.shift()!;
          await ok(t, s, 'POST', `/v1/flows/${back}/restore`);
          flowIds.push(back);
        } else await createFlow(100 + round * 10 + w);
      }
      await check(round);
    }
  },
);

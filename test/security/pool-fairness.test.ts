/**
 * One workspace must not starve another of the worker pool or the event loop (issue 51, items
 * 2 and 3): a flood of forecasts is served in turn with another workspace's, and refused past
 * the flooder's share (429), never the other's (503); a large forecast, what-if or batch spends
 * rate budget by its size, of the credential's and of the workspace's, so minting keys buys no
 * more; one workspace runs at most WHAT_IF_CONCURRENCY what-ifs at once; and while a 20,000-task
 * flow's large what-if and batch run, another workspace's requests find the event loop free.
 */
import t from 'tap';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { SCOPES } from '../../src/contract/vocabulary.ts';
import { createKey, createWorkspace } from '../../src/services/auth/provision.ts';
import { createFlow } from '../../src/services/flows/flows.service.ts';
import type { ForecastView } from '../../src/services/flows/forecast.ts';
import { newFlow } from '../helpers/flows.ts';
import { createPerson, personToken } from '../helpers/people.ts';
import {
  assertError,
  item,
  startTestServer,
  until,
  type ApiResponse,
  type TestServer,
} from '../helpers/server.ts';
import type { BatchResult, Flow, Refusal, WhatIf } from '../helpers/wire.ts';

/** Budgets no test here reaches, where budgets are not what a test is about. */
const UNBOUNDED = {
  rateLimitPerMinute: 1_000_000,
  rateLimitBurst: 1_000_000,
  workspaceBudgetPerMinute: 1_000_000,
  workspaceBudgetBurst: 1_000_000,
};

/**
 * `chains` chains of 100 tasks: task i waits on task i − chains, so the last `chains` tasks are
 * the leaves. Chain 0's tasks take 16 hours (2 days), every other's 8 (1 day): chain 0 alone is
 * critical, and deleting another chain's leaf moves no other task. Ranged: each estimate may run
 * from half of it to twice it.
 */
function chains(name: string, count: number, ranged = false) {
  return {
    name,
    tasks: Array.from({ length: count * 100 }, (_, i) => {
      const hours = i % count === 0 ? 16 : 8;
      return {
        name: `T${i}`,
        estimateHours: hours,
        ...(ranged && { estimateRange: { low: hours / 2, high: hours * 2 } }),
        ...(i >= count && { after: [i - count] }),
      };
    }),
  };
}

/** Another workspace, with an admin key of every scope. */
async function otherWorkspace(s: TestServer, name: string): Promise<{ id: string; key: string }> {
  const { id } = await createWorkspace(s.sql, { name });
  const { key } = await createKey(s.sql, { workspaceId: id, role: 'admin', scopes: [...SCOPES] });
  return { id, key };
}

const forecast = (s: TestServer, token: string, flowId: string, query: string) =>
  s.api<ForecastView & Refusal>('GET', `/v1/flows/${flowId}/forecast?${query}`, { token });

const post = <T>(s: TestServer, token: string, flowId: string, what: string, body: unknown) =>
  s.api<T & Refusal>('POST', `/v1/flows/${flowId}/${what}`, { token, body });

const remaining = (res: ApiResponse) => Number(res.headers.get('x-ratelimit-remaining'));

t.test(
  'one workspace floods the pool with forecasts: another’s forecast is served in turn, the flooder refused past its share',
  async (t) => {
    // One worker: the order in which parts start is the pool's order alone.
    const s = await startTestServer(t, { ...UNBOUNDED, workers: 1 });
    const pool = s.app.services.pool;
    const flooder = await newFlow(t, s, chains('Flood', 10, true));
    const other = await otherWorkspace(s, 'Patient');
    const small = await newFlow(t, s, chains('Small', 3, true), other.key);
    // The patient workspace's flow is loaded (and its forecast model built) beforehand.
    t.equal((await forecast(s, other.key, small.id, 'samples=100&seed=1')).status, 200);

    // 1,000 open tasks × 12,000 samples: 12 million schedules, three parts of 4 million each.
    // WORKERS=1 admits 16 runs, half of them (8) one workspace's: the other 8 are refused.
    let flooderAnswered = 0;
    const flood = Array.from({ length: 16 }, (_, i) =>
      forecast(s, s.adminKey, flooder.id, `samples=12000&seed=${i}`).then((res) => {
        flooderAnswered++;
        return res;
      }),
    );
    // Every flood request has been admitted to the pool or answered (a refusal, at once).
    await until(
      async () => flooderAnswered + pool.stats().inFlight,
      (n) => n === 16,
    );
    const outstanding = 16 - flooderAnswered;
    t.ok(outstanding >= 6, `most of the flood waits on the pool (${outstanding} forecasts)`);
    const answeredBefore = flooderAnswered;
    // 300 open tasks × 2,000 samples: 600,000 schedules, one part, on the pool.
    const patient = await forecast(s, other.key, small.id, 'samples=2000&seed=2');
    t.equal(patient.status, 200, 'served, not refused as saturated');
    // Its part started as soon as the part running when it came ended: served in turn, at most
    // one more of the flooder's parts ended meanwhile (and its forecast with it, were that its
    // last part; the part it was waiting on, two). First come, first served would have made
    // it wait for every outstanding part of the flood.
    t.ok(
      flooderAnswered - answeredBefore <= 2,
      `the patient forecast answered ahead of the flood (${flooderAnswered - answeredBefore} of ${outstanding} flood forecasts answered before it)`,
    );
    const answers = await Promise.all(flood);
    const statuses = answers.map((res) => res.status).sort();
    t.strictSame(statuses, [...Array(8).fill(200), ...Array(8).fill(429)], 'eight in, eight out');
    const refused = item(answers.filter((res) => res.status === 429));
    assertError(t, refused, 429, 'RATE_LIMITED');
    t.match(refused.body.error.message, /its share of the pool/);
    t.equal(refused.headers.get('retry-after'), '1');
    t.equal(pool.stats().inFlight, 0, 'nothing left on the pool');
  },
);

t.test(
  'budgets charge by size: large forecasts, what-ifs and batches spend more than one token, of the credential’s and the workspace’s budget',
  async (t) => {
    // A credential's budget large enough for everything here; its workspace's, 40 at once.
    const s = await startTestServer(t, {
      rateLimitPerMinute: 1,
      rateLimitBurst: 1000,
      workspaceBudgetPerMinute: 1,
      workspaceBudgetBurst: 40,
    });
    const key = s.adminKey;
    const flow = await newFlow(t, s, chains('Budget', 20, true));
    const copy = await newFlow(t, s, chains('Budget copy', 20, true));
    // A flow with a sub-task under its first task: 2,001 tasks.
    const shaped = await newFlow(t, s, chains('Shapes', 20));
    const [a, b, c] = shaped.tasks.map((task) => task.id);
    const sub = await s.api<{ id: string }>('POST', `/v1/flows/${shaped.id}/tasks`, {
      token: key,
      body: { name: 'Existing sub', parentId: a, estimateHours: 2 },
    });
    t.equal(sub.status, 201, sub.text.slice(0, 300));

    // Each request below costs what it leaves off the one before's remaining budget.
    // 25 estimates changed (the graph keeps its shape): 25 × 200 = 5,000 task derivations, the
    // request alone.
    const estimates = flow.tasks
      .slice(0, 25)
      .map((task) => ({ op: 'updateTask', taskId: task.id, estimateHours: 10 }));
    const cheap = await post<WhatIf>(s, key, flow.id, 'what-if', { commands: estimates });
    t.equal(cheap.status, 200, cheap.text.slice(0, 300));
    // 19 leaves deleted, each deletion deriving the flow's 2,000 tasks again: 38,000, one more
    // token (one per 25,000).
    const deletions = (f: Flow) =>
      f.tasks.slice(-19).map((task) => ({ op: 'deleteTask', taskId: task.id }));
    const costly = await post<WhatIf>(s, key, flow.id, 'what-if', { commands: deletions(flow) });
    t.equal(costly.status, 200, costly.text.slice(0, 300));
    t.equal(remaining(cheap) - remaining(costly), 2, 'the what-if of 19 deletions spent 2');
    const batch = await post<BatchResult>(s, key, copy.id, 'batch', {
      commands: deletions(copy),
    });
    t.equal(batch.status, 200, batch.text.slice(0, 300));
    t.equal(remaining(costly) - remaining(batch), 2, 'the batch of the same spent 2');

    // Each kind of command that changes the graph's shape counts the flow's tasks, the flow
    // growing by each task made: a sub-task made (2,002), changed by its ref (2,002), the
    // existing sub-task changed (2,002), a task made before another (2,003), a dependency added
    // and removed (2,003 each), the sub-task deleted (2,003); an estimate changed, 200.
    // 3 × 2,002 + 4 × 2,003 + 200 = 14,218: the request alone.
    const shapes = [
      { op: 'createTask', ref: 'sub', name: 'Sub', parentId: a, estimateHours: 2 },
      { op: 'updateTask', taskId: '$sub', estimateHours: 3 },
      { op: 'updateTask', taskId: sub.body.id, estimateHours: 3 },
      { op: 'createTask', name: 'Early', before: [b], estimateHours: 1 },
      { op: 'addDependency', taskId: c, dependsOnId: b },
      { op: 'removeDependency', taskId: c, dependsOnId: b },
      { op: 'deleteTask', taskId: '$sub' },
      { op: 'updateTask', taskId: c, estimateHours: 9 },
    ];
    const once = await post<WhatIf>(s, key, shaped.id, 'what-if', { commands: shapes });
    t.equal(once.status, 200, once.text.slice(0, 300));
    t.equal(remaining(batch) - remaining(once), 1, 'the eight commands cost the request alone');
    // Six more pairs of a dependency added and removed: 12 × 2,003 = 24,036 more, 38,254 in all.
    const pairs = Array.from({ length: 6 }, () => [
      { op: 'addDependency', taskId: c, dependsOnId: b },
      { op: 'removeDependency', taskId: c, dependsOnId: b },
    ]).flat();
    const more = await post<WhatIf>(s, key, shaped.id, 'what-if', {
      commands: [...shapes, ...pairs],
    });
    t.equal(more.status, 200, more.text.slice(0, 300));
    t.equal(remaining(once) - remaining(more), 2, 'past 25,000: one more token');

    // 2,000 open tasks × 5,000 samples: 10 million schedules, ten more tokens (one per million).
    const first = await forecast(s, key, flow.id, 'samples=5000&seed=1');
    t.equal(first.status, 200, first.text.slice(0, 300));
    t.equal(remaining(more) - remaining(first), 11, 'the large forecast spent 11');
    // The workspace has spent 1 + 1 + 1 + 10 = 13 of its 40: two more such forecasts leave 7.
    for (const seed of [2, 3])
      t.equal((await forecast(s, key, flow.id, `samples=5000&seed=${seed}`)).status, 200);

    // A second key of the same workspace: its own budget is full, the workspace's is not.
    const { key: second } = await createKey(s.sql, {
      workspaceId: s.workspaceId,
      role: 'viewer',
      scopes: ['flows:read'],
    });
    const refused = await forecast(s, second, flow.id, 'samples=5000&seed=4');
    assertError(t, refused, 429, 'RATE_LIMITED', 'the workspace’s share is spent');
    t.match(refused.body.error.message, /This workspace's budget for costly requests is spent/);
    t.match(refused.body.error.details, { limit: 1, burst: 40 });
    // 3 short of 10, at 1 a minute: minutes, not a second.
    t.ok(Number(refused.headers.get('retry-after')) > 60, 'Retry-After until the 10 are there');
    t.equal(remaining(refused), 999, 'the key spent the request alone: the rest was given back');
    // What is not costly spends nothing of the workspace's budget.
    t.equal((await forecast(s, second, flow.id, 'samples=100&seed=4')).status, 200);
    t.equal(
      (await post<WhatIf>(s, second, flow.id, 'what-if', { commands: estimates })).status,
      200,
    );
    // Another workspace's budget is its own.
    const other = await otherWorkspace(s, 'Elsewhere');
    const theirs = await newFlow(t, s, chains('Theirs', 20, true), other.key);
    t.equal((await forecast(s, other.key, theirs.id, 'samples=5000&seed=1')).status, 200);
  },
);

t.test(
  'a guest’s costly forecast of a shared flow spends the guest’s own workspace’s budget, not the sharing one’s',
  async (t) => {
    const s = await startTestServer(t, {
      rateLimitPerMinute: 1,
      rateLimitBurst: 1000,
      workspaceBudgetPerMinute: 1,
      workspaceBudgetBurst: 15,
    });
    const shared = await newFlow(t, s, chains('Shared', 20, true));
    const { id: home } = await createWorkspace(s.sql, { name: 'Guest home' });
    const { id: guestId } = await createPerson(s.sql, {
      email: 'gus@example.com',
      name: 'Gus Guest',
      password: 'long enough password',
      workspaceId: home,
      role: 'admin',
    });
    const guest = await personToken(s, guestId, home);
    const share = await s.api('POST', `/v1/flows/${shared.id}/shares`, {
      token: s.adminKey,
      body: { email: 'gus@example.com', role: 'viewer' },
    });
    t.equal(share.status, 201, share.text.slice(0, 300));
    // 2,000 open tasks × 5,000 samples: ten tokens past the first, of a budget of 15.
    const costly = (token: string, seed: number) =>
      forecast(s, token, shared.id, `samples=5000&seed=${seed}`);
    t.equal((await costly(guest, 1)).status, 200, 'the guest’s first: 10 of its home’s 15');
    t.equal((await costly(s.adminKey, 2)).status, 200, 'the sharing workspace’s 15 are whole');
    assertError(t, await costly(guest, 3), 429, 'RATE_LIMITED', 'the guest’s home has 5 left');
  },
);

t.test(
  'a workspace runs at most WHAT_IF_CONCURRENCY what-ifs at once; the next is 429, another workspace’s goes ahead',
  async (t) => {
    const s = await startTestServer(t, { ...UNBOUNDED, whatIfConcurrency: 1 });
    const pool = s.app.services.pool;
    // 10,000 tasks; deleting 99 chains' leaves is 990,000 task derivations: on the commands lane,
    // for a second or more.
    const flow = await newFlow(t, s, chains('Held', 100));
    const deletions = flow.tasks.slice(-99).map((task) => ({ op: 'deleteTask', taskId: task.id }));
    const held = post<WhatIf>(s, s.adminKey, flow.id, 'what-if', { commands: deletions });
    await until(
      async () => pool.commandsStats().inFlight,
      (n) => n === 1,
    );
    const next = await post<WhatIf>(s, s.adminKey, flow.id, 'what-if', {
      commands: [{ op: 'updateTask', taskId: item(flow.tasks).id, estimateHours: 1 }],
    });
    assertError(t, next, 429, 'RATE_LIMITED');
    t.match(next.body.error.message, /at most 1 at once \(WHAT_IF_CONCURRENCY\)/);
    t.equal(next.headers.get('retry-after'), '1');
    const other = await otherWorkspace(s, 'Neighbour');
    const theirs = await newFlow(t, s, chains('Theirs', 2), other.key);
    const alongside = await post<WhatIf>(s, other.key, theirs.id, 'what-if', {
      commands: [{ op: 'updateTask', taskId: item(theirs.tasks).id, estimateHours: 1 }],
    });
    t.equal(alongside.status, 200, 'another workspace’s what-if is not held up');
    const answer = await held;
    t.equal(answer.status, 200, answer.text.slice(0, 300));
    // Deleting leaves of chains other than the critical one moves nothing else.
    t.strictSame(
      answer.body.changed.map((change) => [change.taskId, change.after ?? null]),
      deletions.map((command) => [command.taskId, null]),
      'each deleted task, and nothing else',
    );
    t.equal(pool.commandsStats().completed, 1, 'it ran on the commands lane');
    const again = await post<WhatIf>(s, s.adminKey, flow.id, 'what-if', {
      commands: [{ op: 'updateTask', taskId: item(flow.tasks).id, estimateHours: 1 }],
    });
    t.equal(again.status, 200, 'the place is free again');
  },
);

/**
 * Another workspace's requests, round after round until `running` settles (and `rounds` at
 * least), with the event loop's delay meanwhile, in ms.
 */
async function lagWhile(
  s: TestServer,
  key: string,
  flowId: string,
  running: Promise<unknown>,
  rounds = 1,
): Promise<{ p99: number; max: number; rounds: number }> {
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  let done = false;
  void running.finally(() => (done = true));
  let made = 0;
  while (!done || made < rounds) {
    const [me, schedule] = await Promise.all([
      s.api('GET', '/v1/me', { token: key }),
      s.api('GET', `/v1/flows/${flowId}/schedule`, { token: key }),
    ]);
    if (me.status !== 200 || schedule.status !== 200)
      throw new Error(`the other workspace was refused: ${me.text} ${schedule.text}`);
    made++;
  }
  await running;
  delay.disable();
  return { p99: delay.percentile(99) / 1e6, max: delay.max / 1e6, rounds: made };
}

t.test(
  'a 20,000-task flow’s large what-if and batch leave the event loop free for another workspace',
  async (t) => {
    const s = await startTestServer(t, UNBOUNDED);
    const { auth, registry, sql, pool } = s.app.services;
    const principal = await auth.authenticate(`Bearer ${s.adminKey}`);
    // 200 chains of 100: 20,000 tasks (more than one call may create: made through the service).
    const large = await createFlow({ sql, registry, principal }, chains('Large', 200));
    const leaves = large.state.tasks.slice(-200);
    const deletions = leaves.slice(1, 101).map((task) => ({ op: 'deleteTask', taskId: task.id }));
    const other = await otherWorkspace(s, 'Bystander');
    const small = await newFlow(t, s, chains('Bystander', 2), other.key);
    const ranged = await newFlow(t, s, chains('Ranged', 10, true));

    // The baseline: the bystander's requests while a worker is as busy as the lists below keep
    // one (1,000 tasks × 40,000 samples, a forecast's parts on the pool), on the same machine
    // under the same load, this thread only waiting on it. Taken before the lists and after
    // them, and the lesser of the two kept: a collection of the garbage the 20,000 tasks' making
    // left can fall in one of them.
    const busyWorker = async (seed: number) => {
      const busy = forecast(s, s.adminKey, ranged.id, `samples=40000&seed=${seed}`);
      const lag = await lagWhile(s, other.key, small.id, busy);
      t.equal((await busy).status, 200);
      return lag;
    };
    const before = await busyWorker(1);
    // 100 deletions of a 20,000-task flow: two million task derivations, on the commands lane.
    const lanesBefore = pool.commandsStats().completed;
    const asked = post<WhatIf>(s, s.adminKey, large.flow.id, 'what-if', { commands: deletions });
    const duringWhatIf = await lagWhile(s, other.key, small.id, asked);
    const whatIf = await asked;
    t.equal(whatIf.status, 200, whatIf.text.slice(0, 300));
    t.equal(whatIf.body.changed.length, 100, 'the deleted tasks, and nothing else');
    t.equal(pool.commandsStats().completed, lanesBefore + 1, 'it ran on the commands lane');
    // The same as a batch: the list on the lane, what it changed committed in the flow's session.
    const sent = post<BatchResult>(s, s.adminKey, large.flow.id, 'batch', { commands: deletions });
    const duringBatch = await lagWhile(s, other.key, small.id, sent);
    t.equal((await sent).status, 200, (await sent).text.slice(0, 300));
    // Growing the flow by 500 tasks in one batch: 500 × 200 = 100,000 task derivations, the lane.
    const grown = post<BatchResult>(s, s.adminKey, large.flow.id, 'batch', {
      commands: Array.from({ length: 500 }, (_, i) => ({
        op: 'createTask',
        name: `New ${i}`,
        estimateHours: 8,
        after: [item(leaves).id],
      })),
    });
    const duringGrowth = await lagWhile(s, other.key, small.id, grown);
    t.equal((await grown).status, 200, (await grown).text.slice(0, 300));
    const after = await busyWorker(2);
    const baseline = { p99: Math.min(before.p99, after.p99), max: Math.min(before.max, after.max) };

    // Before this change the what-if held the event loop 130-200 ms at a time (a p99 of the
    // delay of 128 ms measured with it), the batch once for 7 s, and the 500 tasks' batch some
    // 100 to 400 ms. Now the lists run in a worker, and this thread only cuts the flow into
    // slices (about 2 ms each) and derives a batch's outcome once (about 15 ms here, idle). The
    // bound is the same test's baseline, measured on the same machine under the same load with
    // a worker as busy, plus 50 ms: on a loaded 2-core machine a busy worker and the machine's
    // load delay this thread in both alike, and one long pause (a collection) moves a p99 of
    // hundreds of samples by nothing. Where the load alone delays the baseline past 50 ms (a
    // p99 of 127 ms was measured at a load of 22 on 2 cores), every delay grows with it: there
    // the bound is twice the baseline. Either way the old what-if (a p99 of 128 ms beside a
    // baseline of about 20) fails it. The longest pause, which a p99 does not see (the batch's
    // 7 s was one), gets more room still: three times the baseline's longest and 150 ms, for a
    // collection of this heap's old generation that may fall in one phase and not another.
    for (const [what, lag] of [
      ['the what-if', duringWhatIf],
      ['the batch', duringBatch],
      ['the growth', duringGrowth],
    ] as const) {
      const figures = `p99 ${lag.p99.toFixed(1)} ms, longest ${lag.max.toFixed(1)} ms (baseline ${baseline.p99.toFixed(1)} and ${baseline.max.toFixed(1)} ms), over ${lag.rounds} rounds of requests`;
      t.ok(
        lag.p99 <= Math.max(baseline.p99 + 50, 2 * baseline.p99),
        `while ${what} ran, the delay's ${figures}`,
      );
      t.ok(
        lag.max <= 3 * baseline.max + 150,
        `while ${what} ran, no pause past the bound: ${figures}`,
      );
    }
  },
);

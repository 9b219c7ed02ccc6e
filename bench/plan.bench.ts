/**
 * `npm run bench:plan` (issue 32): through HTTP, on a 10k-task and a 100k-task flow, a what-if of
 * 10 commands in three mixes: `local` (estimates, assignments and tasks added among the last 1%
 * of tasks: few tasks follow them), `wide` (the same anywhere, with an early task started and
 * completed: most of the flow moves, and the answer lists thousands of tasks; `changedTasksP50`),
 * `wideWithNewDependency` (one dependency added, which changes the graph's shape: the scenario
 * is derived in full), interleaved; the local mix alone, request after request
 * (`whatIf10LocalAlone`); and a 100-command batch (committed: Postgres included). Beside them, a plain
 * copy-and-recompute of the same flow (a deep copy of its tasks, derived whole), the baseline a
 * what-if must beat. Memory: the heap and buffers a what-if allocates (measured from a
 * collected heap to its answer, no collection in between) and what it leaves behind after one.
 * Then large lists on a 20,000-task flow beside another workspace's requests (`large`). Run with
 * --expose-gc. Prints one JSON line: { name, machine, transport, offloadTasks, runs, large }.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { SCOPES } from '../src/contract/vocabulary.ts';
import { createKey, createWorkspace } from '../src/services/auth/provision.ts';
import { createFlow } from '../src/services/flows/flows.service.ts';
import { STATUS_READY } from '../src/engine/status.ts';
import { benchDatabase, benchFlowBody, machine, quantile, startBenchApp } from './support.ts';

const database = await benchDatabase('plan');
const app = await startBenchApp(database.url);
const authorization = `Bearer ${app.demo?.key ?? ''}`;
const headers = { authorization, 'content-type': 'application/json' };
const { sql, registry, auth } = app.services;

const summary = (values: number[]) => ({
  p50Ms: quantile(values, 0.5),
  p99Ms: quantile(values, 0.99),
  n: values.length,
});

async function post(path: string, body: unknown): Promise<{ ms: number; json: any }> {
  const started = performance.now();
  const response = await fetch(app.url + path, {
    method: 'POST',
    headers,
    body: JSON.stringify(body),
  });
  const json = await response.json();
  const ms = performance.now() - started;
  if (!response.ok) throw new Error(`POST ${path}: ${response.status} ${JSON.stringify(json)}`);
  return { ms, json };
}

const heapMB = () => {
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return (heapUsed + arrayBuffers) / 2 ** 20;
};

/**
 * A collected heap, buffers included: V8 frees the memory of collected ArrayBuffers a moment
 * after the collection, so a reading taken at once went on falling during the next request
 * (and a request on a 100k-task flow read as allocating minus 50 MB).
 */
async function settle(): Promise<void> {
  globalThis.gc?.();
  await new Promise((resolve) => setTimeout(resolve, 50));
  globalThis.gc?.();
}

let seed = 7;
const pick = (list: readonly string[]): string => {
  seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
  return list[seed % list.length] ?? '';
};

/** Ten commands: a ready task to start and complete, blocked ones (never moved) for the rest. */
function commands(
  tasks: string[],
  ready: string[],
  assignee: string | null,
  newDependency: boolean,
  pool: 'local' | 'wide' = 'wide',
) {
  // Starting and completing an early task moves what follows it: not in a local list.
  const mover = ready.length > 0 && pool !== 'local' ? pick(ready) : null;
  const list: unknown[] = [
    { op: 'updateTask', taskId: pick(tasks), estimateHours: 80 },
    { op: 'updateTask', taskId: pick(tasks), estimateHours: 2 },
    { op: 'updateTask', taskId: pick(tasks), estimateHours: 24 },
    { op: 'assign', taskId: pick(tasks), assigneeId: assignee },
    ...(mover
      ? [
          { op: 'start', taskId: mover },
          { op: 'complete', taskId: mover },
        ]
      : [
          { op: 'updateTask', taskId: pick(tasks), estimateHours: 12 },
          { op: 'updateTask', taskId: pick(tasks), estimateHours: 6 },
        ]),
    { op: 'createTask', ref: 'a', name: 'Added A', estimateHours: 16, after: [pick(tasks)] },
    { op: 'createTask', ref: 'b', name: 'Added B', estimateHours: 8, after: ['$a'] },
    { op: 'updateTask', taskId: '$b', estimateHours: 40 },
  ];
  // A dependency from the last task on the first: a change of the graph's shape.
  list.push(
    newDependency
      ? { op: 'addDependency', taskId: tasks[tasks.length - 1], dependsOnId: tasks[0] }
      : { op: 'assign', taskId: pick(tasks), assigneeId: null },
  );
  return list;
}

async function run(n: number, repeats: number) {
  const principal = await auth.authenticate(authorization);
  const snapshot = await createFlow(
    { sql, registry, principal },
    benchFlowBody(n, 'Plan bench flow'),
  );
  const flowId = snapshot.flow.id;
  const ready = snapshot.state.tasks.flatMap((task, i) =>
    snapshot.status[i] === STATUS_READY ? [task.id] : [],
  );
  const tasks = snapshot.state.tasks.flatMap((task, i) =>
    snapshot.status[i] === STATUS_READY ? [] : [task.id],
  );
  const [member] = await sql<{ userId: string }[]>`select user_id from memberships
    where workspace_id = ${principal.workspaceId} limit 1`;
  // Without a member to assign, the assignments unassign (and change nothing).
  const assignee = member?.userId ?? null;
  const path = `/v1/flows/${flowId}/what-if`;
  // Warm: the engine's state for incremental derivation is built on first use.
  for (let i = 0; i < 5; i++)
    await post(path, { commands: commands(tasks, ready, assignee, false) });

  // Where the commands land: `wide` anywhere (an estimate moves most of what follows, and the
  // answer lists thousands of tasks), `local` among the last 1% of tasks (a few follow them).
  const late = tasks.slice(-Math.ceil(tasks.length / 100));
  const mixes: Record<
    string,
    { pool: string[]; dependency: boolean; ms: number[]; allocatedMB: number[]; changed: number[] }
  > = {
    local: { pool: late, dependency: false, ms: [], allocatedMB: [], changed: [] },
    wide: { pool: tasks, dependency: false, ms: [], allocatedMB: [], changed: [] },
    wideWithNewDependency: { pool: tasks, dependency: true, ms: [], allocatedMB: [], changed: [] },
  };
  /** A fresh list of ten commands in a mix. */
  const bodyOf = (into: { pool: string[]; dependency: boolean }) => ({
    commands: commands(
      into.pool,
      ready,
      assignee,
      into.dependency,
      into.pool === late ? 'local' : 'wide',
    ),
  });
  for (let i = 0; i < repeats; i++) {
    for (const into of Object.values(mixes)) {
      const body = bodyOf(into);
      const { ms, json } = await post(path, body);
      into.ms.push(ms);
      into.changed.push(json.changed.length);
    }
  }
  // The local mix again, request after request: the interleaved figures above include the
  // collections of the wide mixes' answers (thousands of tasks each), this one does not.
  const alone: number[] = [];
  for (let i = 0; i < repeats; i++) {
    const { ms } = await post(path, { commands: commands(late, ready, assignee, false, 'local') });
    alone.push(ms);
  }
  // Memory apart from time: a collection just before a request made it slower by several ms.
  for (let i = 0; i < 10; i++) {
    for (const into of Object.values(mixes)) {
      const body = bodyOf(into);
      await settle();
      const before = heapMB();
      await post(path, body);
      into.allocatedMB.push(heapMB() - before);
    }
  }
  await settle();
  const settled = heapMB();
  await post(path, { commands: commands(late, ready, assignee, false, 'local') });
  // The answer's send buffers are let go a moment after it is sent.
  await new Promise((resolve) => setTimeout(resolve, 2000));
  await settle();
  const retainedMB = heapMB() - settled;

  // The baseline: copy the whole flow and derive it whole, as a what-if without sharing would.
  const copies: number[] = [];
  const copyMB: number[] = [];
  const current = (await registry.get(principal.workspaceId, flowId)).snapshot;
  for (let i = 0; i < Math.min(repeats, 20); i++) {
    await settle();
    const before = heapMB();
    const started = performance.now();
    await registry.derive(structuredClone(current.state));
    copies.push(performance.now() - started);
    copyMB.push(heapMB() - before);
  }

  // Batches of 100 commands, each committed: ten rounds of the shape-keeping mix.
  const batches: number[] = [];
  for (let i = 0; i < Math.min(repeats, 30); i++) {
    const list = Array.from({ length: 10 }, (_, k) =>
      (
        commands(tasks, ready, assignee, false) as {
          op: string;
          ref?: string;
          after?: string[];
          taskId?: string;
        }[]
      ).map((c) => ({
        ...c,
        ...(c.ref && { ref: `${c.ref}${i}_${k}` }),
        ...(c.after?.[0] === '$a' && { after: [`$a${i}_${k}`] }),
        ...(c.taskId === '$b' && { taskId: `$b${i}_${k}` }),
      })),
    ).flat();
    // Start/complete of a task already done by an earlier round is refused: use each round's ready list anew.
    const moves = new Set<string>();
    const filtered = list.filter((c) => {
      if (c.op !== 'start' && c.op !== 'complete') return true;
      const key = `${c.op}:${c.taskId}`;
      if (moves.has(key)) return false;
      moves.add(key);
      return true;
    });
    const res = await post(`/v1/flows/${flowId}/batch`, { commands: filtered });
    batches.push(res.ms);
    // What is ready now, for the next round's start and complete.
    const now = (await registry.get(principal.workspaceId, flowId)).snapshot;
    ready.splice(
      0,
      ready.length,
      ...now.state.tasks.flatMap((task, i) => (now.status[i] === STATUS_READY ? [task.id] : [])),
    );
    // A task that may move from now on takes no more estimates (refused once started).
    const movable = new Set(ready);
    tasks.splice(0, tasks.length, ...tasks.filter((id) => !movable.has(id)));
  }
  const mb = (values: number[]) => Number(quantile(values, 0.5).toFixed(2));
  return {
    tasks: n,
    whatIf10: Object.fromEntries(
      Object.entries(mixes).map(([mix, { ms, allocatedMB, changed }]) => [
        mix,
        {
          ...summary(ms),
          allocatedMBp50: mb(allocatedMB),
          changedTasksP50: quantile(changed, 0.5),
        },
      ]),
    ),
    whatIf10LocalAlone: summary(alone),
    whatIfRetainedMB: Number(retainedMB.toFixed(2)),
    copyAndRecompute: { ...summary(copies), allocatedMBp50: mb(copyMB) },
    batch100: summary(batches),
  };
}

/**
 * Large lists on a 20,000-task flow (issue 51, item 3): a what-if of 250 deletions (the tasks
 * picked across the flow, their dependents bridged), the same as a batch, and a batch growing
 * the flow by 500 tasks; each timed, with the event loop's delay and another workspace's
 * `GET /v1/me` meanwhile (one after another, as fast as it answers).
 */
async function largeLists() {
  const principal = await auth.authenticate(authorization);
  const snapshot = await createFlow(
    { sql, registry, principal },
    benchFlowBody(20_000, 'Large lists'),
  );
  const flowId = snapshot.flow.id;
  const ids = snapshot.state.tasks.map((task) => task.id);
  const { id: workspaceId } = await createWorkspace(sql, { name: 'Bystander' });
  const { key } = await createKey(sql, { workspaceId, role: 'admin', scopes: [...SCOPES] });
  const bystander = { authorization: `Bearer ${key}` };
  const measured = async (path: string, body: unknown) => {
    const lag = monitorEventLoopDelay({ resolution: 1 });
    lag.enable();
    let running = true;
    const list = post(path, body).finally(() => (running = false));
    const me: number[] = [];
    while (running) {
      const started = performance.now();
      await (await fetch(`${app.url}/v1/me`, { headers: bystander })).arrayBuffer();
      me.push(performance.now() - started);
    }
    const { ms } = await list;
    lag.disable();
    return {
      ms: Number(ms.toFixed(1)),
      eventLoopDelayP99Ms: Number((lag.percentile(99) / 1e6).toFixed(2)),
      eventLoopDelayMaxMs: Number((lag.max / 1e6).toFixed(2)),
      otherMeP50Ms: quantile(me, 0.5),
      otherMeMaxMs: quantile(me, 1),
    };
  };
  const deletions = Array.from({ length: 250 }, (_, i) => ({
    op: 'deleteTask',
    taskId: ids[i * 80 + 40],
  }));
  return {
    tasks: 20_000,
    whatIf250Deletions: await measured(`/v1/flows/${flowId}/what-if`, { commands: deletions }),
    batch250Deletions: await measured(`/v1/flows/${flowId}/batch`, { commands: deletions }),
    batch500Additions: await measured(`/v1/flows/${flowId}/batch`, {
      commands: Array.from({ length: 500 }, (_, i) => ({
        op: 'createTask',
        name: `Added ${i}`,
        estimateHours: 8,
        // Odd positions: none of them was deleted (those were 40, 120, …).
        after: [ids[i * 40 + 1]],
      })),
    }),
  };
}

const runs = [await run(10_000, 200), await run(100_000, 40)];
const large = await largeLists();
process.stdout.write(
  `${JSON.stringify({
    name: 'plan',
    machine: machine(),
    transport: app.transport,
    offloadTasks: app.services.config.offloadTasks,
    runs,
    large,
  })}\n`,
);
await app.close();
await database.drop();
process.exit(0);

/**
 * `npm run bench:flow-ops`: on a 10k-task and a 100k-task flow, the latency of start and
 * complete through HTTP (Postgres commit and derivation included), of adding a task after a
 * ready one (a change of the graph's shape), of the first GET after a
 * write with the task bytes it serialized anew (flowplan_flow_json_task_bytes_total), and of a
 * repeated GET of the flow, which must not recompute (checked with the recompute counter of
 * /metrics). Also the heap a hot session holds (run with --expose-gc). Each flow is measured
 * as a deployed service holds it after a restart: the app is started again once the flow is
 * made, and its first read loads the flow from Postgres.
 * BENCH_SIZES picks the flow sizes (default `10000,100000`).
 * Prints one JSON line: { name, machine, offloadTasks, runs: [{ tasks, sessionHeapMB, start,
 * complete, addTask, get: {…, recomputes}, getAfterWrite }] }.
 */
import { createFlow } from '../src/services/flows/flows.service.ts';
import { STATUS_READY } from '../src/engine/status.ts';
import { MAX_TASKS_PER_CALL } from '../src/contract/flow.schema.ts';
import { benchDatabase, benchFlowBody, machine, quantile, startBenchApp } from './support.ts';

const TRANSITIONS = 200;
const GETS = 300;

const summary = (values: number[]) => ({
  p50Ms: quantile(values, 0.5),
  p99Ms: quantile(values, 0.99),
});

const database = await benchDatabase('flow-ops');
let app = await startBenchApp(database.url);
const headers = { authorization: `Bearer ${app.demo!.key}`, 'content-type': 'application/json' };

async function call(
  method: string,
  path: string,
  body?: unknown,
): Promise<{ ms: number; json: any }> {
  const started = performance.now();
  const response = await fetch(app.url + path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await response.json();
  const ms = performance.now() - started;
  if (!response.ok)
    throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
  return { ms, json };
}

/** The sum of a metric's series on /metrics (every label set), served on a port of its own. */
async function metric(name: string): Promise<number> {
  const text = await (await fetch(app.metricsUrl)).text();
  const values = [...text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\d+)`, 'gm'))].map((m) =>
    Number(m[1]),
  );
  return values.reduce((sum, n) => sum + n, 0);
}
// Recomputes in this thread and on the pool (label `where`) together.
const recomputes = () => metric('flowplan_recompute_duration_seconds_count');

/** Heap plus buffers in use after a full collection (needs --expose-gc; null without it). */
function heapMB(): number | null {
  if (!globalThis.gc) return null;
  globalThis.gc();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return (heapUsed + arrayBuffers) / 2 ** 20;
}

/**
 * The least of a few measures 0.5 s apart: a large request's or answer's buffers (tens of MB at
 * 100k tasks) are let go a moment after it ends, in some runs seconds later.
 */
async function settledHeapMB(): Promise<number | null> {
  let least = heapMB();
  for (let i = 0; i < 8 && least !== null; i++) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    least = Math.min(least, heapMB() ?? least);
  }
  return least;
}

/**
 * One flow of `tasks` tasks: its session's heap, TRANSITIONS start/complete pairs, a tenth as
 * many first reads of a version after a pair, tasks added, then `gets` repeated reads.
 */
async function run(tasks: number, gets: number) {
  const { flowId, ready } = await create(tasks);
  await app.close();
  app = await startBenchApp(database.url);
  // Only ids are kept, so the heap difference is the server's session. Measured settled on both
  // sides: the creating request's buffers were still held at the first measure in some runs (a
  // 10k session then came out at -9.5 MB).
  const heapBefore = await settledHeapMB();
  // The hot session: state, derived snapshot and the serialized Flow cached for this version.
  await (await fetch(`${app.url}/v1/flows/${flowId}`, { headers })).arrayBuffer();
  const heapAfter = await settledHeapMB();

  const starts: number[] = [];
  const completes: number[] = [];
  /** Starts and completes the next ready task; the tasks it unblocks join the queue. */
  const transition = async () => {
    const taskId = ready.shift()!;
    const start = (await call('POST', `/v1/flows/${flowId}/tasks/${taskId}/start`)).ms;
    const done = await call('POST', `/v1/flows/${flowId}/tasks/${taskId}/complete`);
    ready.push(...done.json.unblocked.map((t: { id: string }) => t.id));
    return { start, complete: done.ms };
  };
  // Transitions alone. A whole Flow read between them (50 MB at 100k tasks, answered and read in
  // this one process) leaves that much memory outside the heap, and V8 starts a full collection
  // for each 64 MB of it: with a read after every tenth pair, 200 pairs at 100k tasks overlapped
  // about 90 full collections, alone 25. Those are the reads' cost, and a client of a large flow
  // reads it by pages (GET /v1/flows/{flowId}/tasks) instead.
  for (let i = 0; i < TRANSITIONS && ready.length > 0; i++) {
    const { start, complete } = await transition();
    starts.push(start);
    completes.push(complete);
  }

  // Reads after a write: its time, and the task bytes it serialized anew. The version before
  // is read first, so the read measured follows exactly one start and one complete.
  const getsAfterWrite: number[] = [];
  const reserialized: number[] = [];
  let flowBytes = 0;
  for (let i = 0; i < TRANSITIONS / 10 && ready.length > 0; i++) {
    await (await fetch(`${app.url}/v1/flows/${flowId}`, { headers })).arrayBuffer();
    await transition();
    const bytesBefore = await metric('flowplan_flow_json_task_bytes_total');
    const started = performance.now();
    const response = await fetch(`${app.url}/v1/flows/${flowId}`, { headers });
    flowBytes = (await response.arrayBuffer()).byteLength;
    getsAfterWrite.push(performance.now() - started);
    reserialized.push((await metric('flowplan_flow_json_task_bytes_total')) - bytesBefore);
  }

  // Tasks added after a ready one: the graph's shape changes, its CSR rows are extended.
  // From a collected heap, so the reads above (tens of MB per version at 100k) are not paid for here.
  globalThis.gc?.();
  const adds: number[] = [];
  for (let i = 0; i < 20 && ready.length > 0; i++)
    adds.push(
      (
        await call('POST', `/v1/flows/${flowId}/tasks`, {
          name: `Added ${i}`,
          estimateHours: 8,
          after: [ready[i % ready.length]],
        })
      ).ms,
    );

  await call('GET', `/v1/flows/${flowId}`);
  const before = await recomputes();
  const times: number[] = [];
  for (let i = 0; i < gets; i++) times.push((await call('GET', `/v1/flows/${flowId}`)).ms);
  const after = await recomputes();
  return {
    tasks,
    sessionHeapMB:
      heapBefore === null || heapAfter === null
        ? null
        : Number((heapAfter - heapBefore).toFixed(1)),
    transitions: starts.length,
    start: summary(starts),
    complete: summary(completes),
    addTask: summary(adds),
    get: { ...summary(times), recomputes: after - before },
    // The first read of a version after a start and a complete: only the tasks they changed are serialized again.
    getAfterWrite: {
      ...summary(getsAfterWrite),
      flowBytes,
      taskBytesSerializedP50: quantile(reserialized, 0.5),
    },
  };
}

/**
 * A flow through the API (10,000 tasks at most per call), or, beyond that, through the same
 * service function the API calls, in one go. Returns its id and its ready tasks.
 */
async function create(tasks: number): Promise<{ flowId: string; ready: string[] }> {
  if (tasks <= MAX_TASKS_PER_CALL) {
    const { json } = await call('POST', '/v1/flows', benchFlowBody(tasks));
    return {
      flowId: json.id,
      ready: json.tasks
        .filter((t: { status: string }) => t.status === 'ready')
        .map((t: { id: string }) => t.id),
    };
  }
  const { sql, registry, auth } = app.services;
  const snapshot = await createFlow(
    { sql, registry, principal: await auth.authenticate(headers.authorization) },
    benchFlowBody(tasks),
  );
  const ready = snapshot.state.tasks.flatMap((task, i) =>
    snapshot.status[i] === STATUS_READY ? [task.id] : [],
  );
  return { flowId: snapshot.flow.id, ready };
}

// BENCH_SIZES (a comma list, as bench:check runs it: 10000) picks the flows measured.
const sizes = (process.env.BENCH_SIZES ?? '10000,100000').split(',').map(Number);
const runs = [];
for (const tasks of sizes) runs.push(await run(tasks, tasks >= 100_000 ? GETS / 10 : GETS));
process.stdout.write(
  `${JSON.stringify({
    name: 'flow-ops',
    machine: machine(),
    transport: app.transport,
    offloadTasks: app.services.config.offloadTasks,
    runs,
  })}\n`,
);

await app.close();
await database.drop();
process.exit(0);

/**
 * `npm run bench:forecast` (issue 33): through HTTP, GET /forecast on flows whose every task has
 * a ranged estimate: 10,000 samples of 1,000 tasks, 2,000 of 10,000 and 1,000 of 100,000, each
 * request with a seed of its own, on a pool of WORKERS threads (the machine's default unless
 * set), with the event loop's delay meanwhile (it must stay free for other requests). Beside
 * them, the work rate in task schedules (samples × open tasks) per second per core: on the pool,
 * in this thread (the same engine, no pool), and a plain loop over the same arrays that draws
 * and marks nothing (one forward pass: the floor a sample cannot beat). Then the levelled
 * schedule of a 10,000-task flow with 50 people, where a forecast on the event loop stops
 * being cheaper than one on the pool (`crossover`), and another workspace's forecast beside a
 * flood of them (`flood`). Prints one JSON line.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { forecastPart, type ForecastModel } from '../src/engine/forecast.ts';
import { createFlow } from '../src/services/flows/flows.service.ts';
import { forecastModel, IN_THREAD_WORK } from '../src/services/flows/forecast.ts';
import { createPerson } from '../test/helpers/people.ts';
import { SCOPES } from '../src/contract/vocabulary.ts';
import { createKey, createWorkspace } from '../src/services/auth/provision.ts';
import { benchDatabase, benchFlowBody, machine, quantile, startBenchApp } from './support.ts';

const workers = process.env.WORKERS ? Number(process.env.WORKERS) : undefined;
const database = await benchDatabase('forecast');
const app = await startBenchApp(database.url, undefined, workers ? { workers } : {});
const authorization = `Bearer ${app.demo?.key ?? ''}`;
const { sql, registry, auth, config } = app.services;
const principal = await auth.authenticate(authorization);
const ctx = { sql, registry, principal };

async function get(path: string, as = authorization): Promise<{ ms: number; json: any }> {
  const started = performance.now();
  const response = await fetch(app.url + path, { headers: { authorization: as } });
  const json = await response.json();
  const ms = performance.now() - started;
  if (!response.ok) throw new Error(`GET ${path}: ${response.status} ${JSON.stringify(json)}`);
  return { ms, json };
}

/** benchFlowBody's flow with every estimate ranged from half of it to two and a half times it. */
function rangedFlow(n: number) {
  const body = benchFlowBody(n, `Forecast ${n}`);
  return {
    ...body,
    tasks: body.tasks.map((task) => ({
      ...task,
      estimateRange: { low: task.estimateHours / 2, high: task.estimateHours * 2.5 },
    })),
  };
}

/** The floor: a forward pass per sample over the model's arrays, nothing drawn, nothing marked. */
function plainLoop(model: ForecastModel, samples: number): number {
  const { m, predStart, pred, days } = model;
  const ef = new Int32Array(m);
  let total = 0;
  for (let k = 0; k < samples; k++) {
    let finish = -1;
    for (let v = 0; v < m; v++) {
      let start = 0;
      for (let e = predStart[v] ?? 0, end = predStart[v + 1] ?? 0; e < end; e++)
        start = Math.max(start, (ef[pred[e] ?? 0] ?? 0) + 1);
      ef[v] = start + (days[v] ?? 1) - 1;
      finish = Math.max(finish, ef[v] ?? 0);
    }
    total += finish;
  }
  return total;
}

/** Task schedules a second, per core: `work` of them in `ms` on `cores`. */
const rate = (work: number, ms: number, cores = 1) => Math.round(work / (ms / 1000) / cores);

async function run(n: number, samples: number, repeats: number) {
  const snapshot = await createFlow(ctx, rangedFlow(n));
  const path = `/v1/flows/${snapshot.flow.id}/forecast?samples=${samples}&startDate=2030-01-07`;
  for (let i = 0; i < 2; i++) await get(`${path}&seed=${1000 + i}`);
  const lag = monitorEventLoopDelay({ resolution: 1 });
  const times: number[] = [];
  lag.enable();
  for (let i = 0; i < repeats; i++) times.push((await get(`${path}&seed=${i}`)).ms);
  lag.disable();
  const { model } = forecastModel(await registry.snapshot(principal.workspaceId, snapshot.flow.id));
  const work = samples * model.m;
  // The same engine in this thread, and the floor, on a share of the samples (the rate is per sample).
  const share = Math.max(20, Math.round(samples / 10));
  // Each once before it is timed: this thread has not compiled them yet.
  forecastPart(model, { seed: 2, first: 0, count: share });
  plainLoop(model, share);
  let started = performance.now();
  forecastPart(model, { seed: 1, first: 0, count: share });
  const inThreadMs = performance.now() - started;
  started = performance.now();
  plainLoop(model, share);
  const plainMs = performance.now() - started;
  const p50 = quantile(times, 0.5);
  return {
    tasks: n,
    samples,
    p50Ms: p50,
    p99Ms: quantile(times, 0.99),
    n: times.length,
    eventLoopDelayP99Ms: Number((lag.percentile(99) / 1e6).toFixed(2)),
    eventLoopDelayMaxMs: Number((lag.max / 1e6).toFixed(2)),
    taskSchedulesPerSecondPerCore: {
      pool: rate(work, p50, Math.min(config.workers, samples)),
      inThread: rate(share * model.m, inThreadMs),
      plainLoop: rate(share * model.m, plainMs),
    },
  };
}

/** GET /schedule?level=true on a 10,000-task flow whose tasks 50 people share (one in ten unassigned). */
async function levelled(repeats: number) {
  const people: string[] = [];
  for (let p = 0; p < 50; p++) {
    const person = await createPerson(sql, {
      email: `level${p}.${Date.now()}@example.com`,
      name: `Person ${p}`,
      password: 'correct horse battery',
      workspaceId: principal.workspaceId,
      role: 'member',
    });
    people.push(person.id);
  }
  const body = benchFlowBody(10_000, 'Levelled');
  const snapshot = await createFlow(ctx, {
    ...body,
    tasks: body.tasks.map((task, i) =>
      i % 10 === 9 ? task : { ...task, assigneeId: people[i % people.length] },
    ),
  });
  const path = `/v1/flows/${snapshot.flow.id}/schedule?level=true&startDate=2030-01-07`;
  for (let i = 0; i < 3; i++) await get(path);
  const times: number[] = [];
  for (let i = 0; i < repeats; i++) times.push((await get(path)).ms);
  return { tasks: 10_000, people: 50, p50Ms: quantile(times, 0.5), p99Ms: quantile(times, 0.99) };
}

/**
 * Where the event loop stops being cheaper than the pool: the same forecast of a 1,000-task
 * model in this thread and as one part on the pool (the model copied there, the answer back),
 * at sizes around IN_THREAD_WORK.
 */
async function inThreadOrPool() {
  const snapshot = await createFlow(ctx, rangedFlow(1_000));
  const { model } = forecastModel(snapshot);
  const sizes = [];
  for (const samples of [250, 500, 1_000, 2_000, 4_000]) {
    const thread: number[] = [];
    const pooled: number[] = [];
    for (let i = 0; i < 12; i++) {
      let started = performance.now();
      forecastPart(model, { seed: i, first: 0, count: samples });
      thread.push(performance.now() - started);
      started = performance.now();
      await app.services.pool.forecast(model, [{ seed: i, first: 0, count: samples }], 'bench');
      pooled.push(performance.now() - started);
    }
    sizes.push({
      work: samples * model.m,
      inThreadP50Ms: quantile(thread.slice(2), 0.5),
      poolP50Ms: quantile(pooled.slice(2), 0.5),
    });
  }
  return { inThreadWork: IN_THREAD_WORK, sizes };
}

/**
 * One workspace floods the pool (issue 51, item 2): another workspace's forecast of 2,000 samples
 * of 300 tasks, alone and while the first sends 16 forecasts of 20,000 samples of 1,000 tasks at
 * once (the pool served in turn, the flood's share refused 429): its p50 and slowest, and how
 * many of the flood were refused.
 */
async function flooded(repeats: number) {
  const { id: workspaceId } = await createWorkspace(sql, { name: 'Bystander' });
  const { key } = await createKey(sql, { workspaceId, role: 'admin', scopes: [...SCOPES] });
  const theirs = `Bearer ${key}`;
  const other = await auth.authenticate(theirs);
  const small = await createFlow({ sql, registry, principal: other }, rangedFlow(300));
  const large = await createFlow(ctx, rangedFlow(1_000));
  const otherPath = `/v1/flows/${small.flow.id}/forecast?samples=2000&startDate=2030-01-07`;
  for (let i = 0; i < 2; i++) await get(`${otherPath}&seed=${i}`, theirs);
  const alone: number[] = [];
  for (let i = 0; i < repeats; i++) alone.push((await get(`${otherPath}&seed=${i}`, theirs)).ms);
  const floodPath = `/v1/flows/${large.flow.id}/forecast?samples=20000&startDate=2030-01-07`;
  let running = true;
  const flood = Promise.all(
    Array.from({ length: 16 }, (_, i) =>
      fetch(`${app.url}${floodPath}&seed=${i}`, { headers: { authorization } }).then(
        async (response) => (await response.arrayBuffer(), response.status),
      ),
    ),
  ).finally(() => (running = false));
  const during: number[] = [];
  while (running) during.push((await get(`${otherPath}&seed=${during.length}`, theirs)).ms);
  const statuses = await flood;
  return {
    otherAloneP50Ms: quantile(alone, 0.5),
    otherDuringFloodP50Ms: quantile(during, 0.5),
    otherDuringFloodMaxMs: quantile(during, 1),
    n: during.length,
    floodAnswered: statuses.filter((status) => status === 200).length,
    floodRefused429: statuses.filter((status) => status === 429).length,
  };
}

const crossover = await inThreadOrPool();
const runs = [
  await run(1_000, 10_000, 30),
  await run(10_000, 2_000, 20),
  await run(100_000, 1_000, 5),
];
const levelledSchedule = await levelled(30);
const flood = await flooded(10);
process.stdout.write(
  `${JSON.stringify({
    name: 'forecast',
    machine: machine(),
    transport: app.transport,
    workers: config.workers,
    runs,
    crossover,
    levelledSchedule,
    flood,
  })}\n`,
);
await app.close();
await database.drop();
process.exit(0);

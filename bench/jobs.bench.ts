/**
 * `npm run bench:jobs`: outbox → pg-boss → signed webhook, end to end through the real app.
 * Tasks of 20 flows, assigned across 200 people, are started and completed through HTTP
 * (one client per flow, in two threads of their own; 10,000 transitions by default), with no
 * webhook and with 20 endpoints on a loopback receiver (a thread of its
 * own) subscribed to `task.started` and `task.completed`, so every transition is 20 deliveries.
 * Each load is run without and with webhooks alternately (ABBA, BENCH_ROUNDS pairs, default
 * 3; each run on fresh flows, from a vacuumed database, the endpoints registered for the runs
 * with webhooks only): saturated (each client sends its next transition once the last is
 * answered, so the 2-core machine has no idle CPU) and paced at half the rate the saturated
 * runs reached. While the API is busy, each process starts at most WEBHOOK_BUSY_RATE
 * deliveries a second (default 5) and the backlog goes out once it is quiet; every run's
 * deliveries are received before the next starts. Reports per side the transition latency
 * (pooled over its runs, and each run's p50 and p99), the CPU each transition cost (this
 * process and Postgres) and the server's event-loop utilisation, the latency change webhooks cause,
 * deliveries per second behind the saturated runs (overall, and once the API was quiet), and
 * the time from commit (the event's timestamp) to receipt: behind the saturated runs, at half
 * rate, and unloaded (one transition every 100 ms). Prints one JSON line. BENCH_TRANSITIONS
 * shortens the runs; WEBHOOK_BUSY_RATE sets the busy rate.
 */
import { Worker } from 'node:worker_threads';
import pino from 'pino';
import { startApp } from '../src/compose.ts';
import { newId } from '../src/platform/ids.ts';
import { loadConfig } from '../src/platform/config.ts';
import { insertUser, upsertMembership } from '../src/storage/workspaces.store.ts';
import { benchDatabase, machine, postgresCpuMs } from './support.ts';

const TRANSITIONS = Number(process.env.BENCH_TRANSITIONS ?? 10_000);
const FLOWS = 20;
const PEOPLE = 200;
const ENDPOINTS = 20;
const TASKS_PER_FLOW = Math.ceil(TRANSITIONS / 2 / FLOWS);
/** Transitions of the unloaded latency run. */
const QUIET = 50;
/** Pairs of runs (without and with webhooks) at each load; BENCH_ROUNDS sets it. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return Number(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(1));
};
const summary = (values: number[]) => ({
  p50Ms: quantile(values, 0.5),
  p99Ms: quantile(values, 0.99),
});
const median = (values: number[]) => quantile(values, 0.5);

// The receiver, in a thread of its own as a real one would be in a process of its own: 20
// endpoints are 20 paths; it answers 204 at once and notes when each event arrived.
const RECEIVER = `
const http = require('node:http');
const { parentPort } = require('node:worker_threads');
let batch = [];
const server = http.createServer((request, response) => {
  const chunks = [];
  request.on('data', (c) => chunks.push(c));
  request.on('end', () => {
    batch.push({ at: Date.now(), committedAt: Date.parse(JSON.parse(Buffer.concat(chunks).toString()).timestamp) });
    response.writeHead(204).end();
  });
});
server.listen(0, '127.0.0.1', () => parentPort.postMessage({ port: server.address().port }));
setInterval(() => { if (batch.length) { parentPort.postMessage({ received: batch }); batch = []; } }, 20);
`;
const received: { at: number; committedAt: number }[] = [];
const receiverThread = new Worker(RECEIVER, { eval: true });
const receiverPort = await new Promise<number>((resolve) => {
  receiverThread.on(
    'message',
    (message: { port?: number; received?: { at: number; committedAt: number }[] }) => {
      if (message.port) resolve(message.port);
      if (message.received) received.push(...message.received);
    },
  );
});
const receiverUrl = `http://127.0.0.1:${receiverPort}`;

const database = await benchDatabase('jobs');
const log = pino({ level: 'warn', base: { service: 'flowplan' } }, pino.destination(2));
const app = await startApp(
  loadConfig(
    { LOG_LEVEL: 'warn' },
    {
      port: 0,
      databaseUrl: database.url,
      rateLimitPerMinute: 1e9,
      rateLimitBurst: 1e9,
      webhookAllowPrivate: true,
      ...(process.env.WEBHOOK_BUSY_RATE
        ? { webhookBusyRate: Number(process.env.WEBHOOK_BUSY_RATE) }
        : {}),
    },
  ),
  { log },
);
const headers = { authorization: `Bearer ${app.demo!.key}`, 'content-type': 'application/json' };
const { sql } = app.services;

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
  const json = response.status === 204 ? null : await response.json();
  const ms = performance.now() - started;
  if (!response.ok)
    throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
  return { ms, json };
}

// People to assign (inserted directly: 200 scrypt hashes would only measure scrypt).
const people: string[] = [];
for (let i = 0; i < PEOPLE; i++) {
  const id = newId('usr');
  await insertUser(sql, {
    id,
    email: `bench${i}@example.test`,
    name: `Person ${i}`,
    passwordHash: 'x',
  });
  await upsertMembership(sql, app.demo!.workspaceId, id, 'member');
  people.push(id);
}

async function newFlows(label: string): Promise<{ id: string; tasks: string[] }[]> {
  const flows = [];
  for (let f = 0; f < FLOWS; f++) {
    const tasks = Array.from({ length: TASKS_PER_FLOW }, (_, i) => ({
      name: `T${i}`,
      estimateHours: 4,
      assigneeId: people[(f * TASKS_PER_FLOW + i) % PEOPLE],
    }));
    const { json } = await call('POST', '/v1/flows', { name: `${label} ${f}`, tasks });
    flows.push({
      id: json.id as string,
      tasks: json.tasks.map((t: { id: string }) => t.id) as string[],
    });
  }
  return flows;
}

// The integrators: one sequential client per flow, in two threads of their own, so the server's
// event loop (this thread) runs only the server, as it would in production.
const CLIENT = `
const { parentPort, workerData: w } = require('node:worker_threads');
(async () => {
  const latencies = [];
  await Promise.all(w.flows.map(async (flow) => {
    // Paced: each client sends at its share of the rate (never two at once: a flow's steps are in order).
    const gap = w.rate ? 1000 * w.clients / w.rate : 0;
    let next = performance.now() + Math.random() * gap;
    for (const task of flow.tasks) {
      for (const step of ['start', 'complete']) {
        if (gap) {
          const wait = next - performance.now();
          if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
          next += gap;
        }
        const started = performance.now();
        const response = await fetch(w.url + '/v1/flows/' + flow.id + '/tasks/' + task + '/' + step, { method: 'POST', headers: w.headers });
        await response.arrayBuffer();
        if (!response.ok) throw new Error(step + ' answered ' + response.status);
        latencies.push(performance.now() - started);
      }
    }
  }));
  parentPort.postMessage(latencies);
})();
`;

/** Starts and completes every task (as fast as answers come, or at `rate` per second); the latency of each transition and what they cost. */
async function transitions(flows: { id: string; tasks: string[] }[], rate = 0) {
  const startedAt = Date.now();
  const cpu = process.cpuUsage();
  const elu = performance.eventLoopUtilization();
  const pgCpu = postgresCpuMs();
  const halves = [flows.filter((_, i) => i % 2 === 0), flows.filter((_, i) => i % 2 === 1)];
  const latencies = (
    await Promise.all(
      halves.map(
        (part) =>
          new Promise<number[]>((resolve, reject) => {
            const worker = new Worker(CLIENT, {
              eval: true,
              workerData: { url: app.url, headers, flows: part, rate, clients: flows.length },
            });
            worker.once('message', resolve);
            worker.once('error', reject);
          }),
      ),
    )
  ).flat();
  const n = latencies.length;
  const used = process.cpuUsage(cpu);
  return {
    latencies,
    startedAt,
    seconds: (Date.now() - startedAt) / 1000,
    // Per transition: CPU of this process (server, webhook sender, and the client and receiver
    // threads) and of Postgres; and how busy the server's event loop was.
    cpuPerTransitionMs: {
      process: Number(((used.user + used.system) / 1000 / n).toFixed(3)),
      postgres: Number(((postgresCpuMs() - pgCpu) / n).toFixed(3)),
    },
    serverEventLoopUtilization: Number(
      performance.eventLoopUtilization(elu).utilization.toFixed(2),
    ),
  };
}

async function settle(): Promise<void> {
  for (;;) {
    const [row] = await sql<
      { n: number }[]
    >`select count(*)::int as n from outbox where processed_at is null`;
    if (row!.n === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Waits for `count` more receipts (from `from` on); returns them. */
async function receipts(
  from: number,
  count: number,
): Promise<{ at: number; committedAt: number }[]> {
  const deadline = Date.now() + 30 * 60_000;
  while (received.length < from + count && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 100));
  return received.slice(from);
}

/**
 * Each measured run starts from a vacuumed, checkpointed database: the dead rows the run
 * before left (the deliveries of 10,000 transitions are 800,000 row versions) would otherwise
 * be vacuumed during the next run, and its WAL written out by a checkpoint, charged to it.
 */
async function quiesce(): Promise<void> {
  await sql`vacuum analyze`;
  // Needs a superuser or pg_checkpoint (the embedded cluster's owner is one); a timed checkpoint may then fall in a run.
  await sql`checkpoint`.catch(() => {});
}

type Run = Awaited<ReturnType<typeof transitions>>;
type Receipt = { at: number; committedAt: number };
type Hooked = { run: Run; receipts: Receipt[] };

/** A run with the 20 endpoints registered: its transitions, then every delivery they made (the endpoints are deleted after). */
async function hookedRun(label: string, rate: number): Promise<Hooked> {
  const hooks: string[] = [];
  for (let e = 0; e < ENDPOINTS; e++) {
    hooks.push(
      (
        await call('POST', '/v1/webhooks', {
          url: `${receiverUrl}/endpoint/${e}`,
          events: ['task.started', 'task.completed'],
        })
      ).json.id,
    );
  }
  await quiesce();
  const run = await transitions(await newFlows(label), rate);
  const got = await receipts(0, run.latencies.length * ENDPOINTS);
  received.splice(0);
  for (const id of hooks) await call('DELETE', `/v1/webhooks/${id}`);
  return { run, receipts: got };
}

async function plainRun(label: string, rate: number): Promise<Run> {
  await quiesce();
  const run = await transitions(await newFlows(label), rate);
  await settle();
  return run;
}

/**
 * Runs without and with webhooks alternately, ABBA (without, with; with, without; ...), so the
 * drift of a long benchmark (a fuller database, a warmer JIT, the machine's own noise) falls on
 * both sides alike: a single pair moved by ±30% between identical invocations.
 */
async function interleaved(
  label: string,
  rate: number,
): Promise<{ without: Run[]; withHooks: Hooked[] }> {
  const without: Run[] = [];
  const withHooks: Hooked[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    for (const hooked of round % 2 === 0 ? [false, true] : [true, false]) {
      if (hooked) withHooks.push(await hookedRun(`${label} hooked ${round}`, rate));
      else without.push(await plainRun(`${label} plain ${round}`, rate));
    }
  }
  return { without, withHooks };
}

// Saturated: every client sends its next transition as soon as the last is answered.
const saturatedRuns = await interleaved('Saturated', 0);
// Paced at half the rate the saturated runs reached: the machine has room, as a service should.
const rate = Math.round(
  median(saturatedRuns.without.map((run) => run.latencies.length / run.seconds)) / 2,
);
const pacedRuns = await interleaved('Paced', rate);

// Unloaded: one transition every 100 ms, each fanned out to the 20 endpoints.
for (let e = 0; e < ENDPOINTS; e++)
  await call('POST', '/v1/webhooks', {
    url: `${receiverUrl}/endpoint/${e}`,
    events: ['task.started', 'task.completed'],
  });
const quietFlow = (
  await call('POST', '/v1/flows', {
    name: 'Quiet',
    tasks: Array.from({ length: QUIET / 2 }, (_, i) => ({ name: `Q${i}` })),
  })
).json;
for (const task of quietFlow.tasks as { id: string }[]) {
  for (const step of ['start', 'complete']) {
    await call('POST', `/v1/flows/${quietFlow.id}/tasks/${task.id}/${step}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
await receipts(0, QUIET * ENDPOINTS);

/** One side's figures: the latency of all its runs' transitions pooled, each run's p50 and p99, and the medians of the rest. */
const side = (runs: Run[]) => {
  const each = runs.map((run) => summary(run.latencies));
  return {
    ...summary(runs.flatMap((run) => run.latencies)),
    runsP50Ms: each.map((s) => s.p50Ms),
    runsP99Ms: each.map((s) => s.p99Ms),
    perSecond: Math.round(median(runs.map((run) => run.latencies.length / run.seconds))),
    // Per transition: CPU of this process (server, webhook sender, and the client and receiver threads) and of Postgres.
    cpuPerTransitionMs: {
      process: median(runs.map((run) => run.cpuPerTransitionMs.process)),
      postgres: median(runs.map((run) => run.cpuPerTransitionMs.postgres)),
    },
    serverEventLoopUtilization: median(runs.map((run) => run.serverEventLoopUtilization)),
  };
};
const compare = ({ without, withHooks }: { without: Run[]; withHooks: Hooked[] }) => {
  const plain = side(without);
  const hooked = side(withHooks.map((h) => h.run));
  const pct = (a: number, b: number) => Number((100 * (b / a - 1)).toFixed(1));
  return {
    withoutWebhooks: plain,
    withWebhooks: hooked,
    latencyChangePct: { p50: pct(plain.p50Ms, hooked.p50Ms), p99: pct(plain.p99Ms, hooked.p99Ms) },
  };
};
/** Behind a saturated run: deliveries per second from its start to the last receipt, and from when the API was quiet. */
const throughput = ({ run, receipts: got }: Hooked) => {
  const lastAt = got.reduce((latest, r) => Math.max(latest, r.at), 0);
  const quietFrom = run.startedAt + run.seconds * 1000;
  return {
    overall: got.length / ((lastAt - run.startedAt) / 1000),
    onceQuiet: got.filter((r) => r.at >= quietFrom).length / ((lastAt - quietFrom) / 1000),
  };
};
const saturatedThroughput = saturatedRuns.withHooks.map(throughput);
const latencies = (hooked: Hooked[]) =>
  summary(hooked.flatMap((h) => h.receipts.map((r) => r.at - r.committedAt)));
process.stdout.write(
  JSON.stringify({
    name: 'jobs',
    machine: machine(),
    webhookBusyRate: app.services.config.webhookBusyRate,
    transitionsPerRun: saturatedRuns.without[0]!.latencies.length,
    rounds: ROUNDS,
    endpoints: ENDPOINTS,
    people: PEOPLE,
    saturated: compare(saturatedRuns),
    atHalfRate: { ratePerSecond: rate, ...compare(pacedRuns) },
    deliveries: {
      // Every delivery of every run with webhooks arrived (each run: its transitions × 20).
      receivedPerRun: saturatedRuns.withHooks
        .concat(pacedRuns.withHooks)
        .map((h) => h.receipts.length),
      // Medians over the saturated runs: while one ran, the busy API held delivery to WEBHOOK_BUSY_RATE.
      perSecond: Math.round(median(saturatedThroughput.map((t) => t.overall))),
      perSecondOnceQuiet: Math.round(median(saturatedThroughput.map((t) => t.onceQuiet))),
      // Each saturated run's, in order: later runs find more delivered rows in the tables.
      perSecondOnceQuietRuns: saturatedThroughput.map((t) => Math.round(t.onceQuiet)),
      // Behind the saturated runs: includes the wait behind the backlog each built up (20 deliveries per transition).
      commitToReceipt: latencies(saturatedRuns.withHooks),
      commitToReceiptAtHalfRate: latencies(pacedRuns.withHooks),
      // One transition every 100 ms (×20 endpoints): the pipeline's own latency.
      commitToReceiptUnloaded: summary(received.map((r) => r.at - r.committedAt)),
    },
  }) + '\n',
);

await app.close();
await receiverThread.terminate();
await database.drop();

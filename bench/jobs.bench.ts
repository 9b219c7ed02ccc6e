/**
 * `npm run bench:jobs`: outbox → pg-boss → signed webhook, end to end through the real app.
 * Tasks of 20 flows, assigned across 200 people, are started and completed through HTTP
 * (one client per flow, in two threads of their own; 10,000 transitions by default), with no
 * webhook and then on fresh flows with 20 endpoints on a loopback receiver (a thread of its
 * own) subscribed to `task.started` and `task.completed`, so every transition is 20 deliveries.
 * Each is run twice: saturated (each client sends its next transition once the last is
 * answered, so the 2-core machine has no idle CPU) and paced at half the rate the saturated
 * run reached. While the API is busy, each process starts at most WEBHOOK_BUSY_RATE
 * deliveries a second (default 20) and the backlog goes out once it is quiet. Reports per
 * run the transition latency, the CPU each transition cost (this process and Postgres) and
 * the server's event-loop utilisation, the latency change webhooks cause, deliveries per
 * second behind the saturated run (overall, and once the API was quiet), and the time from
 * commit (the event's timestamp) to receipt: behind the saturated run, at half rate, and
 * unloaded (one transition every 100 ms). Prints one JSON line. BENCH_TRANSITIONS shortens
 * the run; WEBHOOK_BUSY_RATE sets the busy rate.
 */
import { Worker } from 'node:worker_threads';
import pino from 'pino';
import { startApp } from '../src/app.ts';
import { newId } from '../src/ids.ts';
import { loadConfig } from '../src/config.ts';
import { UWS_IMPLEMENTATION, UWS_NATIVE } from '../src/http/server.ts';
import { insertUser, upsertMembership } from '../src/store/workspaces.store.ts';
import { benchDatabase, machine, postgresCpuMs } from './support.ts';

const TRANSITIONS = Number(process.env.BENCH_TRANSITIONS ?? 10_000);
const FLOWS = 20;
const PEOPLE = 200;
const ENDPOINTS = 20;
const TASKS_PER_FLOW = Math.ceil(TRANSITIONS / 2 / FLOWS);
/** Transitions of the unloaded latency run. */
const QUIET = 50;

if (!UWS_NATIVE) {
  process.stderr.write(`bench:jobs refuses to run on ${UWS_IMPLEMENTATION}.\n`);
  process.exit(1);
}

const quantile = (values: number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return Number(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(1));
};
const summary = (values: number[]) => ({ p50Ms: quantile(values, 0.5), p99Ms: quantile(values, 0.99) });

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
  receiverThread.on('message', (message: { port?: number; received?: { at: number; committedAt: number }[] }) => {
    if (message.port) resolve(message.port);
    if (message.received) received.push(...message.received);
  });
});
const receiverUrl = `http://127.0.0.1:${receiverPort}`;

const database = await benchDatabase('jobs');
const log = pino({ level: 'warn', base: { service: 'flowplan' } }, pino.destination(2));
const app = await startApp(loadConfig({ LOG_LEVEL: 'warn' }, {
  port: 0, databaseUrl: database.url, rateLimitPerMinute: 1e9, rateLimitBurst: 1e9, webhookAllowPrivate: true,
  ...(process.env.WEBHOOK_BUSY_RATE ? { webhookBusyRate: Number(process.env.WEBHOOK_BUSY_RATE) } : {}),
}), { log });
const headers = { authorization: `Bearer ${app.demo!.key}`, 'content-type': 'application/json' };
const { sql } = app.services;

async function call(method: string, path: string, body?: unknown): Promise<{ ms: number; json: any }> {
  const started = performance.now();
  const response = await fetch(app.url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const json = response.status === 204 ? null : await response.json();
  const ms = performance.now() - started;
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`);
  return { ms, json };
}

// People to assign (inserted directly: 200 scrypt hashes would only measure scrypt).
const people: string[] = [];
for (let i = 0; i < PEOPLE; i++) {
  const id = newId('usr');
  await insertUser(sql, { id, email: `bench${i}@example.test`, name: `Person ${i}`, passwordHash: 'x' });
  await upsertMembership(sql, app.demo!.workspaceId, id, 'member');
  people.push(id);
}

async function newFlows(label: string): Promise<{ id: string; tasks: string[] }[]> {
  const flows = [];
  for (let f = 0; f < FLOWS; f++) {
    const tasks = Array.from({ length: TASKS_PER_FLOW }, (_, i) => ({ name: `T${i}`, estimateHours: 4, assigneeId: people[(f * TASKS_PER_FLOW + i) % PEOPLE] }));
    const { json } = await call('POST', '/v1/flows', { name: `${label} ${f}`, tasks });
    flows.push({ id: json.id as string, tasks: json.tasks.map((t: { id: string }) => t.id) as string[] });
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
  const latencies = (await Promise.all(halves.map((part) => new Promise<number[]>((resolve, reject) => {
    const worker = new Worker(CLIENT, { eval: true, workerData: { url: app.url, headers, flows: part, rate, clients: flows.length } });
    worker.once('message', resolve);
    worker.once('error', reject);
  })))).flat();
  const n = latencies.length;
  const used = process.cpuUsage(cpu);
  return {
    latencies, startedAt, seconds: (Date.now() - startedAt) / 1000,
    // Per transition: CPU of this process (server, webhook sender, and the client and receiver
    // threads) and of Postgres; and how busy the server's event loop was.
    cpuPerTransitionMs: { process: Number(((used.user + used.system) / 1000 / n).toFixed(3)), postgres: Number(((postgresCpuMs() - pgCpu) / n).toFixed(3)) },
    serverEventLoopUtilization: Number(performance.eventLoopUtilization(elu).utilization.toFixed(2)),
  };
}

async function settle(): Promise<void> {
  for (;;) {
    const [row] = await sql<{ n: number }[]>`select count(*)::int as n from outbox where processed_at is null`;
    if (row!.n === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Waits for `count` more receipts (from `from` on); returns them. */
async function receipts(from: number, count: number): Promise<{ at: number; committedAt: number }[]> {
  const deadline = Date.now() + 30 * 60_000;
  while (received.length < from + count && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  return received.slice(from);
}

/**
 * Each measured run starts from a vacuumed database: the dead rows the run before left (the
 * deliveries of 10,000 transitions are 800,000 row versions) would otherwise be vacuumed by
 * Postgres during the next run, and charged to it.
 */
async function quiesce(): Promise<void> {
  await sql`vacuum analyze`;
}

// Saturated: every client sends its next transition as soon as the last is answered.
await quiesce();
const baseline = await transitions(await newFlows('Plain'));
await settle();
// Paced at half the rate the saturated run reached: the machine has room, as a service should.
const rate = Math.round(baseline.latencies.length / baseline.seconds / 2);
await quiesce();
const pacedBaseline = await transitions(await newFlows('Plain paced'), rate);
await settle();

for (let e = 0; e < ENDPOINTS; e++) await call('POST', '/v1/webhooks', { url: `${receiverUrl}/endpoint/${e}`, events: ['task.started', 'task.completed'] });
await quiesce();
const withHooks = await transitions(await newFlows('Hooked'));
const expected = withHooks.latencies.length * ENDPOINTS;
const backlog = await receipts(0, expected);
const lastAt = backlog.reduce((latest, r) => Math.max(latest, r.at), 0);
const quietFrom = withHooks.startedAt + withHooks.seconds * 1000;
await quiesce();
const pacedWithHooks = await transitions(await newFlows('Hooked paced'), rate);
const paced = await receipts(expected, expected);
received.splice(0);

// Unloaded: one transition every 100 ms, each fanned out to the 20 endpoints.
const quietFlow = (await call('POST', '/v1/flows', { name: 'Quiet', tasks: Array.from({ length: QUIET / 2 }, (_, i) => ({ name: `Q${i}` })) })).json;
for (const task of quietFlow.tasks as { id: string }[]) {
  for (const step of ['start', 'complete']) {
    await call('POST', `/v1/flows/${quietFlow.id}/tasks/${task.id}/${step}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
await receipts(0, QUIET * ENDPOINTS);

const phase = (run: typeof baseline) => ({
  ...summary(run.latencies), perSecond: Math.round(run.latencies.length / run.seconds),
  cpuPerTransitionMs: run.cpuPerTransitionMs, serverEventLoopUtilization: run.serverEventLoopUtilization,
});
const change = (without: ReturnType<typeof phase>, withHooks: ReturnType<typeof phase>) => ({
  p50: Number((100 * (withHooks.p50Ms / without.p50Ms - 1)).toFixed(1)), p99: Number((100 * (withHooks.p99Ms / without.p99Ms - 1)).toFixed(1)),
});
const saturated = { withoutWebhooks: phase(baseline), withWebhooks: phase(withHooks) };
const atHalfRate = { ratePerSecond: rate, withoutWebhooks: phase(pacedBaseline), withWebhooks: phase(pacedWithHooks) };
process.stdout.write(JSON.stringify({
  name: 'jobs',
  machine: machine(),
  webhookBusyRate: app.services.config.webhookBusyRate,
  transitions: withHooks.latencies.length,
  endpoints: ENDPOINTS,
  people: PEOPLE,
  saturated: { ...saturated, latencyChangePct: change(saturated.withoutWebhooks, saturated.withWebhooks) },
  atHalfRate: { ...atHalfRate, latencyChangePct: change(atHalfRate.withoutWebhooks, atHalfRate.withWebhooks) },
  deliveries: {
    count: backlog.length,
    expected,
    // From the saturated run's start to the last receipt (while it ran, the busy API held delivery to WEBHOOK_BUSY_RATE).
    perSecond: Math.round(backlog.length / ((lastAt - withHooks.startedAt) / 1000)),
    // The backlog going out once the API was quiet.
    perSecondOnceQuiet: Math.round(backlog.filter((r) => r.at >= quietFrom).length / ((lastAt - quietFrom) / 1000)),
    // Behind the saturated run: includes the wait behind the backlog it built up (20 deliveries per transition).
    commitToReceipt: summary(backlog.map((r) => r.at - r.committedAt)),
    commitToReceiptAtHalfRate: summary(paced.map((r) => r.at - r.committedAt)),
    // One transition every 100 ms (×20 endpoints): the pipeline's own latency.
    commitToReceiptUnloaded: summary(received.map((r) => r.at - r.committedAt)),
  },
}) + '\n');

await app.close();
await receiverThread.terminate();
await database.drop();

/**
 * `npm run bench:jobs`: outbox → pg-boss → signed webhook, end to end through the real app.
 * Tasks of 20 flows, assigned across 200 people, are started and completed through HTTP
 * (one client per flow, 10,000 transitions by default), first with no webhook, then again on
 * fresh flows with 20 endpoints on a loopback receiver subscribed to `task.started` and
 * `task.completed`. Reports transition latency in both runs (and the change), the time from
 * commit (the event's timestamp) to receipt at the receiver (p50/p99), and deliveries per
 * second until the last one arrived. The receiver runs in this process (it shares the cores).
 * Prints one JSON line: { name, machine, transitions, endpoints, people, withoutWebhooks,
 * withWebhooks, latencyChangePct, deliveries: { count, perSecond, commitToReceipt, commitToReceiptUnloaded } }.
 * The unloaded figure comes from a last run of one transition every 100 ms.
 * BENCH_TRANSITIONS shortens the run.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { startApp } from '../src/app.ts';
import { newId } from '../src/ids.ts';
import { loadConfig } from '../src/config.ts';
import { UWS_IMPLEMENTATION, UWS_NATIVE } from '../src/http/server.ts';
import { insertUser, upsertMembership } from '../src/store/workspaces.store.ts';
import { benchDatabase, machine } from './support.ts';

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

// The receiver: 20 endpoints are 20 paths; it answers 204 at once and notes when each event arrived.
const received: { at: number; committedAt: number }[] = [];
const receiver = http.createServer((request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (c: Buffer) => chunks.push(c));
  request.on('end', () => {
    const at = Date.now();
    received.push({ at, committedAt: Date.parse(JSON.parse(Buffer.concat(chunks).toString()).timestamp) });
    response.writeHead(204).end();
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

const database = await benchDatabase('jobs');
const log = pino({ level: 'warn', base: { service: 'flowplan' } }, pino.destination(2));
const app = await startApp(loadConfig({ LOG_LEVEL: 'warn' }, {
  port: 0, databaseUrl: database.url, rateLimitPerMinute: 1e9, rateLimitBurst: 1e9, webhookAllowPrivate: true,
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

/** Starts and completes every task, one client per flow; the latency of each transition. */
async function transitions(flows: { id: string; tasks: string[] }[]): Promise<{ latencies: number[]; startedAt: number; seconds: number }> {
  const latencies: number[] = [];
  const startedAt = Date.now();
  await Promise.all(flows.map(async (flow) => {
    for (const task of flow.tasks) {
      latencies.push((await call('POST', `/v1/flows/${flow.id}/tasks/${task}/start`)).ms);
      latencies.push((await call('POST', `/v1/flows/${flow.id}/tasks/${task}/complete`)).ms);
    }
  }));
  return { latencies, startedAt, seconds: (Date.now() - startedAt) / 1000 };
}

async function settle(): Promise<void> {
  for (;;) {
    const [row] = await sql<{ n: number }[]>`select count(*)::int as n from outbox where processed_at is null`;
    if (row!.n === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

const baseline = await transitions(await newFlows('Plain'));
await settle();

for (let e = 0; e < ENDPOINTS; e++) await call('POST', '/v1/webhooks', { url: `${receiverUrl}/endpoint/${e}`, events: ['task.started', 'task.completed'] });
const flows = await newFlows('Hooked');
const withHooks = await transitions(flows);
const expected = withHooks.latencies.length * ENDPOINTS;
const deadline = Date.now() + 30 * 60_000;
while (received.length < expected && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
const lastAt = received.reduce((latest, r) => Math.max(latest, r.at), 0);
const backlog = received.splice(0);

// Unloaded: one transition every 100 ms, each fanned out to the 20 endpoints.
const quietFlow = (await call('POST', '/v1/flows', { name: 'Quiet', tasks: Array.from({ length: QUIET / 2 }, (_, i) => ({ name: `Q${i}` })) })).json;
for (const task of quietFlow.tasks as { id: string }[]) {
  for (const step of ['start', 'complete']) {
    await call('POST', `/v1/flows/${quietFlow.id}/tasks/${task.id}/${step}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
while (received.length < QUIET * ENDPOINTS && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));

const withoutWebhooks = { ...summary(baseline.latencies), perSecond: Math.round(baseline.latencies.length / baseline.seconds) };
const withWebhooks = { ...summary(withHooks.latencies), perSecond: Math.round(withHooks.latencies.length / withHooks.seconds) };
process.stdout.write(JSON.stringify({
  name: 'jobs',
  machine: machine(),
  transitions: withHooks.latencies.length,
  endpoints: ENDPOINTS,
  people: PEOPLE,
  withoutWebhooks,
  withWebhooks,
  latencyChangePct: { p50: Number((100 * (withWebhooks.p50Ms / withoutWebhooks.p50Ms - 1)).toFixed(1)), p99: Number((100 * (withWebhooks.p99Ms / withoutWebhooks.p99Ms - 1)).toFixed(1)) },
  deliveries: {
    count: backlog.length,
    expected,
    perSecond: Math.round(backlog.length / ((lastAt - withHooks.startedAt) / 1000)),
    // Under the load above: includes the wait behind the backlog the transitions built up.
    commitToReceipt: summary(backlog.map((r) => r.at - r.committedAt)),
    // One transition every 100 ms (×20 endpoints): the pipeline's own latency.
    commitToReceiptUnloaded: summary(received.map((r) => r.at - r.committedAt)),
  },
}) + '\n');

await app.close();
receiver.close();
await database.drop();

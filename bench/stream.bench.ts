/**
 * `npm run bench:stream`: 10,000 subscribers (half SSE, half WebSocket) over 100 workspaces on
 * one server process (src/main.ts, a process of its own so its RSS and CPU are its own), while
 * 50 writes a second (PATCH of a flow: one `flow.updated` each) go on for 60 s. Reports
 * commit→receipt p50/p99 (from the event's `timestamp`, its transaction's start, so slightly
 * over-stated), the server's RSS per subscriber, its CPU per 1,000 events delivered (the CPU of
 * the same writes with no subscriber taken off), and checks every subscriber got every event of
 * its workspace exactly once. Then the same freshness by polling: POLLERS clients polling their
 * workspace's GET /v1/work/available every second (If-None-Match) for POLL_SECONDS under the
 * same writes, measured, and scaled to as many pollers as subscribers for as long, as ratios
 * (requests, server CPU, bytes). Then two processes: subscribers on a second process, writes
 * through the first. Prints one JSON line. BENCH_SUBSCRIBERS, BENCH_SECONDS shorten it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import WebSocket from 'ws';
import postgres from 'postgres';
import { SCOPES } from '../src/services/auth/principal.ts';
import { createKey, createWorkspace } from '../src/services/auth/provision.ts';
import { freePort } from '../src/storage/embedded.ts';
import { benchDatabase, machine, postgresCpuMs } from './support.ts';

const SUBSCRIBERS = Number(process.env.BENCH_SUBSCRIBERS ?? 10_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 60);
const WORKSPACES = 100;
const WRITES_PER_SECOND = 50;
const POLLERS = Math.min(SUBSCRIBERS, Number(process.env.BENCH_POLLERS ?? 1000));
const POLL_SECONDS = Math.min(SECONDS, 20);
const CROSS_SUBSCRIBERS = 200;

interface Server {
  child: ChildProcess;
  url: string;
  metrics: string;
}

async function startServer(databaseUrl: string): Promise<Server> {
  const metricsPort = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      PORT: '0',
      METRICS_PORT: String(metricsPort),
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PER_MINUTE: '1000000000',
      RATE_LIMIT_BURST: '1000000000',
      ADDRESS_RATE_LIMIT_PER_MINUTE: '1000000000',
      ADDRESS_RATE_LIMIT_BURST: '1000000000',
      // One key holds every subscriber here.
      STREAMS_PER_CREDENTIAL: String(SUBSCRIBERS),
      STREAMS_PER_PERSON: String(SUBSCRIBERS),
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk) => {
      output += chunk;
      const match = /flowplan is running at (\S+)/.exec(output);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`server exited ${code}: ${output}`)));
  });
  return { child, url, metrics: `http://127.0.0.1:${metricsPort}/metrics` };
}

/** The process's resident memory (bytes) and CPU so far (ms), from /proc. */
function usage(pid: number): { rss: number; cpuMs: number } {
  const rss =
    Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) * 1024;
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { rss, cpuMs: (Number(fields[11]) + Number(fields[12])) * 10 };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const quantile = (sorted: number[], q: number) =>
  sorted.length === 0 ? null : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
const round = (n: number | null, digits = 1) =>
  n === null ? null : Math.round(n * 10 ** digits) / 10 ** digits;

interface Client {
  workspace: number;
  ids: Set<string>;
  duplicates: number;
  bytes: number;
  close(): void;
}
const latencies: number[] = [];

function receive(client: Client, text: string): void {
  client.bytes += Buffer.byteLength(text);
  const event = JSON.parse(text) as { id: string; timestamp: string };
  latencies.push(Date.now() - Date.parse(event.timestamp));
  if (client.ids.has(event.id)) client.duplicates++;
  client.ids.add(event.id);
}

const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });

function sseClient(base: string, token: string, workspace: number): Promise<Client> {
  const client: Client = {
    workspace,
    ids: new Set(),
    duplicates: 0,
    bytes: 0,
    close: () => request.destroy(),
  };
  const request = http.get(`${base}/v1/events/stream`, {
    agent,
    headers: { authorization: `Bearer ${token}` },
  });
  return new Promise((resolve, reject) => {
    request.once('error', reject);
    request.once('response', (res) => {
      if (res.statusCode !== 200) return reject(new Error(`SSE ${res.statusCode}`));
      res.setEncoding('utf8');
      let buffer = '';
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let cut: number;
        while ((cut = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          const data = block.split('\n').find((line) => line.startsWith('data: '));
          if (data && !block.includes('event: close')) receive(client, data.slice(6));
        }
      });
      res.on('error', () => {});
      resolve(client);
    });
  });
}

function wsClient(base: string, token: string, workspace: number): Promise<Client> {
  const ws = new WebSocket(`${base.replace('http', 'ws')}/v1/stream`, [
    'flowplan.v1.json',
    `bearer.${token}`,
  ]);
  const client: Client = {
    workspace,
    ids: new Set(),
    duplicates: 0,
    bytes: 0,
    close: () => ws.terminate(),
  };
  ws.on('message', (data) => receive(client, String(data)));
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(client));
    ws.once('error', reject);
  });
}

async function subscribers(server: Server, metric: number): Promise<number> {
  const text = await (await fetch(server.metrics)).text();
  return (
    [...text.matchAll(/flowplan_stream_subscribers\{transport="\w+"\} (\d+)/g)].reduce(
      (n, m) => n + Number(m[1]),
      0,
    ) - metric
  );
}

const db = await benchDatabase('stream');
const a = await startServer(db.url);
const sql = postgres(db.url, { max: 2, onnotice: () => {} });
const tokens: string[] = [];
const flows: string[] = [];
for (let i = 0; i < WORKSPACES; i++) {
  const { id } = await createWorkspace(sql, { name: `Workspace ${i}`, plan: 'pro' });
  const { key } = await createKey(sql, { workspaceId: id, role: 'admin', scopes: [...SCOPES] });
  tokens.push(key);
  const res = await fetch(`${a.url}/v1/flows`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      name: `Flow ${i}`,
      tasks: [{ name: 'One' }, { name: 'Two', after: [0] }],
    }),
  });
  flows.push(((await res.json()) as { id: string }).id);
}

/** WRITES_PER_SECOND writes for `seconds`, round-robin over the workspaces; returns how many went to each. */
async function write(base: string, seconds: number): Promise<number[]> {
  const perWorkspace = new Array<number>(WORKSPACES).fill(0);
  const started = performance.now();
  const pending: Promise<void>[] = [];
  for (let n = 0; n < seconds * WRITES_PER_SECOND; n++) {
    const due = started + (n * 1000) / WRITES_PER_SECOND;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    const w = n % WORKSPACES;
    perWorkspace[w]!++;
    pending.push(
      fetch(`${base}/v1/flows/${flows[w]}`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${tokens[w]}`, 'content-type': 'application/json' },
        body: JSON.stringify({ description: `change ${n}` }),
      }).then(async (res) => {
        if (res.status !== 200) throw new Error(`PATCH ${res.status}`);
        await res.arrayBuffer();
      }),
    );
  }
  await Promise.all(pending);
  return perWorkspace;
}

// Warm up, then the cost of the writes alone (no subscriber, no poller).
await write(a.url, 2);
await sleep(1000);
const quietBefore = usage(a.child.pid!);
const baselineSeconds = Math.min(10, SECONDS);
await write(a.url, baselineSeconds);
await sleep(1000);
const writeCpuMsPerWrite =
  (usage(a.child.pid!).cpuMs - quietBefore.cpuMs) / (baselineSeconds * WRITES_PER_SECOND);

// Subscribe.
const before = usage(a.child.pid!);
const clients: Client[] = [];
for (let i = 0; i < SUBSCRIBERS; i += 200) {
  const batch = [];
  for (let j = i; j < Math.min(SUBSCRIBERS, i + 200); j++) {
    const workspace = j % WORKSPACES;
    batch.push(
      j % 2 === 0
        ? sseClient(a.url, tokens[workspace]!, workspace)
        : wsClient(a.url, tokens[workspace]!, workspace),
    );
  }
  clients.push(...(await Promise.all(batch)));
}
while ((await subscribers(a, 0)) < SUBSCRIBERS) await sleep(200);
await sleep(2000);
const subscribed = usage(a.child.pid!);

// Stream.
latencies.length = 0;
const pgBefore = postgresCpuMs();
const perWorkspace = await write(a.url, SECONDS);
const expected = perWorkspace.reduce((n, k) => n + k, 0) * (SUBSCRIBERS / WORKSPACES);
const deadline = Date.now() + 30_000;
const received = () => clients.reduce((n, c) => n + c.ids.size, 0);
while (received() < expected && Date.now() < deadline) await sleep(200);
const streamed = usage(a.child.pid!);
const pgStreamMs = postgresCpuMs() - pgBefore;
const delivered = received();
const missing = clients.reduce(
  (n, c) => n + Math.max(0, perWorkspace[c.workspace]! - c.ids.size),
  0,
);
const duplicates = clients.reduce((n, c) => n + c.duplicates, 0);
const streamBytes = clients.reduce((n, c) => n + c.bytes, 0);
const streamLatencies = [...latencies].sort((x, y) => x - y);
const streamCpuMs =
  streamed.cpuMs - subscribed.cpuMs - writeCpuMsPerWrite * SECONDS * WRITES_PER_SECOND;
for (const c of clients) c.close();
await sleep(2000);

// Poll: the same freshness (within a second) by polling the work view, as integrators do today.
let polls = 0;
let pollBytes = 0;
let stopPolling = false;
const pollBefore = usage(a.child.pid!);
const pollers = Array.from({ length: POLLERS }, async (_, i) => {
  const w = i % WORKSPACES;
  let etag: string | null = null;
  await sleep(Math.random() * 1000);
  while (!stopPolling) {
    const next = performance.now() + 1000;
    const res = await fetch(`${a.url}/v1/work/available`, {
      headers: { authorization: `Bearer ${tokens[w]}`, ...(etag ? { 'if-none-match': etag } : {}) },
    });
    const body = Buffer.from(await res.arrayBuffer());
    polls++;
    // Body and status line and headers as they travel (HTTP/1.1 framing, approximately).
    pollBytes +=
      body.length + 17 + [...res.headers].reduce((n, [k, v]) => n + k.length + v.length + 4, 0);
    if (res.status === 200) etag = res.headers.get('etag');
    await sleep(Math.max(0, next - performance.now()));
  }
});
await write(a.url, POLL_SECONDS);
stopPolling = true;
await Promise.all(pollers);
const polled = usage(a.child.pid!);
const pollCpuMs =
  polled.cpuMs - pollBefore.cpuMs - writeCpuMsPerWrite * POLL_SECONDS * WRITES_PER_SECOND;
// Scaled to as many pollers as there were subscribers, for as long.
const scale = (SUBSCRIBERS / POLLERS) * (SECONDS / POLL_SECONDS);
const pollingAtScale = {
  requests: Math.round(polls * scale),
  serverCpuMs: Math.round(pollCpuMs * scale),
  bytes: Math.round(pollBytes * scale),
};

// Two processes: subscribers on B, writes through A.
const b = await startServer(db.url);
const cross: Client[] = [];
for (let i = 0; i < CROSS_SUBSCRIBERS; i++)
  cross.push(
    await (i % 2 === 0 ? sseClient : wsClient)(b.url, tokens[i % WORKSPACES]!, i % WORKSPACES),
  );
while ((await subscribers(b, 0)) < CROSS_SUBSCRIBERS) await sleep(200);
latencies.length = 0;
const crossWrites = await write(a.url, 5);
const crossExpected = cross.reduce((n, c) => n + crossWrites[c.workspace]!, 0);
const crossDeadline = Date.now() + 30_000;
while (cross.reduce((n, c) => n + c.ids.size, 0) < crossExpected && Date.now() < crossDeadline)
  await sleep(100);
const crossLatencies = [...latencies].sort((x, y) => x - y);
const crossReceived = cross.reduce((n, c) => n + c.ids.size, 0);
for (const c of cross) c.close();

a.child.kill('SIGTERM');
b.child.kill('SIGTERM');
await Promise.all(
  [a, b].map(
    (s) =>
      new Promise((resolve) =>
        s.child.exitCode !== null ? resolve(null) : s.child.once('exit', resolve),
      ),
  ),
);
await sql.end();
await db.drop();

const rssPerSubscriberKB = (subscribed.rss - before.rss) / SUBSCRIBERS / 1024;
const p99 = quantile(streamLatencies, 0.99);
console.log(
  JSON.stringify({
    name: 'bench:stream',
    machine: machine(),
    params: {
      subscribers: SUBSCRIBERS,
      sse: Math.ceil(SUBSCRIBERS / 2),
      websocket: Math.floor(SUBSCRIBERS / 2),
      workspaces: WORKSPACES,
      writesPerSecond: WRITES_PER_SECOND,
      seconds: SECONDS,
    },
    streaming: {
      commitToReceiptMs: {
        p50: quantile(streamLatencies, 0.5),
        p99,
        max: streamLatencies.at(-1) ?? null,
      },
      eventsExpected: expected,
      eventsDelivered: delivered,
      missing,
      duplicates,
      serverRssMB: {
        before: round(before.rss / 2 ** 20),
        subscribed: round(subscribed.rss / 2 ** 20),
        afterStreaming: round(streamed.rss / 2 ** 20),
      },
      rssPerSubscriberKB: round(rssPerSubscriberKB, 2),
      serverCpuMsPer1000Events: round((streamCpuMs / delivered) * 1000, 2),
      serverCpuMsPerWrite: round(writeCpuMsPerWrite, 2),
      postgresCpuMs: Math.round(pgStreamMs),
      bytes: streamBytes,
    },
    polling: {
      measured: {
        pollers: POLLERS,
        seconds: POLL_SECONDS,
        requests: polls,
        serverCpuMs: Math.round(pollCpuMs),
        bytes: pollBytes,
      },
      scaledTo: { pollers: SUBSCRIBERS, seconds: SECONDS, ...pollingAtScale },
      savedByStreaming: {
        requests: round(pollingAtScale.requests / SUBSCRIBERS, 1),
        serverCpu: round(pollingAtScale.serverCpuMs / Math.max(1, streamCpuMs), 1),
        bytes: round(pollingAtScale.bytes / Math.max(1, streamBytes), 1),
      },
      note: 'ratios are polling ÷ streaming for the same subscribers over the same time; polling is measured with fewer clients for less time and scaled linearly',
    },
    twoProcesses: {
      subscribersOnSecond: CROSS_SUBSCRIBERS,
      eventsExpected: crossExpected,
      eventsReceived: crossReceived,
      commitToReceiptMs: {
        p50: quantile(crossLatencies, 0.5),
        p99: quantile(crossLatencies, 0.99),
      },
    },
    targets: {
      p99Ms: { target: 100, met: p99 !== null && p99 <= 100 },
      rssPerSubscriberKB: { target: 16, met: rssPerSubscriberKB <= 16 },
      exactlyOnce: { met: missing === 0 && duplicates === 0 },
    },
  }),
);

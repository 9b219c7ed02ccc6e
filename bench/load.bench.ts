/**
 * `npm run bench:load -- [processes]`: an integrator workload against N flowplan processes
 * (default 2) on one database. Seeds 40 flows of 50 chained tasks; then, for BENCH_SECONDS
 * (default 20), two client threads run 60 pollers of the work views and 10 of single flows
 * (each conditional, with the last ETag it saw for the URL) and 8 actors that start and
 * complete tasks in order, every request to the next process in turn. Reports per route
 * p50/p99/p99.9, the 304 share, errors, and the CPU the servers and Postgres spent per 1,000
 * requests; then a correctness sweep: every acknowledged transition is in the flow, as every
 * process serves it, and no process's in-progress view disagrees with the flows.
 * Prints one JSON line.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import postgres from 'postgres';
import { createKey, createWorkspace } from '../src/services/auth/provision.ts';
import { benchDatabase, machine, postgresCpuMs } from './support.ts';

const PROCESSES = Number(process.argv[2] ?? 2);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const FLOWS = 40;
const TASKS = 50;

const database = await benchDatabase('load');
/** Where benchDatabase starts its cluster (when no DATABASE_URL names another server). */
const BENCH_CLUSTER = path.resolve('.flowplan', 'bench-load');
const children: ChildProcess[] = [];

function startServer(): Promise<string> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: {
      ...process.env,
      DATABASE_URL: database.url,
      PORT: '0',
      LOG_LEVEL: 'warn',
      WORKERS: '1',
      RATE_LIMIT_PER_MINUTE: '100000000',
      RATE_LIMIT_BURST: '100000000',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  let output = '';
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (chunk) => {
      output += chunk;
      const match = /flowplan is running at (\S+)/.exec(output);
      if (match) resolve(match[1]!);
    });
    child.once('exit', (code) => reject(new Error(`server exited ${code}: ${output}`)));
  });
}

/** CPU (ms) a process has used so far, its threads included (Linux /proc). */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

// The first process migrates; the others start on a ready database.
const urls = [await startServer()];
urls.push(...(await Promise.all(Array.from({ length: PROCESSES - 1 }, () => startServer()))));

const sql = postgres(database.url, { max: 2, onnotice: () => {} });
const workspace = await createWorkspace(sql, { name: 'Load', plan: 'pro' });
const keys = await Promise.all(
  [0, 1].map(() =>
    createKey(sql, {
      workspaceId: workspace.id,
      role: 'admin',
      scopes: ['flows:read', 'flows:write', 'work:write'],
    }),
  ),
);
const flows: { id: string; tasks: string[] }[] = [];
for (let f = 0; f < FLOWS; f++) {
  const tasks = Array.from({ length: TASKS }, (_, i) => ({
    name: `T${i}`,
    estimateHours: 2 + (i % 5),
    ...(i > 0 ? { after: [i - 1] } : {}),
  }));
  const response = await fetch(`${urls[f % urls.length]}/v1/flows`, {
    method: 'POST',
    headers: { authorization: `Bearer ${keys[0]!.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: `Flow ${f}`, tasks }),
  });
  const flow = (await response.json()) as { id: string; tasks: { id: string }[] };
  flows.push({ id: flow.id, tasks: flow.tasks.map((t) => t.id) });
}

const cpuBefore = children.map((c) => cpuMs(c.pid!));
const pgBefore = postgresCpuMs(BENCH_CLUSTER);
const started = Date.now();
type Stats = Record<
  string,
  { latencies: number[]; statuses: Record<number, number>; errors: number }
>;
type Acknowledged = { flowId: string; taskId: string; step: 'start' | 'complete' }[];
const results = await Promise.all(
  [0, 1].map(
    (thread) =>
      new Promise<{ stats: Stats; acknowledged: Acknowledged }>((resolve, reject) => {
        const worker = new Worker(new URL('./load-worker.mjs', import.meta.url), {
          workerData: {
            urls,
            key: keys[thread]!.key,
            seconds: SECONDS,
            pollers: 30,
            readers: 5,
            actors: 4,
            seed: thread + 1,
            // Each thread acts on its own half of the flows, and reads all of them.
            flows: flows.filter((_, i) => i % 2 === thread),
          },
        });
        worker.once('message', resolve);
        worker.once('error', reject);
      }),
  ),
);
const seconds = (Date.now() - started) / 1000;
const serverCpu = children.reduce((sum, c, i) => sum + cpuMs(c.pid!) - cpuBefore[i]!, 0);
const pgCpu = postgresCpuMs(BENCH_CLUSTER) - pgBefore;

const merged: Stats = {};
for (const { stats } of results) {
  for (const [route, s] of Object.entries(stats)) {
    const into = (merged[route] ??= { latencies: [], statuses: {}, errors: 0 });
    into.latencies.push(...s.latencies);
    into.errors += s.errors;
    for (const [status, n] of Object.entries(s.statuses))
      into.statuses[Number(status)] = (into.statuses[Number(status)] ?? 0) + n;
  }
}
const quantile = (sorted: number[], q: number) =>
  Number(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(2));
let requests = 0;
let errors = 0;
const routes = Object.fromEntries(
  Object.entries(merged).map(([route, s]) => {
    const sorted = [...s.latencies].sort((a, b) => a - b);
    const count = sorted.length;
    requests += count;
    const failed =
      s.errors +
      Object.entries(s.statuses)
        .filter(([status]) => Number(status) >= 400)
        .reduce((sum, [, n]) => sum + n, 0);
    errors += failed;
    return [
      route,
      {
        requests: count,
        perSecond: Math.round(count / seconds),
        p50Ms: quantile(sorted, 0.5),
        p99Ms: quantile(sorted, 0.99),
        p999Ms: quantile(sorted, 0.999),
        notModifiedShare: Number(((s.statuses[304] ?? 0) / Math.max(1, count)).toFixed(3)),
        errors: failed,
        statuses: s.statuses,
      },
    ];
  }),
);

// The sweep: each process serves every acknowledged transition, and its in-progress view agrees with the flows.
const acknowledged = results.flatMap((r) => r.acknowledged);
const expectDone = new Set(acknowledged.filter((a) => a.step === 'complete').map((a) => a.taskId));
const expectStarted = new Set(acknowledged.filter((a) => a.step === 'start').map((a) => a.taskId));
let missing = 0;
let viewDisagreements = 0;
for (const url of urls) {
  const get = async (path: string) =>
    (
      await fetch(url + path, { headers: { authorization: `Bearer ${keys[0]!.key}` } })
    ).json() as Promise<any>;
  const inProgress = new Set<string>();
  for (const flow of flows) {
    const body = await get(`/v1/flows/${flow.id}`);
    for (const task of body.tasks as { id: string; status: string }[]) {
      if (expectDone.has(task.id) && task.status !== 'done') missing++;
      else if (
        expectStarted.has(task.id) &&
        task.status !== 'in_progress' &&
        task.status !== 'done'
      )
        missing++;
      if (task.status === 'in_progress') inProgress.add(task.id);
    }
  }
  const viewed = new Set<string>();
  for (let from = 0; ; from += 100) {
    const page = await get(`/v1/work/in-progress?size=100&from=${from}`);
    for (const item of page.items as { taskId: string }[]) viewed.add(item.taskId);
    if (from + 100 >= page.total) break;
  }
  for (const id of inProgress) if (!viewed.has(id)) viewDisagreements++;
  for (const id of viewed) if (!inProgress.has(id)) viewDisagreements++;
}

process.stdout.write(
  JSON.stringify({
    name: 'load',
    machine: machine(),
    processes: PROCESSES,
    seconds: Number(seconds.toFixed(1)),
    requests,
    perSecond: Math.round(requests / seconds),
    errors,
    routes,
    cpuMsPer1000Requests: {
      servers: Number(((1000 * serverCpu) / requests).toFixed(1)),
      postgres: Number(((1000 * pgCpu) / requests).toFixed(1)),
    },
    sweep: {
      acknowledgedTransitions: acknowledged.length,
      missing,
      viewDisagreements,
      processesChecked: urls.length,
    },
  }) + '\n',
);

for (const child of children) child.kill('SIGTERM');
await Promise.all(
  children.map(
    (c) =>
      new Promise((resolve) => (c.exitCode !== null ? resolve(null) : c.once('exit', resolve))),
  ),
);
await sql.end();
await database.drop();

/**
 * One thread of bench:load's clients (bench/load.bench.ts): pollers of the work views and of
 * flows (conditional, with the last ETag of each URL) and actors that start and complete ready
 * tasks. Every request goes to the next server process in turn. Posts back, per route, the
 * latencies and statuses, the network errors, and every transition the server acknowledged.
 */
import { parentPort, workerData } from 'node:worker_threads';

interface Work {
  urls: string[];
  key: string;
  seconds: number;
  pollers: number;
  readers: number;
  actors: number;
  flows: { id: string; tasks: string[] }[];
  seed: number;
}

const w = workerData as Work;
const auth = { authorization: `Bearer ${w.key}` };
const VIEWS = ['available', 'blocked', 'in-progress'];
const stats: Record<
  string,
  { latencies: number[]; statuses: Record<number, number>; errors: number }
> = {};
const acknowledged: { flowId: string; taskId: string; step: 'start' | 'complete' }[] = [];
let turn = w.seed;
let random = w.seed * 7919 + 1;
const rand = (n: number) => {
  random = (random * 48271) % 2147483647;
  return random % n;
};
const stopAt = Date.now() + w.seconds * 1000;

async function call(
  route: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; etag: string | null; body: any } | null> {
  const entry = (stats[route] ??= { latencies: [], statuses: {}, errors: 0 });
  const url = w.urls[turn++ % w.urls.length]!;
  const started = performance.now();
  try {
    const response = await fetch(url + path, { method, headers: { ...auth, ...headers } });
    const text = await response.text();
    entry.latencies.push(performance.now() - started);
    entry.statuses[response.status] = (entry.statuses[response.status] ?? 0) + 1;
    return {
      status: response.status,
      etag: response.headers.get('etag'),
      body:
        text && response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : null,
    };
  } catch {
    entry.errors++;
    return null;
  }
}

async function poller(): Promise<void> {
  const tags = new Map<string, string>();
  while (Date.now() < stopAt) {
    const path = `/v1/work/${VIEWS[rand(VIEWS.length)]}?size=50`;
    const tag = tags.get(path);
    const res = await call('GET /v1/work/{view}', 'GET', path, tag ? { 'if-none-match': tag } : {});
    if (res?.etag) tags.set(path, res.etag);
  }
}

async function reader(): Promise<void> {
  const tags = new Map<string, string>();
  while (Date.now() < stopAt) {
    const path = `/v1/flows/${w.flows[rand(w.flows.length)]!.id}`;
    const tag = tags.get(path);
    const res = await call('GET /v1/flows/{id}', 'GET', path, tag ? { 'if-none-match': tag } : {});
    if (res?.etag) tags.set(path, res.etag);
  }
}

/** Starts and completes the flows' tasks in order (a chain), each actor its own flows. */
async function actor(index: number): Promise<void> {
  const mine = w.flows.filter((_, i) => i % w.actors === index);
  for (const flow of mine) {
    for (const task of flow.tasks) {
      for (const step of ['start', 'complete'] as const) {
        if (Date.now() >= stopAt) return;
        const res = await call(
          `POST /v1/flows/{id}/tasks/{id}/${step}`,
          'POST',
          `/v1/flows/${flow.id}/tasks/${task}/${step}`,
        );
        if (res?.status === 200) acknowledged.push({ flowId: flow.id, taskId: task, step });
        else return;
      }
    }
  }
}

/** Run by the thread's bootstrap (bench/load-worker.mjs). */
export async function main(): Promise<void> {
  await Promise.all([
    ...Array.from({ length: w.pollers }, () => poller()),
    ...Array.from({ length: w.readers }, () => reader()),
    ...Array.from({ length: w.actors }, (_, i) => actor(i)),
  ]);
  parentPort!.postMessage({ stats, acknowledged });
}

/**
 * `npm run bench:export`: POST /v1/flows/{id}/exports through HTTP for flows of 50, 500 and
 * 5,000 tasks, PNG and PDF: median ms, bytes, the process's peak RSS (render workers are
 * threads of it) and the render pool's size. Beside it, the layout engines this project
 * could have used, on the same graphs: Graphviz dot (WASM) and ELK layered against our
 * layered layout (50 and 500 tasks; pass --peers-5000 to wait for them at 5,000 too).
 * Targets (issue 7): 50 tasks < 300 ms, 500 < 2 s, 5,000 < 20 s for either format.
 *
 * Then the published 500-task flow's page under load (target: a cached page >= 5,000 req/s):
 * 50 keep-alive connections from a lean client in two worker threads (bench/raw-load.ts;
 * autocannon, at about 3,300 req/s, was the bottleneck here), 8 s each after a warm-up,
 * asking as browsers do (gzip), without compression, and conditionally (304). The client
 * shares this machine's cores with the server.
 * Prints one JSON line: { name, machine, workers, exports: [...], layout: [...], publicPage }.
 */
import { execFileSync } from 'node:child_process';
import { Graphviz } from '@hpcc-js/wasm-graphviz';
import elk from 'elkjs/lib/elk.bundled.js';
import { layeredLayout } from '../src/services/exports/layout.ts';
import type { DiagramModel } from '../src/services/exports/diagram.ts';
import { flowBody } from './export-flows.ts';
import { rawLoad } from './raw-load.ts';
import { benchDatabase, machine, startBenchApp } from './support.ts';

const SIZES = [50, 500, 5000];
const RUNS: Record<number, number> = { 50: 7, 500: 5, 5000: 3 };
const PEERS_5000 = process.argv.includes('--peers-5000');

const PUBLIC_TASKS = 500;
const LOAD_SECONDS = 8;
const CONNECTIONS = 50;
/** One load run on the page (after the bench's own renders, the server is otherwise idle). */
const load = (url: string, headers: Record<string, string>, seconds = LOAD_SECONDS) =>
  rawLoad(url, headers, { connections: CONNECTIONS, seconds, threads: 2 });

/** One export in a process of its own (bench/export-one.ts): its time and the memory it adds at its peak. */
function exportAlone(
  format: string,
  n: number,
): { ms: number; extraMB: number; baselineMB: number } {
  const out = execFileSync(
    process.execPath,
    ['--expose-gc', '--import', 'tsx', 'bench/export-one.ts', format, String(n)],
    { encoding: 'utf8' },
  );
  const { ms, extraMB, baselineMB } = JSON.parse(out) as {
    ms: number;
    extraMB: number;
    baselineMB: number;
  };
  return { ms, extraMB, baselineMB };
}

const median = (values: number[]) =>
  Number([...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!.toFixed(1));

let peakRss = 0;
const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 20);

const database = await benchDatabase('export');
const app = await startBenchApp(database.url);
const auth = { authorization: `Bearer ${app.demo!.key}`, 'content-type': 'application/json' };

const exports: unknown[] = [];
let publicFlowId = '';
const layouts: unknown[] = [];
const graphviz = await Graphviz.load();
for (const n of SIZES) {
  const body = flowBody(n);
  const created = await fetch(`${app.url}/v1/flows`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify(body),
  });
  if (created.status !== 201) throw new Error(`create: ${created.status} ${await created.text()}`);
  const flowId = ((await created.json()) as { id: string }).id;
  if (n === PUBLIC_TASKS) publicFlowId = flowId;
  for (const format of ['png', 'pdf'] as const) {
    const times: number[] = [];
    let bytes = 0;
    peakRss = process.memoryUsage().rss;
    for (let run = 0; run < RUNS[n]!; run++) {
      const started = performance.now();
      const res = await fetch(`${app.url}/v1/flows/${flowId}/exports`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ format }),
      });
      const file = Buffer.from(await res.arrayBuffer());
      times.push(performance.now() - started);
      if (res.status !== 200)
        throw new Error(`export ${format} ${n}: ${res.status} ${file.toString()}`);
      bytes = file.length;
    }
    exports.push({
      tasks: n,
      format,
      runs: times.length,
      p50Ms: median(times),
      bytes,
      peakRssMB: Math.round(peakRss / 2 ** 20),
      alone: exportAlone(format, n),
    });
  }

  const model: DiagramModel = {
    flowId,
    flowName: body.name,
    version: 1,
    dueDate: null,
    projectedFinish: null,
    onTrack: null,
    finishP80: null,
    tasks: body.tasks.map((task, i) => ({
      id: `t${i}`,
      name: task.name,
      status: 'ready',
      estimateHours: task.estimateHours,
      estimateRange: null,
      critical: false,
      dependsOn: task.after,
    })),
  };
  let started = performance.now();
  layeredLayout(model);
  const entry: Record<string, unknown> = {
    tasks: n,
    layeredMs: Number((performance.now() - started).toFixed(1)),
  };
  if (n < 5000 || PEERS_5000) {
    const edges = body.tasks.flatMap((task, i) => task.after.map((dep) => [dep, i] as const));
    const dot = `digraph{rankdir=LR;node[shape=box,width=2.8,height=0.8];${body.tasks.map((task, i) => `n${i}[label="${task.name}"];`).join('')}${edges.map(([a, b]) => `n${a}->n${b};`).join('')}}`;
    started = performance.now();
    graphviz.layout(dot, 'json', 'dot');
    entry.graphvizDotMs = Math.round(performance.now() - started);
    const graph = {
      id: 'root',
      layoutOptions: { 'elk.algorithm': 'layered', 'elk.direction': 'RIGHT' },
      children: body.tasks.map((_, i) => ({ id: `n${i}`, width: 200, height: 58 })),
      edges: edges.map(([a, b], k) => ({ id: `e${k}`, sources: [`n${a}`], targets: [`n${b}`] })),
    };
    started = performance.now();
    await new elk.default().layout(graph);
    entry.elkLayeredMs = Math.round(performance.now() - started);
  }
  layouts.push(entry);
}

clearInterval(sampler);

const published = await fetch(`${app.url}/v1/flows/${publicFlowId}/publish`, {
  method: 'POST',
  headers: auth,
});
const pageUrl =
  app.url + new URL(((await published.json()) as { publicUrl: string }).publicUrl).pathname;
let started = performance.now();
const first = await fetch(pageUrl, { headers: { 'accept-encoding': 'identity' } });
const page = Buffer.from(await first.arrayBuffer());
const firstRequestMs = Math.round(performance.now() - started);
await load(pageUrl, { 'accept-encoding': 'gzip, deflate, br' }, 2);
const publicPage = {
  tasks: PUBLIC_TASKS,
  pageBytes: page.length,
  firstRequestMs,
  loadSeconds: LOAD_SECONDS,
  connections: CONNECTIONS,
  gzip: await load(pageUrl, { 'accept-encoding': 'gzip, deflate, br' }),
  identity: await load(pageUrl, {}),
  // The gzip variant's ETag, as a browser that cached the page would send it back.
  conditional304: await load(pageUrl, {
    'accept-encoding': 'gzip, deflate, br',
    'if-none-match': (await fetch(pageUrl)).headers.get('etag')!,
  }),
};
process.stdout.write(
  `${JSON.stringify({ name: 'export', machine: machine(), workers: app.services.config.workers, exports, layout: layouts, publicPage })}\n`,
);
await app.close();
await database.drop();

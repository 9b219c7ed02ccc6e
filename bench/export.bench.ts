/**
 * `npm run bench:export`: POST /v1/flows/{id}/exports through HTTP for flows of 50, 500 and
 * 5,000 tasks, PNG and PDF: median ms, bytes, the process's peak RSS (render workers are
 * threads of it) and the render pool's size. Beside it, the layout engines this project
 * could have used, on the same graphs: Graphviz dot (WASM) and ELK layered against our
 * layered layout (50 and 500 tasks; pass --peers-5000 to wait for them at 5,000 too).
 * Targets (issue 7): 50 tasks < 300 ms, 500 < 2 s, 5,000 < 20 s for either format.
 * Prints one JSON line: { name, machine, workers, exports: [...], layout: [...] }.
 */
import { Graphviz } from '@hpcc-js/wasm-graphviz';
import elk from 'elkjs/lib/elk.bundled.js';
import { layout } from '../src/exports/layout.ts';
import type { DiagramModel } from '../src/exports/diagram.ts';
import { benchDatabase, machine, startBenchApp } from './support.ts';

const SIZES = [50, 500, 5000];
const RUNS: Record<number, number> = { 50: 7, 500: 5, 5000: 3 };
const PEERS_5000 = process.argv.includes('--peers-5000');

/** Plans shaped like real ones: each task waits for up to three of the 60 before it. */
function flowBody(n: number) {
  let seed = 42;
  const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
  const tasks = Array.from({ length: n }, (_, i) => {
    const after = new Set<number>();
    for (let k = 0; k < 3 && i > 0; k++) after.add(Math.max(0, i - 1 - Math.floor(random() * Math.min(i, 60))));
    return { name: `Task ${i} of the plan`, estimateHours: 4 + Math.floor(random() * 40), after: [...after] };
  });
  return { name: `Export bench ${n}`, dueDate: '2030-12-31', tasks };
}

const median = (values: number[]) => Number([...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!.toFixed(1));

let peakRss = 0;
const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 20);

const database = await benchDatabase('export');
const app = await startBenchApp(database.url);
const auth = { authorization: `Bearer ${app.demo!.key}`, 'content-type': 'application/json' };

const exports: unknown[] = [];
const layouts: unknown[] = [];
const graphviz = await Graphviz.load();
for (const n of SIZES) {
  const body = flowBody(n);
  const created = await fetch(`${app.url}/v1/flows`, { method: 'POST', headers: auth, body: JSON.stringify(body) });
  if (created.status !== 201) throw new Error(`create: ${created.status} ${await created.text()}`);
  const flowId = ((await created.json()) as { id: string }).id;
  for (const format of ['png', 'pdf'] as const) {
    const times: number[] = [];
    let bytes = 0;
    peakRss = process.memoryUsage().rss;
    for (let run = 0; run < RUNS[n]!; run++) {
      const started = performance.now();
      const res = await fetch(`${app.url}/v1/flows/${flowId}/exports`, { method: 'POST', headers: auth, body: JSON.stringify({ format }) });
      const file = Buffer.from(await res.arrayBuffer());
      times.push(performance.now() - started);
      if (res.status !== 200) throw new Error(`export ${format} ${n}: ${res.status} ${file.toString()}`);
      bytes = file.length;
    }
    exports.push({ tasks: n, format, runs: times.length, p50Ms: median(times), bytes, peakRssMB: Math.round(peakRss / 2 ** 20) });
  }

  const model: DiagramModel = {
    flowId, flowName: body.name, version: 1, dueDate: null, projectedFinish: null, onTrack: null,
    tasks: body.tasks.map((task, i) => ({ id: `t${i}`, name: task.name, status: 'ready', estimateHours: task.estimateHours, critical: false, dependsOn: task.after })),
  };
  let started = performance.now();
  layout(model);
  const entry: Record<string, unknown> = { tasks: n, layeredMs: Number((performance.now() - started).toFixed(1)) };
  if (n < 5000 || PEERS_5000) {
    const edges = body.tasks.flatMap((task, i) => task.after.map((dep) => [dep, i] as const));
    const dot = `digraph{rankdir=LR;node[shape=box,width=2.8,height=0.8];${body.tasks.map((task, i) => `n${i}[label="${task.name}"];`).join('')}${edges.map(([a, b]) => `n${a}->n${b};`).join('')}}`;
    started = performance.now();
    graphviz.layout(dot, 'json', 'dot');
    entry.graphvizDotMs = Math.round(performance.now() - started);
    const graph = {
      id: 'root', layoutOptions: { 'elk.algorithm': 'layered', 'elk.direction': 'RIGHT' },
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
process.stdout.write(`${JSON.stringify({ name: 'export', machine: machine(), workers: app.services.config.workers, exports, layout: layouts })}\n`);
await app.close();
await database.drop();

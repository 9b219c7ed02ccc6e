/**
 * One export in a process of its own, for bench:export's memory figures: the process first
 * loads the renderers and draws a small flow (what a warm render worker holds), then draws
 * the export asked for and reports its time and the memory it added at its peak (RSS sampled
 * every 5 ms, and the process's high-water mark). `node --import tsx bench/export-one.ts png 500`.
 * Prints one JSON line.
 */
import { readFileSync } from 'node:fs';
import { planPdf, type PlanDocument } from '../src/services/exports/pdf.ts';
import { diagramPng } from '../src/services/exports/png.ts';
import type { DiagramModel } from '../src/services/exports/diagram.ts';
import { flowBody } from './export-flows.ts';

const [format, size] = [process.argv[2] as 'png' | 'pdf', Number(process.argv[3])];

/** The flow of bench:export as the renderers get it: statuses by position, the longest path critical. */
function plan(n: number): PlanDocument {
  const body = flowBody(n);
  const finish: number[] = [];
  const from: number[] = [];
  body.tasks.forEach((task, i) => {
    const before = task.after.reduce((best, d) => (best < 0 || finish[d]! > finish[best]! ? d : best), -1);
    from[i] = before;
    finish[i] = (before < 0 ? 0 : finish[before]!) + task.estimateHours;
  });
  const critical = new Set<number>();
  for (let i = finish.indexOf(Math.max(...finish)); i >= 0; i = from[i]!) critical.add(i);
  const statuses = ['done', 'in_progress', 'ready', 'blocked'] as const;
  const model: DiagramModel = {
    flowId: 'flw_bench', flowName: body.name, version: 1, dueDate: body.dueDate, projectedFinish: '2030-11-29', onTrack: true,
    tasks: body.tasks.map((task, i) => ({
      id: `t${i}`, name: task.name, status: i < n / 10 ? 'done' : statuses[1 + (i % 3)]!, estimateHours: task.estimateHours, critical: critical.has(i), dependsOn: task.after,
    })),
  };
  return {
    model, startDate: '2030-01-07', criticalPath: [...critical].map((i) => body.tasks[i]!.name),
    rows: body.tasks.map((task, i) => ({ name: task.name, status: model.tasks[i]!.status, estimateHours: task.estimateHours, critical: critical.has(i), startDay: i, finishDay: i + 1, start: '2030-01-07', finish: '2030-01-08' })),
    report: {
      flowId: 'flw_bench', flowName: body.name, completion: 0.1, tasksTotal: n, tasksDone: n / 10, tasksReady: 0, tasksBlocked: 0, hoursEstimated: null, hoursRemaining: null,
      unestimatedTasks: [], orphanedTasks: [], workload: [], topBlockers: [],
    },
    unestimatedNames: [], generatedAt: new Date(),
  };
}

/**
 * The process's peak RSS (VmHWM, of this process image only: getrusage's maxRSS would report a
 * parent's size to a process started from a large one, as bench:export is).
 */
function highWater(): number {
  const kB = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
  return kB ? Number(kB[1]) * 1024 : 0;
}

const render = async (document: PlanDocument) => (format === 'png' ? diagramPng(document.model) : await planPdf(document));

await render(plan(20));
const document = plan(size);
global.gc?.();
const baseline = process.memoryUsage().rss;
let peak = baseline;
const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
const started = performance.now();
const bytes = await render(document);
const ms = performance.now() - started;
clearInterval(sampler);
peak = Math.max(peak, process.memoryUsage().rss, highWater());
const MB = 2 ** 20;
process.stdout.write(`${JSON.stringify({ format, tasks: size, ms: Math.round(ms), bytes: bytes.length, baselineMB: Math.round(baseline / MB), peakMB: Math.round(peak / MB), extraMB: Math.round((peak - baseline) / MB) })}\n`);

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
import { plan } from './export-flows.ts';

const [format, size] = [process.argv[2] as 'png' | 'pdf', Number(process.argv[3])];

/**
 * The process's peak RSS (VmHWM, of this process image only: getrusage's maxRSS would report a
 * parent's size to a process started from a large one, as bench:export is).
 */
function highWater(): number {
  const kB = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
  return kB ? Number(kB[1]) * 1024 : 0;
}

const render = async (document: PlanDocument) =>
  format === 'png' ? diagramPng(document.model) : await planPdf(document);

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
process.stdout.write(
  `${JSON.stringify({ format, tasks: size, ms: Math.round(ms), bytes: bytes.length, baselineMB: Math.round(baseline / MB), peakMB: Math.round(peak / MB), extraMB: Math.round((peak - baseline) / MB) })}\n`,
);

/**
 * Piscina worker for exports: layout, SVG, PNG (resvg) and PDF (pdfkit) are CPU work
 * that would stall the event loop for seconds on a large flow. Byte results go back
 * transferred, not copied.
 */
import { move, transferableSymbol, valueSymbol } from 'piscina';
import { threadId } from 'node:worker_threads';
import { planPdf } from '../src/services/exports/pdf.ts';
import type { RenderOutput, RenderTask } from '../src/services/exports/render-task.ts';
import { diagramPng } from '../src/services/exports/png.ts';
import { diagramSvgOf } from '../src/services/exports/svg.ts';
import { markStarted, type Started } from '../src/platform/worker-pool.ts';

/** `fail` and `delayMs` are set only by a RenderService built with the test hooks (never from config). */
export default async function run(
  task: RenderTask & { fail?: boolean; delayMs?: number } & Started,
): Promise<RenderOutput> {
  markStarted(task);
  if (task.fail) throw new Error('render failure forced by the test hook');
  if (task.delayMs) await new Promise((resolve) => setTimeout(resolve, task.delayMs));
  if (task.kind === 'svg')
    return { result: await diagramSvgOf(task.model, task.options), threadId };
  const bytes = task.kind === 'png' ? await diagramPng(task.model) : await planPdf(task.document);
  // A copy of its own: a small Buffer may sit in Node's shared pool, which must not move.
  const value: RenderOutput = { result: new Uint8Array(bytes), threadId };
  const buffers = [(value.result as Uint8Array).buffer];
  return move({
    get [transferableSymbol]() {
      return buffers;
    },
    get [valueSymbol]() {
      return value;
    },
  }) as unknown as RenderOutput;
}

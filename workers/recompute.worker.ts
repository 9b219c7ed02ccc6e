/**
 * Piscina worker: runs the pure graph engine off the main thread. Input typed
 * arrays arrive transferred; the output's arrays are transferred back (not copied)
 * by returning a Piscina-movable wrapper that lists every output buffer.
 */
import { move, transferableSymbol, valueSymbol } from 'piscina';
import { threadId } from 'node:worker_threads';
import { recompute } from '../src/engine/recompute.ts';
import type { RecomputeInput, RecomputeOutput } from '../src/engine/recompute.ts';
import {
  forecastPart,
  type ForecastModel,
  type ForecastPart,
  type ForecastRun,
} from '../src/engine/forecast.ts';
import { markStarted, type FromWorker, type Started } from '../src/platform/worker-pool.ts';

type WorkerOutput = FromWorker<RecomputeOutput>;

export default function run(input: RecomputeInput & Started): WorkerOutput {
  markStarted(input);
  const value: WorkerOutput = { ...recompute(input), threadId };
  const { order, status, es, ef, ls, lf, slack, freeFloat, critical, counts, passes } = value;
  const { start, end, tail, bound } = passes;
  // Each output array owns its own buffer, so all can move without a copy (es may be start
  // itself: each buffer is listed once).
  const arrays = [order, status, es, ef, ls, lf, slack, freeFloat, critical, start, end, tail];
  const buffers = [
    ...new Set([...arrays, bound, ...(counts ? [counts] : [])].map((a) => a.buffer)),
  ];
  // Piscina unwraps the movable on its side: the main thread receives `value` itself.
  return move({
    get [transferableSymbol]() {
      return buffers;
    },
    get [valueSymbol]() {
      return value;
    },
  }) as unknown as WorkerOutput;
}

/** Piscina runs this for `name: 'forecast'`: one part of a forecast's samples. */
export function forecast(
  task: { model: ForecastModel; run: ForecastRun } & Started,
): FromWorker<ForecastPart> {
  markStarted(task);
  const value = { ...forecastPart(task.model, task.run), threadId };
  const buffers = [value.finishes.buffer, value.critical.buffer];
  return move({
    get [transferableSymbol]() {
      return buffers;
    },
    get [valueSymbol]() {
      return value;
    },
  }) as unknown as FromWorker<ForecastPart>;
}

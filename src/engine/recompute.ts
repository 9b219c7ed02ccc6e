import { blockingCounts } from './blocking.ts';
import { cpm } from './cpm.ts';
import { buildGraph, CycleError, topoOrder } from './graph.ts';
import { computeStatus } from './status.ts';

/** Edge i: to[i] depends on from[i]. progress/duration are indexed by node. */
export interface RecomputeInput {
  n: number;
  from: Uint32Array;
  to: Uint32Array;
  progress: Uint8Array;
  duration: Uint32Array;
  /** Blocking counts cost far more than the rest, so callers ask for them explicitly. */
  withCounts: boolean;
}

export interface RecomputeOutput {
  order: Uint32Array;
  status: Uint8Array;
  es: Int32Array;
  ef: Int32Array;
  slack: Int32Array;
  critical: Uint8Array;
  finish: number;
  counts: Uint32Array | null;
}

/**
 * The single entry point shared by the in-process session actor and the worker.
 * Throws CycleError on a cyclic graph: callers refuse cycles before storing, so one
 * here is a bug upstream rather than user input. Input arrays are only read.
 */
export function recompute(input: RecomputeInput): RecomputeOutput {
  const { n, from, to, progress, duration, withCounts } = input;
  if (progress.length !== n || duration.length !== n) {
    throw new RangeError(`progress and duration must have length n = ${n}`);
  }
  const g = buildGraph(n, from, to);
  const topo = topoOrder(g);
  if (topo.order === null) throw new CycleError(topo.cycle);
  const { order } = topo;
  const { es, ef, slack, critical, finish } = cpm(g, order, progress, duration);
  return {
    order,
    status: computeStatus(g, progress),
    es,
    ef,
    slack,
    critical,
    finish,
    counts: withCounts ? blockingCounts(g, order, progress) : null,
  };
}

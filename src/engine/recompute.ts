import { blockingCounts } from './blocking.ts';
import { cpm, type Cpm, type TaskFacts } from './cpm.ts';
import { buildGraph, CycleError, topoOrder } from './graph.ts';
import { computeStatus } from './status.ts';

/**
 * Edge i: to[i] depends on from[i]; progress/duration are indexed by node. Everything after
 * `withCounts` is optional and defaults to the plain schedule: FS links with no lag, no
 * milestones, no constraints (see TaskFacts).
 */
export interface RecomputeInput extends TaskFacts {
  n: number;
  from: Uint32Array;
  to: Uint32Array;
  progress: Uint8Array;
  /** Working days per task (a task in progress: its remaining days); below 1 counts as 1. */
  duration: Uint32Array;
  /** Blocking counts cost far more than the rest, so callers ask for them explicitly. */
  withCounts: boolean;
  /** Per edge, beside from/to: its link type (graph.ts's LINK codes); absent: all FS. */
  linkType?: Uint8Array;
  /** Per edge: its lag in working days (negative: a lead); absent: all 0. */
  lag?: Int32Array;
}

/**
 * The schedule (cpm.ts's Cpm: shown days, floats, and the passes' own numbers), status, a
 * topological order and, when asked for, blocking counts.
 */
export interface RecomputeOutput extends Cpm {
  order: Uint32Array;
  status: Uint8Array;
  counts: Uint32Array | null;
}

/**
 * The single entry point shared by the in-process session actor and the worker.
 * Throws CycleError on a cyclic graph (a cycle through links of any type): callers refuse
 * cycles before storing, so one here is a bug upstream rather than user input. Input arrays
 * are only read.
 */
export function recompute(input: RecomputeInput): RecomputeOutput {
  const { n, from, to, progress, duration, withCounts } = input;
  for (const [name, array] of [
    ['progress', progress],
    ['duration', duration],
    ['milestone', input.milestone],
    ['startNoEarlier', input.startNoEarlier],
    ['finishNoLater', input.finishNoLater],
  ] as const)
    if (array && array.length !== n) throw new RangeError(`${name} must have length n = ${n}`);
  const g = buildGraph(n, from, to, input.linkType, input.lag);
  const topo = topoOrder(g);
  if (topo.order === null) throw new CycleError(topo.cycle);
  const { order } = topo;
  return {
    ...cpm(g, order, progress, duration, input),
    order,
    status: computeStatus(g, progress),
    counts: withCounts ? blockingCounts(g, order, progress) : null,
  };
}

/** Every typed array of an input, for a transfer to a worker or a copy kept before one. */
export function inputArrays(input: RecomputeInput): ArrayBufferView[] {
  const { from, to, progress, duration, linkType, lag, milestone } = input;
  const { startNoEarlier, finishNoLater } = input;
  const arrays = [from, to, progress, duration, linkType, lag, milestone, startNoEarlier];
  return [...arrays, finishNoLater].filter((a): a is NonNullable<typeof a> => a != null);
}

/** The input with a copy of each of its arrays (the pool takes the ones it is given). */
export function copyInput(input: RecomputeInput): RecomputeInput {
  const copy = { ...input };
  for (const key of INPUT_ARRAYS) {
    const array = input[key];
    if (array) (copy as Record<string, unknown>)[key] = array.slice();
  }
  return copy;
}

const INPUT_ARRAYS = [
  'from',
  'to',
  'progress',
  'duration',
  'linkType',
  'lag',
  'milestone',
  'startNoEarlier',
  'finishNoLater',
] as const satisfies readonly (keyof RecomputeInput)[];

import type { Graph } from './graph.ts';
import { PROGRESS } from './status.ts';

/**
 * Critical path method in integer working-day offsets from the schedule start.
 * ef is the last day a task occupies (es + duration - 1). Done tasks take no time
 * and constrain nothing: every field is -1 for them and critical is 0.
 */
export interface Cpm {
  es: Int32Array;
  ef: Int32Array;
  ls: Int32Array;
  lf: Int32Array;
  slack: Int32Array;
  critical: Uint8Array;
  /** Max ef over unfinished tasks, -1 when none is unfinished. */
  finish: number;
}

/** `order` must be a topological order of g (from topoOrder). Durations below 1 count as 1. */
export function cpm(
  g: Graph,
  order: Uint32Array,
  progress: Uint8Array,
  duration: Uint32Array,
): Cpm {
  const { n, predStart, pred, succStart, succ } = g;
  const es = new Int32Array(n);
  const ef = new Int32Array(n);
  const ls = new Int32Array(n);
  const lf = new Int32Array(n);
  const slack = new Int32Array(n);
  const critical = new Uint8Array(n);

  let finish = -1;
  for (let i = 0; i < n; i++) {
    const v = order[i]!;
    if (progress[v] === PROGRESS.done) {
      es[v] = ef[v] = ls[v] = lf[v] = slack[v] = -1;
      continue;
    }
    let start = 0;
    for (let k = predStart[v]!, end = predStart[v + 1]!; k < end; k++) {
      const p = pred[k]!;
      // Done preds have ef = -1, so they never raise start above 0: no branch needed.
      const after = ef[p]! + 1;
      if (after > start) start = after;
    }
    const last = start + Math.max(1, duration[v]!) - 1;
    es[v] = start;
    ef[v] = last;
    if (last > finish) finish = last;
  }

  for (let i = n - 1; i >= 0; i--) {
    const v = order[i]!;
    if (progress[v] === PROGRESS.done) continue;
    let latest = finish;
    for (let k = succStart[v]!, end = succStart[v + 1]!; k < end; k++) {
      const s = succ[k]!;
      if (progress[s] === PROGRESS.done) continue;
      const before = ls[s]! - 1;
      if (before < latest) latest = before;
    }
    const ds = latest - Math.max(1, duration[v]!) + 1;
    lf[v] = latest;
    ls[v] = ds;
    const sl = ds - es[v]!;
    slack[v] = sl;
    critical[v] = sl === 0 ? 1 : 0;
  }
  return { es, ef, ls, lf, slack, critical, finish };
}

import { buildGraph, type Graph } from './graph.ts';
import type { RecomputeInput, RecomputeOutput } from './recompute.ts';
import {
  PROGRESS,
  STATUS_BLOCKED,
  STATUS_DONE,
  STATUS_IN_PROGRESS,
  STATUS_READY,
} from './status.ts';

/**
 * A flow's derived state kept with what derives it, so that the next version after a change
 * that keeps the graph's shape (progress or durations: start, complete, reopen, an estimate)
 * is derived from this one over the changed tasks' cone only.
 *
 * The backward pass is kept as `tail`: the working days between a task's latest finish and
 * the project's finish (lf = finish − tail). It depends on the task's successors only, never
 * on the finish itself, so a change that moves the finish does not touch every task's tail;
 * slack and critical are then one flat pass over arrays, no edge walked. The latest dates
 * are not kept: they follow from these (lf = finish − tail, ls = es + slack).
 */
export interface Derived {
  readonly n: number;
  readonly g: Graph;
  readonly order: Uint32Array;
  /** Each task's place in `order`. */
  readonly pos: Uint32Array;
  readonly progress: Uint8Array;
  readonly duration: Uint32Array;
  readonly status: Uint8Array;
  readonly es: Int32Array;
  readonly ef: Int32Array;
  readonly slack: Int32Array;
  readonly critical: Uint8Array;
  /** finish − lf for unfinished tasks, −1 for done ones. */
  readonly tail: Int32Array;
  readonly finish: number;
}

/**
 * The state deriveNext starts from, rebuilt from a whole flow's recompute (its input and
 * output), as a flow's first version in a session is derived: no sort or CPM runs again;
 * tail follows from es, slack and the finish.
 */
export function derivedFrom(input: RecomputeInput, output: RecomputeOutput): Derived {
  const { n, from, to, progress, duration } = input;
  const { order, status, es, ef, slack, critical, finish } = output;
  const pos = new Uint32Array(n);
  for (let i = 0; i < n; i++) pos[order[i]!] = i;
  const tail = new Int32Array(n);
  for (let v = 0; v < n; v++) {
    if (progress[v] === PROGRESS.done) {
      tail[v] = -1;
      continue;
    }
    const lf = es[v]! + slack[v]! + Math.max(1, duration[v]!) - 1;
    tail[v] = finish - lf;
  }
  return {
    n,
    g: buildGraph(n, from, to),
    order,
    pos,
    progress,
    duration,
    status,
    es,
    ef,
    slack,
    critical,
    tail,
    finish,
  };
}

/**
 * The next version after the tasks in `changed` took new progress or durations (`progress`
 * and `duration` are the next version's whole arrays; `previous` is left as it was). Equal to
 * derivedFrom a recompute of the same input: status is recomputed for the changed tasks and their
 * successors; earliest dates forward from the changed tasks in topological order, and tails
 * backward from them, each stopping where a value does not change.
 */
export function deriveNext(
  previous: Derived,
  changed: ArrayLike<number>,
  progress: Uint8Array,
  duration: Uint32Array,
  /**
   * `previous`'s per-task arrays are this call's to change (appendNodes made them for it, and
   * nothing else holds them): changed in place, not copied again.
   */
  owned = false,
): Derived {
  const { n, g, order, pos } = previous;
  const { predStart, pred, succStart, succ } = g;
  const own = <T extends Uint8Array | Int32Array>(array: T): T =>
    owned ? array : (array.slice() as T);
  const status = own(previous.status);
  const es = own(previous.es);
  const ef = own(previous.ef);
  const tail = own(previous.tail);
  const days = (v: number) => Math.max(1, duration[v]!);

  for (let c = 0; c < changed.length; c++) {
    const v = changed[c]!;
    status[v] = statusOf(g, progress, v);
    for (let k = succStart[v]!, end = succStart[v + 1]!; k < end; k++)
      status[succ[k]!] = statusOf(g, progress, succ[k]!);
  }

  // Tasks whose dates, tail or progress may have changed: their ls, lf, slack and critical are redone.
  const touched: number[] = Array.from(changed);
  let finishLost = false;
  let raised = -1;
  // Forward, in topological order: a task's earliest dates follow from its predecessors' (done
  // ones count as −1). A sweep over the positions marked since, not a heap: a change early in a
  // flow moves most of it, and a flag check per position costs less than a heap step per task.
  const marked = new Uint8Array(n);
  let first = n;
  let last = -1;
  for (let c = 0; c < changed.length; c++) {
    const p = pos[changed[c]!]!;
    marked[p] = 1;
    if (p < first) first = p;
    if (p > last) last = p;
  }
  for (let p = first; p <= last; p++) {
    if (marked[p] === 0) continue;
    marked[p] = 0;
    const v = order[p]!;
    let start = -1;
    let end = -1;
    if (progress[v] !== PROGRESS.done) {
      start = 0;
      for (let k = predStart[v]!, stop = predStart[v + 1]!; k < stop; k++) {
        const after = ef[pred[k]!]! + 1;
        if (after > start) start = after;
      }
      end = start + days(v) - 1;
    }
    if (start === es[v] && end === ef[v]) continue;
    // The task that set the finish ends earlier (or is done): the finish must be looked for again.
    if (ef[v] === previous.finish && end < previous.finish) finishLost = true;
    if (end > raised) raised = end;
    es[v] = start;
    ef[v] = end;
    touched.push(v);
    for (let k = succStart[v]!, stop = succStart[v + 1]!; k < stop; k++) {
      const q = pos[succ[k]!]!;
      marked[q] = 1;
      if (q > last) last = q;
    }
  }

  // Backward, in reverse topological order: a tail follows from the unfinished successors'
  // tails and durations, so the predecessors of a changed task are looked at even where its
  // own tail stays. (The forward sweep left every mark cleared.)
  first = n;
  last = -1;
  const mark = (v: number) => {
    const p = pos[v]!;
    marked[p] = 1;
    if (p < first) first = p;
    if (p > last) last = p;
  };
  for (let c = 0; c < changed.length; c++) {
    const v = changed[c]!;
    mark(v);
    for (let k = predStart[v]!, stop = predStart[v + 1]!; k < stop; k++) mark(pred[k]!);
  }
  for (let p = last; p >= first; p--) {
    if (marked[p] === 0) continue;
    marked[p] = 0;
    const v = order[p]!;
    let t = -1;
    if (progress[v] !== PROGRESS.done) {
      t = 0;
      for (let k = succStart[v]!, stop = succStart[v + 1]!; k < stop; k++) {
        const s = succ[k]!;
        if (progress[s] === PROGRESS.done) continue;
        const through = tail[s]! + days(s);
        if (through > t) t = through;
      }
    }
    if (t === tail[v]) continue;
    tail[v] = t;
    touched.push(v);
    for (let k = predStart[v]!, stop = predStart[v + 1]!; k < stop; k++) mark(pred[k]!);
  }

  // The finish: the task that set it still does unless it ended earlier; then one flat scan.
  let finish = Math.max(previous.finish, raised);
  if (finishLost) {
    finish = -1;
    for (let v = 0; v < n; v++)
      if (progress[v] !== PROGRESS.done && ef[v]! > finish) finish = ef[v]!;
  }
  // Everything measured from the finish: all tasks when it moved (a flat pass, no edges), else the touched ones.
  const moved = finish !== previous.finish;
  // Every task's are written again when the finish moved: owned ones are reused as they are.
  const measured = <T extends Uint8Array | Int32Array>(array: T, fresh: () => T): T =>
    owned ? array : moved ? fresh() : (array.slice() as T);
  const slack = measured(previous.slack, () => new Int32Array(n));
  const critical = measured(previous.critical, () => new Uint8Array(n));
  const late = (v: number) => {
    if (progress[v] === PROGRESS.done) {
      slack[v] = -1;
      critical[v] = 0;
      return;
    }
    const s = finish - tail[v]! - days(v) + 1;
    slack[v] = s - es[v]!;
    critical[v] = s === es[v] ? 1 : 0;
  };
  if (moved) for (let v = 0; v < n; v++) late(v);
  else for (const v of touched) late(v);
  return {
    n,
    g,
    order,
    pos,
    progress,
    duration,
    status,
    es,
    ef,
    slack,
    critical,
    tail,
    finish,
  };
}

function statusOf(g: Graph, progress: Uint8Array, v: number): number {
  if (progress[v] === PROGRESS.done) return STATUS_DONE;
  if (progress[v] !== PROGRESS.open) return STATUS_IN_PROGRESS;
  for (let k = g.predStart[v]!, end = g.predStart[v + 1]!; k < end; k++)
    if (progress[g.pred[k]!] !== PROGRESS.done) return STATUS_BLOCKED;
  return STATUS_READY;
}

/**
 * Blocking counts (how many unfinished tasks transitively wait on each task) after the tasks
 * in `changed` became done or open again, from the counts before: a task's count is the
 * number of its unfinished descendants, so a task finishing lowers each of its ancestors' by
 * one (and reopening raises them); nothing else moves. Costs the changed tasks' ancestors.
 */
export function countsAfter(
  g: Graph,
  counts: Uint32Array,
  changed: readonly { v: number; done: boolean }[],
): Uint32Array {
  const { n, predStart, pred } = g;
  const next = counts.slice();
  const seen = new Uint8Array(n);
  const stack: number[] = [];
  for (const { v, done } of changed) {
    const delta = done ? -1 : 1;
    seen.fill(0);
    stack.push(v);
    while (stack.length > 0) {
      const u = stack.pop()!;
      for (let k = predStart[u]!, end = predStart[u + 1]!; k < end; k++) {
        const p = pred[k]!;
        if (seen[p] === 1) continue;
        seen[p] = 1;
        next[p]! += delta;
        stack.push(p);
      }
    }
  }
  return next;
}

/**
 * `previous` with `added` tasks appended, as if they were done (so they constrain nothing):
 * edges `from[i]` → `to[i]` all end at a new task and start at an earlier one, so nothing
 * old comes to depend on a new task, the old topological order still holds with the new tasks
 * after it, and the CSR rows are extended rather than sorted again. deriveNext then opens the
 * new tasks as it would reopen a task. Throws RangeError when an edge breaks that shape.
 */
export function appendNodes(
  previous: Derived,
  added: number,
  from: Uint32Array,
  to: Uint32Array,
): Derived {
  const { n: old, g } = previous;
  const n = old + added;
  for (let e = 0; e < from.length; e++) {
    if (!(to[e]! >= old && to[e]! < n && from[e]! < to[e]!))
      throw new RangeError(`edge ${from[e]} -> ${to[e]} does not end at a later new task`);
  }
  // Predecessor rows: the old ones as they were, then one row per new task.
  const predStart = new Uint32Array(n + 1);
  predStart.set(g.predStart);
  for (let e = 0; e < to.length; e++) predStart[to[e]! + 1]!++;
  for (let v = old; v < n; v++) predStart[v + 1]! += predStart[v]!;
  const pred = new Uint32Array(predStart[n]!);
  pred.set(g.pred);
  const pFill = predStart.slice(old, n);
  for (let e = 0; e < to.length; e++) pred[pFill[to[e]! - old]!++] = from[e]!;
  // Successor rows: each old row copied with its new successors after it.
  // Rows start where they did, moved by the new edges from tasks before them: counted off the
  // new edges' sources in order, with no per-task array beside the rows.
  const sourcesInOrder = Uint32Array.from(from).sort();
  const succStart = new Uint32Array(n + 1);
  for (let v = 0, e = 0; v < n; v++) {
    while (e < sourcesInOrder.length && sourcesInOrder[e] === v) e++;
    succStart[v + 1] = g.succStart[Math.min(v + 1, old)]! + e;
  }
  const succ = new Uint32Array(succStart[n]!);
  // Where each source's next new successor goes.
  const fill = new Map<number, number>();
  // The old rows move in runs: each run ends at a task that gains successors, whose new ones
  // go right after its own. A handful of copies, not one per task of a large flow.
  const sources = [...new Set(from)].sort((a, b) => a - b);
  const oldRow = (v: number) => g.succStart[v] ?? 0;
  const newRow = (v: number) => succStart[v] ?? 0;
  let runStart = 0;
  for (const s of sources) {
    if (s >= old) {
      fill.set(s, newRow(s));
      continue;
    }
    succ.set(g.succ.subarray(oldRow(runStart), oldRow(s + 1)), newRow(runStart));
    fill.set(s, newRow(s) + oldRow(s + 1) - oldRow(s));
    runStart = s + 1;
  }
  succ.set(g.succ.subarray(oldRow(runStart), oldRow(old)), newRow(runStart));
  for (let e = 0; e < from.length; e++) {
    const at = fill.get(from[e]!) ?? 0;
    succ[at] = to[e]!;
    fill.set(from[e]!, at + 1);
  }

  const order = new Uint32Array(n);
  order.set(previous.order);
  const pos = new Uint32Array(n);
  pos.set(previous.pos);
  for (let v = old; v < n; v++) order[v] = pos[v] = v;
  const grow = <T extends Uint8Array | Uint32Array | Int32Array>(array: T, fill: number): T => {
    const next = new (array.constructor as new (length: number) => T)(n);
    next.set(array);
    next.fill(fill, old);
    return next;
  };
  return {
    n,
    g: { n, predStart, pred, succStart, succ },
    order,
    pos,
    progress: grow(previous.progress, PROGRESS.done),
    duration: grow(previous.duration, 1),
    status: grow(previous.status, STATUS_DONE),
    es: grow(previous.es, -1),
    ef: grow(previous.ef, -1),
    slack: grow(previous.slack, -1),
    critical: grow(previous.critical, 0),
    tail: grow(previous.tail, -1),
    finish: previous.finish,
  };
}

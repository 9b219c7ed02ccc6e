import { buildGraph, extendGraph, type Graph } from './graph.ts';
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
 * critical is then one flat pass over arrays, no edge walked. Slack and the latest dates
 * are not kept: they follow from these (lf = finish − tail, ls = lf − duration + 1, slack =
 * ls − es; see slackOf), and a version derived for a what-if is never asked for them.
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
    critical,
    tail,
    finish,
  };
}

/** Each task's slack in working days (−1 for done ones), as a whole recompute gives it. */
export function slackOf(derived: Derived): Int32Array {
  const { n, progress, duration, es, tail, finish } = derived;
  const slack = new Int32Array(n);
  for (let v = 0; v < n; v++)
    slack[v] =
      progress[v] === PROGRESS.done
        ? -1
        : finish - (tail[v] ?? 0) - Math.max(1, duration[v] ?? 0) + 1 - (es[v] ?? 0);
  return slack;
}

/**
 * Tasks appended after a version's: `added` of them, and the edges they bring, `from[e]` →
 * `to[e]`, each ending at a new task and starting at an earlier one (old or new). Nothing old
 * comes to depend on a new task, so the old topological order still holds with the new tasks
 * after it, in their order.
 */
export interface Appended {
  readonly added: number;
  readonly from: Uint32Array;
  readonly to: Uint32Array;
}

const NONE: Appended = { added: 0, from: new Uint32Array(0), to: new Uint32Array(0) };

/**
 * The next version after the tasks in `changed` took new progress or durations and the
 * `appended` tasks were added after the others (`progress` and `duration` are the next
 * version's whole arrays; `previous` is left as it was). Equal to derivedFrom a recompute of
 * the same input: status is recomputed for the changed and new tasks and their successors;
 * earliest dates forward from them in topological order, and tails backward, each stopping
 * where a value does not change.
 *
 * The new tasks are walked through their own edge lists (after the old tasks forward, before
 * them backward), so the old rows are read as they are: the rows with the new tasks in them
 * (megabytes on a large flow) are built only when the result's `g`, `order` or `pos` is first
 * read, which a what-if's scenario never does. Throws RangeError when an edge breaks
 * `appended`'s shape.
 */
export function deriveNext(
  previous: Derived,
  changed: ArrayLike<number>,
  progress: Uint8Array,
  duration: Uint32Array,
  appended: Appended = NONE,
): Derived {
  const { n: old, g, order, pos } = previous;
  const { predStart, pred, succStart, succ } = g;
  const n = old + appended.added;
  const { preds, succs } = newEdges(old, appended);
  // The new tasks start as if done (so they constrain nothing), and are derived below. Each
  // array is the previous version's until a value in it changes: a start moves no date or
  // tail, and each array copied is memory outside the heap, which V8 collects by (a 100k-task
  // flow's four are 1.3 MB a version, and its full collections ran every ~20 transitions).
  const status = new CopyOnWrite(previous.status, n, STATUS_DONE);
  const es = new CopyOnWrite(previous.es, n, -1);
  const ef = new CopyOnWrite(previous.ef, n, -1);
  const tail = new CopyOnWrite(previous.tail, n, -1);
  const done = (v: number) => progress[v] === PROGRESS.done;
  const days = (v: number) => Math.max(1, duration[v] ?? 0);
  // The old tasks among the changed: every new one is derived.
  const changedOld: number[] = [];
  for (let c = 0; c < changed.length; c++) {
    const v = changed[c] ?? 0;
    if (v < old) changedOld.push(v);
  }

  for (const v of changedOld) {
    status.set(v, statusOf(g, progress, v));
    for (let k = succStart[v] ?? 0, end = succStart[v + 1] ?? 0; k < end; k++) {
      const s = succ[k] ?? 0;
      status.set(s, statusOf(g, progress, s));
    }
  }
  for (let v = old; v < n; v++)
    status.set(
      v,
      statusWith(progress, v, () => (preds[v - old] ?? []).some((p) => !done(p))),
    );

  // Tasks whose dates, tail or progress may have changed: their critical flag is redone.
  // Past an eighth of the tasks, one flat pass over every task costs less than the list.
  const touched: number[] = [];
  let touchedAll = false;
  const touch = (v: number) => {
    if (touched.length < n >> 3) touched.push(v);
    else touchedAll = true;
  };
  for (let c = 0; c < changed.length; c++) touch(changed[c] ?? 0);
  let finishLost = false;
  let raised = -1;
  /** Sets v's earliest dates from its earliest start (−1: done); whether they moved. */
  const place = (v: number, start: number): boolean => {
    const end = start < 0 ? -1 : start + days(v) - 1;
    if (start === es.array[v] && end === ef.array[v]) return false;
    // The task that set the finish ends earlier (or is done): the finish must be looked for again.
    if (ef.array[v] === previous.finish && end < previous.finish) finishLost = true;
    if (end > raised) raised = end;
    es.set(v, start);
    ef.set(v, end);
    touch(v);
    return true;
  };
  // Forward, in topological order: a task's earliest dates follow from its predecessors' (done
  // ones count as −1). A sweep over the positions marked since, not a heap: a change early in a
  // flow moves most of it, and a flag check per position costs less than a heap step per task.
  const marked = scratch(old);
  let first = old;
  let last = -1;
  for (const v of changedOld) {
    const p = pos[v] ?? 0;
    marked[p] = 1;
    if (p < first) first = p;
    if (p > last) last = p;
  }
  for (let p = first; p <= last; p++) {
    if (marked[p] === 0) continue;
    marked[p] = 0;
    const v = order[p] ?? 0;
    let start = -1;
    if (!done(v)) {
      start = 0;
      for (let k = predStart[v] ?? 0, stop = predStart[v + 1] ?? 0; k < stop; k++) {
        const after = (ef.array[pred[k] ?? 0] ?? 0) + 1;
        if (after > start) start = after;
      }
    }
    if (!place(v, start)) continue;
    for (let k = succStart[v] ?? 0, stop = succStart[v + 1] ?? 0; k < stop; k++) {
      const q = pos[succ[k] ?? 0] ?? 0;
      marked[q] = 1;
      if (q > last) last = q;
    }
  }
  // The new tasks after every old one, in their order: each waits on earlier tasks only.
  for (let v = old; v < n; v++) {
    let start = -1;
    if (!done(v)) {
      start = 0;
      for (const p of preds[v - old] ?? []) start = Math.max(start, (ef.array[p] ?? 0) + 1);
    }
    place(v, start);
  }

  // Backward: a tail follows from the unfinished successors' tails and durations. The new
  // tasks first, last to first (their successors are new); then the old ones in reverse
  // topological order, where the predecessors of a changed task are looked at even where its
  // own tail stays. (The forward sweep left every mark cleared.)
  const through = (s: number) => (done(s) ? 0 : (tail.array[s] ?? 0) + days(s));
  for (let v = n - 1; v >= old; v--) {
    let t = -1;
    if (!done(v)) {
      t = 0;
      for (const s of succs.get(v) ?? []) t = Math.max(t, through(s));
    }
    if (t === tail.array[v]) continue;
    tail.set(v, t);
    touch(v);
  }
  first = old;
  last = -1;
  const mark = (v: number) => {
    const p = pos[v] ?? 0;
    marked[p] = 1;
    if (p < first) first = p;
    if (p > last) last = p;
  };
  for (const v of changedOld) {
    mark(v);
    for (let k = predStart[v] ?? 0, stop = predStart[v + 1] ?? 0; k < stop; k++) mark(pred[k] ?? 0);
  }
  // The old tasks the new ones wait on gained successors.
  for (const list of preds) for (const p of list) if (p < old) mark(p);
  for (let p = last; p >= first; p--) {
    if (marked[p] === 0) continue;
    marked[p] = 0;
    const v = order[p] ?? 0;
    let t = -1;
    if (!done(v)) {
      t = 0;
      for (let k = succStart[v] ?? 0, stop = succStart[v + 1] ?? 0; k < stop; k++) {
        const x = through(succ[k] ?? 0);
        if (x > t) t = x;
      }
      if (succs.size > 0) for (const s of succs.get(v) ?? []) t = Math.max(t, through(s));
    }
    if (t === tail.array[v]) continue;
    tail.set(v, t);
    touch(v);
    for (let k = predStart[v] ?? 0, stop = predStart[v + 1] ?? 0; k < stop; k++) mark(pred[k] ?? 0);
  }

  // The finish: the task that set it still does unless it ended earlier; then one flat scan.
  let finish = Math.max(previous.finish, raised);
  if (finishLost) {
    finish = -1;
    for (let v = 0; v < n; v++)
      if (!done(v) && (ef.array[v] ?? 0) > finish) finish = ef.array[v] ?? 0;
  }
  // Critical is measured from the finish: all tasks when it moved (a flat pass, no edges), else
  // the touched ones. Every task's is written again then: a new array, not a copy.
  const all = touchedAll || finish !== previous.finish;
  const late = (v: number) =>
    !done(v) && finish - (tail.array[v] ?? 0) - days(v) + 1 === es.array[v] ? 1 : 0;
  let critical: Uint8Array;
  if (all) {
    critical = new Uint8Array(n);
    for (let v = 0; v < n; v++) critical[v] = late(v);
  } else {
    const flags = new CopyOnWrite(previous.critical, n, 0);
    for (const v of touched) flags.set(v, late(v));
    critical = flags.array;
  }
  const derived = {
    n,
    progress,
    duration,
    status: status.array,
    es: es.array,
    ef: ef.array,
    critical,
    tail: tail.array,
    finish,
  };
  return appended.added === 0
    ? { ...derived, g, order, pos }
    : rowsOnRead(derived, { g, order, pos }, appended);
}

/**
 * A version's array as it is derived from the previous version's: that one, shared until a
 * value in it changes, then a copy of its own (`n` long, the places past the previous's
 * holding `fill`; copied at once when it grows). Read through `array`.
 */
export class CopyOnWrite<T extends Uint8Array | Int32Array | Uint32Array> {
  array: T;
  private owned: boolean;

  constructor(previous: T, n: number, fill: number) {
    this.owned = previous.length !== n;
    this.array = this.owned ? grown(previous, n, fill) : previous;
  }

  set(v: number, value: number): void {
    if (this.array[v] === value) return;
    if (!this.owned) {
      this.array = this.array.slice() as T;
      this.owned = true;
    }
    this.array[v] = value;
  }
}

/** A copy of `array`, `n` long: the places past its own hold `fill`. */
function grown<T extends Uint8Array | Int32Array | Uint32Array>(
  array: T,
  n: number,
  fill: number,
): T {
  const next = new (array.constructor as new (length: number) => T)(n);
  next.set(array);
  next.fill(fill, array.length);
  return next;
}

let marks = new Uint8Array(0);

/**
 * At least `n` marks, all clear: one buffer kept between calls (each user clears every mark it
 * sets before it returns), not 100 KB of memory outside the heap a version at 100k tasks.
 */
function scratch(n: number): Uint8Array {
  if (marks.length < n) marks = new Uint8Array(Math.max(n, marks.length * 2));
  return marks;
}

/** The appended tasks' predecessors (one list per new task) and the new successors of each task that gained some. */
function newEdges(old: number, appended: Appended) {
  const { added, from, to } = appended;
  const preds = Array.from({ length: added }, (): number[] => []);
  const succs = new Map<number, number[]>();
  for (let e = 0; e < from.length; e++) {
    const f = from[e] ?? 0;
    const t = to[e] ?? 0;
    if (!(t >= old && t < old + added && f < t))
      throw new RangeError(`edge ${f} -> ${t} does not end at a later new task`);
    preds[t - old]?.push(f);
    const list = succs.get(f);
    if (list) list.push(t);
    else succs.set(f, [t]);
  }
  return { preds, succs };
}

type Rows = Pick<Derived, 'g' | 'order' | 'pos'>;

/**
 * `derived` with `base`'s rows extended by the appended tasks, built when one of them is first
 * read; then held as plain fields, and `base` let go.
 */
function rowsOnRead(derived: Omit<Derived, keyof Rows>, base: Rows, appended: Appended): Derived {
  const build = (): Rows => {
    const old = base.g.n;
    const n = old + appended.added;
    const order = new Uint32Array(n);
    order.set(base.order);
    const pos = new Uint32Array(n);
    pos.set(base.pos);
    for (let v = old; v < n; v++) order[v] = pos[v] = v;
    const rows = { g: extendGraph(base.g, appended.added, appended.from, appended.to), order, pos };
    Object.defineProperties(derived, {
      g: { value: rows.g, enumerable: true },
      order: { value: order, enumerable: true },
      pos: { value: pos, enumerable: true },
    });
    return rows;
  };
  return Object.defineProperties(derived, {
    g: { get: () => build().g, enumerable: true, configurable: true },
    order: { get: () => build().order, enumerable: true, configurable: true },
    pos: { get: () => build().pos, enumerable: true, configurable: true },
  }) as Derived;
}

/** A task's status; `waits` tells whether an unfinished task holds it up (asked of open tasks only). */
function statusWith(progress: Uint8Array, v: number, waits: () => boolean): number {
  if (progress[v] === PROGRESS.done) return STATUS_DONE;
  if (progress[v] !== PROGRESS.open) return STATUS_IN_PROGRESS;
  return waits() ? STATUS_BLOCKED : STATUS_READY;
}

function statusOf(g: Graph, progress: Uint8Array, v: number): number {
  return statusWith(progress, v, () => {
    for (let k = g.predStart[v] ?? 0, end = g.predStart[v + 1] ?? 0; k < end; k++)
      if (progress[g.pred[k] ?? 0] !== PROGRESS.done) return true;
    return false;
  });
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
  // Cleared after each walk by what it visited: filling all n marks per change cost O(n).
  const seen = scratch(n);
  const stack: number[] = [];
  const visited: number[] = [];
  for (const { v, done } of changed) {
    const delta = done ? -1 : 1;
    stack.push(v);
    while (stack.length > 0) {
      const u = stack.pop()!;
      for (let k = predStart[u]!, end = predStart[u + 1]!; k < end; k++) {
        const p = pred[k]!;
        if (seen[p] === 1) continue;
        seen[p] = 1;
        visited.push(p);
        next[p]! += delta;
        stack.push(p);
      }
    }
    for (const p of visited) seen[p] = 0;
    visited.length = 0;
  }
  return next;
}

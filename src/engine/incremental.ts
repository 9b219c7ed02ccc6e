import {
  earliest,
  latest,
  latestSeed,
  NO_BOUND,
  rowsOf,
  shown,
  shownEarly,
  taskDays,
  totalFloat,
  lateOffset,
  type PredRows,
  type TaskFacts,
} from './cpm.ts';
import { buildGraph, extendGraph, packLink, type Graph } from './graph.ts';
import type { RecomputeInput, RecomputeOutput } from './recompute.ts';
import {
  holdsStart,
  isBlocked,
  PROGRESS,
  STATUS_BLOCKED,
  STATUS_DONE,
  STATUS_IN_PROGRESS,
  STATUS_READY,
} from './status.ts';

/**
 * A flow's derived state kept with what derives it, so that the next version after a change
 * that keeps the graph's shape (progress, durations, milestones, constraints: start, complete,
 * reopen, an estimate) is derived from this one over the changed tasks' cone only.
 *
 * The backward pass is kept as cpm.ts's two parts: `tail`, how far the links keep a task's
 * latest finish LF before the project's end E (LF ≤ E − tail), and `bound`, the finish
 * constraints' absolute share (LF = min(E − tail, bound)). Neither depends on E itself, so a
 * change that moves E does not touch every task's; critical is then one flat pass over arrays,
 * no edge walked. The latest dates and floats are not kept: they follow from these (floatsOf,
 * slackOf), and a version derived for a what-if is never asked for them.
 */
export interface Derived extends TaskFacts {
  readonly n: number;
  readonly g: Graph;
  readonly order: Uint32Array;
  /** Each task's place in `order`. */
  readonly pos: Uint32Array;
  readonly progress: Uint8Array;
  readonly duration: Uint32Array;
  readonly milestone: Uint8Array | null;
  readonly startNoEarlier: Int32Array | null;
  readonly finishNoLater: Int32Array | null;
  readonly inProgressAtZero: boolean;
  readonly status: Uint8Array;
  /** Shown days (cpm.ts's Cpm), −1 for done tasks. */
  readonly es: Int32Array;
  readonly ef: Int32Array;
  readonly critical: Uint8Array;
  /** Boundaries S and F, −1 for done tasks. */
  readonly start: Int32Array;
  readonly end: Int32Array;
  /** E − LF's share from the links for open tasks, −1 for done ones. */
  readonly tail: Int32Array;
  /** LF's share from finish constraints (NO_BOUND: none). */
  readonly bound: Int32Array;
  /** E: the greatest F of the open tasks, −1 when none is open. */
  readonly projectEnd: number;
  /** The projected finish's day, max(E − 1, 0); −1 when nothing is open. */
  readonly finish: number;
}

/**
 * The state deriveNext starts from, rebuilt from a whole flow's recompute (its input and
 * output), as a flow's first version in a session is derived: no sort or pass runs again.
 */
export function derivedFrom(input: RecomputeInput, output: RecomputeOutput): Derived {
  const { n, from, to, progress, duration } = input;
  const { order, status, es, ef, critical, finish } = output;
  const { start, end, tail, bound, projectEnd } = output.passes;
  const pos = new Uint32Array(n);
  for (let i = 0; i < n; i++) pos[order[i]!] = i;
  return {
    n,
    g: buildGraph(n, from, to, input.linkType, input.lag),
    order,
    pos,
    progress,
    duration,
    milestone: input.milestone ?? null,
    startNoEarlier: input.startNoEarlier ?? null,
    finishNoLater: input.finishNoLater ?? null,
    inProgressAtZero: input.inProgressAtZero === true,
    status,
    es,
    ef,
    critical,
    start,
    end,
    tail,
    bound,
    projectEnd,
    finish,
  };
}

/** Each task's total float in working days (−1 for done ones), as a whole recompute gives it. */
export function slackOf(derived: Derived): Int32Array {
  const { n, progress, duration, milestone } = derived;
  const slack = new Int32Array(n);
  for (let v = 0; v < n; v++)
    slack[v] =
      progress[v] === PROGRESS.done ? -1 : totalFloat(derived, taskDays(duration, milestone, v), v);
  return slack;
}

/**
 * Each task's latest days, total float and free float, as a whole recompute gives them (cpm.ts's
 * Cpm): one pass over the tasks and their successors' edges.
 */
export function floatsOf(
  derived: Derived,
): Pick<RecomputeOutput, 'ls' | 'lf' | 'slack' | 'freeFloat'> {
  const { ls, lf, slack, freeFloat } = shown(
    derived.g,
    derived.progress,
    derived.duration,
    derived,
    derived,
  );
  return { ls, lf, slack, freeFloat };
}

/**
 * Tasks appended after a version's: `added` of them, and the edges they bring, `from[e]` →
 * `to[e]` (by a link of linkType[e] and lag[e], FS with no lag when absent), each ending at a
 * new task and starting at an earlier one (old or new). Nothing old comes to depend on a new
 * task, so the old topological order still holds with the new tasks after it, in their order.
 */
export interface Appended {
  readonly added: number;
  readonly from: Uint32Array;
  readonly to: Uint32Array;
  readonly linkType?: Uint8Array;
  readonly lag?: Int32Array;
}

const NONE: Appended = { added: 0, from: new Uint32Array(0), to: new Uint32Array(0) };

/**
 * A version's milestones and constraints for deriveNext: each the next version's whole array,
 * null for none, or absent to keep the previous version's (the appended tasks having none).
 */
export type NextFacts = Pick<TaskFacts, 'milestone' | 'startNoEarlier' | 'finishNoLater'>;

/**
 * The next version after the tasks in `changed` took new progress, durations, milestones or
 * constraints and the `appended` tasks were added after the others (`progress`, `duration` and
 * those in `facts` are the next version's whole arrays; `previous` is left as it was). Equal to
 * derivedFrom a recompute of the same input: status is recomputed for the changed and new tasks
 * and their successors; boundaries forward from them in topological order, and the backward
 * pass's parts backward, each stopping where a value does not change.
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
  facts: NextFacts = {},
): Derived {
  const { n: old, g, order, pos } = previous;
  const { predStart, pred, succStart, succ } = g;
  const n = old + appended.added;
  const rows = rowsOf(g);
  const added = newEdges(old, appended);
  const next: TaskFacts = {
    milestone: factOf(facts.milestone, previous.milestone, n, 0),
    startNoEarlier: factOf(facts.startNoEarlier, previous.startNoEarlier, n, 0),
    finishNoLater: factOf(facts.finishNoLater, previous.finishNoLater, n, NO_BOUND),
    inProgressAtZero: previous.inProgressAtZero,
  };
  // The new tasks start as if done (so they constrain nothing), and are derived below. Each
  // array is the previous version's until a value in it changes: a start moves no date or
  // tail, and each array copied is memory outside the heap, which V8 collects by (a 100k-task
  // flow's four are 1.3 MB a version, and its full collections ran every ~20 transitions).
  const status = new CopyOnWrite(previous.status, n, STATUS_DONE);
  const start = new CopyOnWrite(previous.start, n, -1);
  const end = new CopyOnWrite(previous.end, n, -1);
  const es = new CopyOnWrite(previous.es, n, -1);
  const ef = new CopyOnWrite(previous.ef, n, -1);
  const tail = new CopyOnWrite(previous.tail, n, -1);
  const bound = new CopyOnWrite(previous.bound, n, NO_BOUND);
  const done = (v: number) => progress[v] === PROGRESS.done;
  // The old tasks among the changed: every new one is derived.
  const changedOld: number[] = [];
  for (let c = 0; c < changed.length; c++) {
    const v = changed[c] ?? 0;
    if (v < old) changedOld.push(v);
  }

  for (const v of changedOld) {
    status.set(v, statusOf(g, progress, v));
    for (let k = succStart[v] ?? 0, stop = succStart[v + 1] ?? 0; k < stop; k++) {
      const s = succ[k] ?? 0;
      status.set(s, statusOf(g, progress, s));
    }
  }
  for (let v = old; v < n; v++) status.set(v, statusOfNew(added.preds, progress, v, old));

  // Tasks whose dates, latest finish or duration may have changed: their critical flag is
  // redone. Past an eighth of the tasks, one flat pass over every task costs less than the list.
  const touched: number[] = [];
  let touchedAll = false;
  const touch = (v: number) => {
    if (touched.length < n >> 3) touched.push(v);
    else touchedAll = true;
  };
  for (let c = 0; c < changed.length; c++) touch(changed[c] ?? 0);
  let endLost = false;
  let raised = -1;
  const early = { s: 0, f: 0 };
  const day = { es: 0, ef: 0 };
  /** Sets v's shown days from its boundaries. */
  const show = (v: number) => {
    if (done(v)) day.es = day.ef = -1;
    else shownEarly(next.milestone?.[v] === 1, start.array[v] ?? 0, end.array[v] ?? 0, day);
    es.set(v, day.es);
    ef.set(v, day.ef);
  };
  /** Sets v's boundaries (−1: done); whether they moved. */
  const place = (v: number, s: number, f: number): boolean => {
    if (s === start.array[v] && f === end.array[v]) return false;
    // The task that set E ends earlier (or is done): E must be looked for again.
    if (end.array[v] === previous.projectEnd && f < previous.projectEnd) endLost = true;
    if (f > raised) raised = f;
    start.set(v, s);
    end.set(v, f);
    show(v);
    touch(v);
    return true;
  };
  /** v's boundaries from the predecessors in its rows (`row` of `through`). */
  const derive = (through: PredRows, row: number, v: number): boolean => {
    if (done(v)) return place(v, -1, -1);
    earliest(through, row, v, progress, duration, next, start.array, end.array, early);
    return place(v, early.s, early.f);
  };
  // Forward, in topological order. A sweep over the positions marked since, not a heap: a
  // change early in a flow moves most of it, and a flag check per position costs less than a
  // heap step per task.
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
    if (!derive(rows, v, v)) continue;
    for (let k = succStart[v] ?? 0, stop = succStart[v + 1] ?? 0; k < stop; k++) {
      const q = pos[succ[k] ?? 0] ?? 0;
      marked[q] = 1;
      if (q > last) last = q;
    }
  }
  // The new tasks after every old one, in their order: each waits on earlier tasks only.
  for (let v = old; v < n; v++) derive(added.preds, v - old, v);
  // A changed task whose boundaries stayed may still show other days (it became a milestone).
  for (let c = 0; c < changed.length; c++) show(changed[c] ?? 0);

  // Backward: a task's two parts follow from its open successors'. The new tasks first, last to
  // first (their successors are new); then the old ones in reverse topological order, where the
  // predecessors of a changed task are looked at even where its own parts stay. (The forward
  // sweep left every mark cleared.)
  const late = { tail: 0, bound: 0 };
  /** v's two parts from its successors, in the graph's rows and the appended edges. */
  const settle = (v: number): boolean => {
    if (done(v)) {
      late.tail = -1;
      late.bound = NO_BOUND;
    } else {
      latestSeed(next, v, late);
      if (v < old) latest(rows, v, v, progress, duration, next, tail.array, bound.array, late);
      const edges = added.succs.get(v);
      if (edges) lateFromAppended(v, edges, appended, progress, duration, next, tail, bound, late);
    }
    if (late.tail === tail.array[v] && late.bound === bound.array[v]) return false;
    tail.set(v, late.tail);
    bound.set(v, late.bound);
    touch(v);
    return true;
  };
  for (let v = n - 1; v >= old; v--) settle(v);
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
  for (const f of added.succs.keys()) if (f < old) mark(f);
  for (let p = last; p >= first; p--) {
    if (marked[p] === 0) continue;
    marked[p] = 0;
    const v = order[p] ?? 0;
    if (!settle(v)) continue;
    for (let k = predStart[v] ?? 0, stop = predStart[v + 1] ?? 0; k < stop; k++) mark(pred[k] ?? 0);
  }

  // E: the task that set it still does unless it ended earlier; then one flat scan.
  let projectEnd = Math.max(previous.projectEnd, raised);
  if (endLost) {
    projectEnd = -1;
    for (let v = 0; v < n; v++)
      if (!done(v) && (end.array[v] ?? 0) > projectEnd) projectEnd = end.array[v] ?? 0;
  }
  const passes = {
    start: start.array,
    end: end.array,
    tail: tail.array,
    bound: bound.array,
    projectEnd,
  };
  // Critical is measured from E: all tasks when it moved (a flat pass, no edges), else the
  // touched ones. Every task's is written again then: a new array, not a copy.
  const all = touchedAll || projectEnd !== previous.projectEnd;
  const critical = (v: number) =>
    !done(v) && totalFloat(passes, taskDays(duration, next.milestone, v), v) <= 0 ? 1 : 0;
  let flags: Uint8Array;
  if (all) {
    flags = new Uint8Array(n);
    for (let v = 0; v < n; v++) flags[v] = critical(v);
  } else {
    const kept = new CopyOnWrite(previous.critical, n, 0);
    for (const v of touched) kept.set(v, critical(v));
    flags = kept.array;
  }
  const derived = {
    n,
    progress,
    duration,
    milestone: next.milestone ?? null,
    startNoEarlier: next.startNoEarlier ?? null,
    finishNoLater: next.finishNoLater ?? null,
    inProgressAtZero: previous.inProgressAtZero,
    status: status.array,
    es: es.array,
    ef: ef.array,
    critical: flags,
    ...passes,
    finish: projectEnd < 0 ? -1 : Math.max(projectEnd - 1, 0),
  };
  return appended.added === 0
    ? { ...derived, g, order, pos }
    : rowsOnRead(derived, { g, order, pos }, appended);
}

/** A fact's array for the next version: as given (null: none), else the previous one's, grown. */
function factOf<T extends Uint8Array | Int32Array>(
  given: T | null | undefined,
  previous: T | null,
  n: number,
  fill: number,
): T | null {
  if (given !== undefined) return given;
  return previous === null ? null : new CopyOnWrite(previous, n, fill).array;
}

/** Folds into `late` the successors task v gained among the appended edges. */
function lateFromAppended(
  v: number,
  edges: readonly number[],
  appended: Appended,
  progress: Uint8Array,
  duration: Uint32Array,
  facts: TaskFacts,
  tail: CopyOnWrite<Int32Array>,
  bound: CopyOnWrite<Int32Array>,
  late: { tail: number; bound: number },
): void {
  const d = taskDays(duration, facts.milestone, v);
  for (const e of edges) {
    const s = appended.to[e] ?? 0;
    if (progress[s] === PROGRESS.done) continue;
    const ds = taskDays(duration, facts.milestone, s);
    const off = lateOffset(appended.linkType?.[e] ?? 0, appended.lag?.[e] ?? 0, d, ds);
    late.tail = Math.max(late.tail, (tail.array[s] ?? 0) - off);
    const bs = bound.array[s] ?? NO_BOUND;
    if (bs !== NO_BOUND) late.bound = Math.min(late.bound, bs + off);
  }
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

/**
 * The appended tasks' predecessor rows (row v − old for new task v, with their links) and, for
 * each task that gained successors, the appended edges from it.
 */
function newEdges(old: number, appended: Appended) {
  const { added, from, to, linkType, lag } = appended;
  const predStart = new Uint32Array(added + 1);
  const succs = new Map<number, number[]>();
  for (let e = 0; e < from.length; e++) {
    const f = from[e] ?? 0;
    const t = to[e] ?? 0;
    if (!(t >= old && t < old + added && f < t))
      throw new RangeError(`edge ${f} -> ${t} does not end at a later new task`);
    predStart[t - old + 1] = (predStart[t - old + 1] ?? 0) + 1;
    const list = succs.get(f);
    if (list) list.push(e);
    else succs.set(f, [e]);
  }
  for (let r = 0; r < added; r++) predStart[r + 1] = (predStart[r + 1] ?? 0) + (predStart[r] ?? 0);
  const fill = predStart.slice(0, added);
  const pred = new Uint32Array(from.length);
  const predLink = new Int32Array(from.length);
  for (let e = 0; e < from.length; e++) {
    const r = (to[e] ?? 0) - old;
    const at = fill[r] ?? 0;
    fill[r] = at + 1;
    pred[at] = from[e] ?? 0;
    predLink[at] = packLink(linkType?.[e] ?? 0, lag?.[e] ?? 0);
  }
  return { preds: { predStart, pred, predLink }, succs };
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
    const g = extendGraph(
      base.g,
      appended.added,
      appended.from,
      appended.to,
      appended.linkType,
      appended.lag,
    );
    const rows = { g, order, pos };
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

/** A task's status; `waits` tells whether a link holds its start (asked of open tasks only). */
function statusWith(progress: Uint8Array, v: number, waits: () => boolean): number {
  if (progress[v] === PROGRESS.done) return STATUS_DONE;
  if (progress[v] !== PROGRESS.open) return STATUS_IN_PROGRESS;
  return waits() ? STATUS_BLOCKED : STATUS_READY;
}

function statusOf(g: Graph, progress: Uint8Array, v: number): number {
  return statusWith(progress, v, () => isBlocked(g, progress, v));
}

/** New task v's status, from its predecessors' rows beside the graph. */
function statusOfNew(rows: PredRows, progress: Uint8Array, v: number, old: number): number {
  return statusWith(progress, v, () => {
    for (
      let k = rows.predStart[v - old] ?? 0, stop = rows.predStart[v - old + 1] ?? 0;
      k < stop;
      k++
    )
      if (holdsStart((rows.predLink?.[k] ?? 0) & 3, progress[rows.pred[k] ?? 0] ?? 0)) return true;
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

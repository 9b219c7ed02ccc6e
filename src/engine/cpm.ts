import type { Graph } from './graph.ts';
import { PROGRESS } from './status.ts';

// Read once: an imported binding read in a loop costs a call per read where modules are compiled
// to CommonJS (as tsx runs them).
const DONE = PROGRESS.done;
const STARTED = PROGRESS.started;

/**
 * The schedule's passes over working days numbered from the schedule's start. Days are
 * boundaries: an open task occupies days S … F−1 (S its start boundary, F = S + d its finish
 * boundary, d its duration: 0 for a milestone). A link p → t of lag L holds, by its type,
 * S(t) ≥ F(p) + L (FS), S(t) ≥ S(p) + L (SS), F(t) ≥ F(p) + L (FF) or F(t) ≥ S(p) + L (SF); done
 * tasks take no time and hold nothing. The forward pass gives each open task the least S ≥ 0
 * (and ≥ its start-no-earlier-than) meeting its links; the backward pass the greatest LF ≤ E
 * (the greatest F) and ≤ its finish-no-later-than meeting them, LS = LF − d.
 *
 * The backward pass is kept in two parts so that a change moving E touches no other task's
 * part: `tail`, how far the links keep LF before E (LF ≤ E − tail), and `bound`, the least LF
 * the finish constraints downstream allow (NO_BOUND: none); LF = min(E − tail, bound).
 */

/** A `bound` (or a finish-no-later-than) that bounds nothing. */
export const NO_BOUND = 0x7fffffff;

/** What a task brings to the passes besides its progress and duration; each optional. */
export interface TaskFacts {
  /** Per task: 1 for a milestone (duration 0, whatever `duration` says). */
  milestone?: Uint8Array | null;
  /** Per task: the least S (the index of a start-no-earlier-than's day); 0 or less: none. */
  startNoEarlier?: Int32Array | null;
  /** Per task: the greatest LF (1 + the index of a finish-no-later-than's day); NO_BOUND: none. */
  finishNoLater?: Int32Array | null;
  /**
   * Tasks in progress start on day 0: S = 0 (their FS and SS links and start
   * constraint are behind them) and F the least value ≥ d meeting their FF and SF links.
   * Absent or false: scheduled as open tasks are, the engine's rule before typed links (with
   * FS links only and no predecessor of a started task reopened, the same dates).
   */
  inProgressAtZero?: boolean;
}

/** The passes' own numbers: boundaries (−1 for done tasks) and the backward pass's two parts. */
export interface Passes {
  start: Int32Array;
  end: Int32Array;
  /** E: the greatest F of the open tasks; −1 when none is open. */
  projectEnd: number;
  /** For open tasks LF ≤ E − tail; −1 for done ones. */
  tail: Int32Array;
  /** For open tasks LF ≤ bound; NO_BOUND for none (and for done tasks). */
  bound: Int32Array;
}

/**
 * The schedule as it is shown, in day indexes: `es` is day S and `ef` day F − 1 (a milestone
 * both day max(S − 1, 0)); `ls` day LS and `lf` day LF − 1 (a milestone both day LF − 1);
 * `slack` the total float min(LS − S, LF − F), negative where a finish constraint is missed;
 * `freeFloat` how far a task may slip moving no successor's dates nor E (0 … total float);
 * `critical` 1 where total float ≤ 0; `finish` day max(E − 1, 0), −1 when nothing is open.
 * Done tasks read −1 everywhere (critical 0). `passes`: the numbers these were read from (`es`
 * is `passes.start` itself when no open task is a milestone: read-only, as every output is).
 */
export interface Cpm {
  es: Int32Array;
  ef: Int32Array;
  ls: Int32Array;
  lf: Int32Array;
  slack: Int32Array;
  freeFloat: Int32Array;
  critical: Uint8Array;
  finish: number;
  passes: Passes;
}

/** Working days a task lasts: 0 for a milestone, else its duration, at least 1. */
export function taskDays(
  duration: Uint32Array,
  milestone: Uint8Array | null | undefined,
  v: number,
): number {
  return milestone?.[v] === 1 ? 0 : Math.max(1, duration[v] ?? 0);
}

/** What a link p → t asks of t's start (t not started): S(t) ≥ this. */
export function startNeed(type: number, lag: number, sp: number, fp: number, d: number): number {
  return ((type & 1) === 1 ? sp : fp) + lag - ((type & 2) === 2 ? d : 0);
}

/** What an FF or SF link p → t asks of t's finish: F(t) ≥ this. */
export function finishNeed(type: number, lag: number, sp: number, fp: number): number {
  return ((type & 1) === 1 ? sp : fp) + lag;
}

/**
 * A link t → s in the backward pass: it keeps LF(t) ≤ LF(s) + this (FS: LS(s) − L; SS:
 * LS(s) − L + d(t); FF: LF(s) − L; SF: LF(s) − L + d(t)).
 */
export function lateOffset(type: number, lag: number, d: number, ds: number): number {
  return ((type & 2) === 2 ? 0 : -ds) - lag + ((type & 1) === 1 ? d : 0);
}

/** Predecessor rows (a graph's, or appended tasks' beside it) with their links; none: FS, lag 0. */
export interface PredRows {
  readonly predStart: Uint32Array;
  readonly pred: Uint32Array;
  /** Each edge's packed link (graph.ts's packLink). */
  readonly predLink?: Int32Array | undefined;
}

/** Successor rows with their links, as PredRows. */
export interface SuccRows {
  readonly succStart: Uint32Array;
  readonly succ: Uint32Array;
  readonly succLink?: Int32Array | undefined;
}

/** A graph's rows with its links. */
export function rowsOf(g: Graph): PredRows & SuccRows {
  return { ...g, ...g.links };
}

/**
 * The least S and F of open task v from the predecessors in its row `row` of `rows` (`out`
 * receives them): shared by the whole passes and the incremental ones.
 */
export function earliest(
  rows: PredRows,
  row: number,
  v: number,
  progress: Uint8Array,
  duration: Uint32Array,
  facts: TaskFacts,
  start: Int32Array,
  end: Int32Array,
  out: { s: number; f: number },
): void {
  const { pred, predLink: links } = rows;
  const d = taskDays(duration, facts.milestone, v);
  const first = rows.predStart[row] ?? 0;
  const stop = rows.predStart[row + 1] ?? 0;
  if (facts.inProgressAtZero === true && progress[v] === STARTED) {
    let f = d;
    if (links)
      for (let k = first; k < stop; k++) {
        const link = links[k] ?? 0;
        const type = link & 3;
        const p = pred[k] ?? 0;
        if ((type & 2) === 0 || progress[p] === DONE) continue;
        const x = finishNeed(type, link >> 2, start[p] ?? 0, end[p] ?? 0);
        if (x > f) f = x;
      }
    out.s = 0;
    out.f = f;
    return;
  }
  let s = Math.max(0, facts.startNoEarlier?.[v] ?? 0);
  if (links) {
    for (let k = first; k < stop; k++) {
      const p = pred[k] ?? 0;
      if (progress[p] === DONE) continue;
      const link = links[k] ?? 0;
      const x = startNeed(link & 3, link >> 2, start[p] ?? 0, end[p] ?? 0, d);
      if (x > s) s = x;
    }
  } else {
    // FS links without lags: a done predecessor's end is −1, so it never raises s. No branch.
    for (let k = first; k < stop; k++) {
      const x = end[pred[k] ?? 0] ?? 0;
      if (x > s) s = x;
    }
  }
  out.s = s;
  out.f = s + d;
}

/**
 * Open task v's latest finish, as its two parts, folded into `out` over the open successors in
 * its row `row` of `rows`: start from { tail: 0, bound: its finish-no-later-than }.
 */
export function latest(
  rows: SuccRows,
  row: number,
  v: number,
  progress: Uint8Array,
  duration: Uint32Array,
  facts: TaskFacts,
  tail: Int32Array,
  bound: Int32Array,
  out: { tail: number; bound: number },
): void {
  const { succ, succLink: links } = rows;
  const { milestone } = facts;
  const d = taskDays(duration, milestone, v);
  let t = out.tail;
  let b = out.bound;
  for (let k = rows.succStart[row] ?? 0, stop = rows.succStart[row + 1] ?? 0; k < stop; k++) {
    const s = succ[k] ?? 0;
    if (progress[s] === DONE) continue;
    const link = links?.[k] ?? 0;
    const off = lateOffset(link & 3, link >> 2, d, taskDays(duration, milestone, s));
    const x = (tail[s] ?? 0) - off;
    if (x > t) t = x;
    const bs = bound[s] ?? NO_BOUND;
    if (bs !== NO_BOUND && bs + off < b) b = bs + off;
  }
  out.tail = t;
  out.bound = b;
}

/** Where `latest` starts for task v: no successor yet, its own finish constraint. */
export function latestSeed(
  facts: TaskFacts,
  v: number,
  out: { tail: number; bound: number },
): void {
  out.tail = 0;
  out.bound = facts.finishNoLater?.[v] ?? NO_BOUND;
}

/** The days a task is shown on: es and ef (see Cpm), by its boundaries. */
export function shownEarly(
  milestone: boolean,
  s: number,
  f: number,
  out: { es: number; ef: number },
): void {
  out.es = milestone ? Math.max(s - 1, 0) : s;
  out.ef = milestone ? out.es : f - 1;
}

/**
 * Each task's working days for the whole passes: 0 for a milestone and for a done task (which
 * takes no time), else its duration, at least 1.
 */
function dayCounts(
  progress: Uint8Array,
  duration: Uint32Array,
  milestone: Uint8Array | null | undefined,
): Int32Array {
  const n = progress.length;
  const days = scratchDays(n);
  for (let v = 0; v < n; v++)
    days[v] = progress[v] === DONE || milestone?.[v] === 1 ? 0 : Math.max(1, duration[v] ?? 0);
  return days;
}

/**
 * Buffers the whole passes use and let go before they return, kept between calls: a typed
 * array made anew is memory zeroed outside the heap, and a whole recompute's dozen outputs are
 * already most of its allocation.
 */
let daysBuffer = new Int32Array(0);
let roomBuffer = new Int32Array(0);

function scratchDays(n: number): Int32Array {
  if (daysBuffer.length < n) daysBuffer = new Int32Array(Math.max(n, daysBuffer.length * 2));
  return daysBuffer.subarray(0, n);
}

/** `n` rooms (each NO_ROOM with `fill`). */
function scratchRoom(n: number, fill = false): Int32Array {
  if (roomBuffer.length < n) roomBuffer = new Int32Array(Math.max(n, roomBuffer.length * 2));
  const room = roomBuffer.subarray(0, n);
  return fill ? room.fill(NO_ROOM) : room;
}

/**
 * What a done task's boundaries read in the forward pass: below anything a link could ask of a
 * successor, so that no predecessor's edge reads progress there. Set to −1 after.
 */
const FAR_BEFORE = -(2 ** 30);

/** A room no successor left: the task has no open successor. */
const NO_ROOM = NO_BOUND;

/**
 * The forward pass over a whole flow: the rules of `earliest`, written out as flat loops (its
 * hottest code; a change derived incrementally runs the helpers instead, on the tasks it moves).
 * Returns E.
 */
function forward(
  g: Graph,
  order: Uint32Array,
  progress: Uint8Array,
  days: Int32Array,
  facts: TaskFacts,
  start: Int32Array,
  end: Int32Array,
): number {
  const { n, predStart, pred, links } = g;
  const least = facts.startNoEarlier ?? null;
  const atZero = facts.inProgressAtZero === true;
  let projectEnd = -1;
  for (let i = 0; i < n; i++) {
    const v = order[i] ?? 0;
    const p = progress[v];
    if (p === DONE) {
      start[v] = end[v] = FAR_BEFORE;
      continue;
    }
    const d = days[v] ?? 0;
    const first = predStart[v] ?? 0;
    const stop = predStart[v + 1] ?? 0;
    let s = 0;
    let f: number;
    if (atZero && p === STARTED) {
      f = d;
      if (links !== null) {
        const { predLink } = links;
        for (let k = first; k < stop; k++) {
          const link = predLink[k] ?? 0;
          if ((link & 2) === 0) continue;
          const q = pred[k] ?? 0;
          const x = ((link & 1) === 1 ? (start[q] ?? 0) : (end[q] ?? 0)) + (link >> 2);
          if (x > f) f = x;
        }
      }
    } else {
      if (least !== null && (least[v] ?? 0) > 0) s = least[v] ?? 0;
      if (links === null) {
        for (let k = first; k < stop; k++) {
          const x = end[pred[k] ?? 0] ?? 0;
          if (x > s) s = x;
        }
      } else {
        const { predLink } = links;
        for (let k = first; k < stop; k++) {
          const link = predLink[k] ?? 0;
          const q = pred[k] ?? 0;
          const x =
            ((link & 1) === 1 ? (start[q] ?? 0) : (end[q] ?? 0)) +
            (link >> 2) -
            ((link & 2) === 2 ? d : 0);
          if (x > s) s = x;
        }
      }
      f = s + d;
    }
    start[v] = s;
    end[v] = f;
    if (f > projectEnd) projectEnd = f;
  }
  return projectEnd;
}

/**
 * The backward pass over a whole flow: the rules of `latest`, as flat loops. With `room`, each
 * open task's links to its open successors also leave there the least room they give it (its
 * free float before E and its total float bound it; NO_ROOM: no open successor).
 */
function backward(
  g: Graph,
  order: Uint32Array,
  progress: Uint8Array,
  days: Int32Array,
  facts: TaskFacts,
  start: Int32Array,
  end: Int32Array,
  tail: Int32Array,
  bound: Int32Array,
  room: Int32Array | null,
): void {
  const { n, succStart, succ, links } = g;
  const finishBy = facts.finishNoLater ?? null;
  // Without finish constraints no bound is ever set: the loops leave `bound` out.
  let bounded = false;
  if (finishBy !== null) for (let v = 0; v < n && !bounded; v++) bounded = finishBy[v] !== NO_BOUND;
  for (let i = n - 1; i >= 0; i--) {
    const v = order[i] ?? 0;
    if (progress[v] === DONE) {
      // Read no more by the forward pass, and skipped by its predecessors below.
      start[v] = end[v] = tail[v] = -1;
      continue;
    }
    const d = days[v] ?? 0;
    const s = start[v] ?? 0;
    const f = end[v] ?? 0;
    const first = succStart[v] ?? 0;
    const stop = succStart[v + 1] ?? 0;
    let t = 0;
    let r = NO_ROOM;
    if (links === null && !bounded) {
      for (let k = first; k < stop; k++) {
        const q = succ[k] ?? 0;
        if (progress[q] === DONE) continue;
        const x = (tail[q] ?? 0) + (days[q] ?? 0);
        if (x > t) t = x;
        const y = (start[q] ?? 0) - f;
        if (y < r) r = y;
      }
    } else {
      let b = bounded ? (finishBy?.[v] ?? NO_BOUND) : NO_BOUND;
      for (let k = first; k < stop; k++) {
        const q = succ[k] ?? 0;
        if (progress[q] === DONE) continue;
        const link = links?.succLink[k] ?? 0;
        const lag = link >> 2;
        const off = ((link & 2) === 2 ? 0 : -(days[q] ?? 0)) - lag + ((link & 1) === 1 ? d : 0);
        const x = (tail[q] ?? 0) - off;
        if (x > t) t = x;
        const bq = bound[q] ?? NO_BOUND;
        if (bq !== NO_BOUND && bq + off < b) b = bq + off;
        const y =
          ((link & 2) === 2 ? (end[q] ?? 0) : (start[q] ?? 0)) - lag - ((link & 1) === 1 ? s : f);
        if (y < r) r = y;
      }
      bound[v] = b;
    }
    tail[v] = t;
    if (room !== null) room[v] = r;
  }
}

/** Both passes over a topological `order` of g, each task's days given. */
function wholePasses(
  g: Graph,
  order: Uint32Array,
  progress: Uint8Array,
  days: Int32Array,
  facts: TaskFacts,
  room: Int32Array | null,
): Passes {
  const { n } = g;
  const start = new Int32Array(n);
  const end = new Int32Array(n);
  const tail = new Int32Array(n);
  const bound = new Int32Array(n).fill(NO_BOUND);
  const projectEnd = forward(g, order, progress, days, facts, start, end);
  backward(g, order, progress, days, facts, start, end, tail, bound, room);
  return { start, end, projectEnd, tail, bound };
}

/** Total float of open task v, from its boundaries and latest finish. */
export function totalFloat(p: Passes, days: number, v: number): number {
  const lf = Math.min(p.projectEnd - (p.tail[v] ?? 0), p.bound[v] ?? NO_BOUND);
  return Math.min(lf - days - (p.start[v] ?? 0), lf - (p.end[v] ?? 0));
}

/**
 * The schedule as shown (see Cpm) from the passes' numbers: the room each task's links leave
 * found over its successors' rows (a derived version's; a whole recompute finds it forward).
 */
export function shown(
  g: Graph,
  progress: Uint8Array,
  duration: Uint32Array,
  facts: TaskFacts,
  p: Passes,
): Cpm {
  const { n, succStart, succ, links } = g;
  const { start, end } = p;
  const room = scratchRoom(n, true);
  for (let v = 0; v < n; v++) {
    if (progress[v] === DONE) continue;
    const s = start[v] ?? 0;
    const f = end[v] ?? 0;
    let least = NO_ROOM;
    for (let k = succStart[v] ?? 0, stop = succStart[v + 1] ?? 0; k < stop; k++) {
      const q = succ[k] ?? 0;
      if (progress[q] === DONE) continue;
      const link = links?.succLink[k] ?? 0;
      const x =
        ((link & 2) === 2 ? (end[q] ?? 0) : (start[q] ?? 0)) -
        (link >> 2) -
        ((link & 1) === 1 ? s : f);
      if (x < least) least = x;
    }
    room[v] = least;
  }
  return shownWith(progress, dayCounts(progress, duration, facts.milestone), facts, room, p);
}

/** The schedule as shown from the passes, each task's days and the room its links leave. */
function shownWith(
  progress: Uint8Array,
  days: Int32Array,
  facts: TaskFacts,
  room: Int32Array,
  p: Passes,
): Cpm {
  const n = progress.length;
  const { milestone } = facts;
  const { start, end, projectEnd, tail, bound } = p;
  // With no open milestone every shown start is its boundary: the same array.
  let milestones = false;
  if (milestone)
    for (let v = 0; v < n && !milestones; v++)
      milestones = milestone[v] === 1 && progress[v] !== DONE;
  const es = milestones ? new Int32Array(n) : start;
  const ef = new Int32Array(n);
  const ls = new Int32Array(n);
  const lf = new Int32Array(n);
  const slack = new Int32Array(n);
  const freeFloat = new Int32Array(n);
  const critical = new Uint8Array(n);
  for (let v = 0; v < n; v++) {
    if (progress[v] === DONE) {
      es[v] = ef[v] = ls[v] = lf[v] = slack[v] = freeFloat[v] = -1;
      continue;
    }
    const d = days[v] ?? 0;
    const s = start[v] ?? 0;
    const f = end[v] ?? 0;
    const bv = bound[v] ?? NO_BOUND;
    const fromEnd = projectEnd - (tail[v] ?? 0);
    const late = bv < fromEnd ? bv : fromEnd;
    const total = Math.min(late - d - s, late - f);
    if (milestone?.[v] === 1) {
      es[v] = ef[v] = s > 0 ? s - 1 : 0;
      ls[v] = late - 1;
    } else {
      es[v] = s;
      ef[v] = f - 1;
      ls[v] = late - d;
    }
    lf[v] = late - 1;
    slack[v] = total;
    critical[v] = total <= 0 ? 1 : 0;
    // Free float: the least room the task's links leave (E − F with no open successor), at
    // most its total float, never below 0.
    const r = room[v] ?? NO_ROOM;
    const free = r === NO_ROOM ? projectEnd - f : r;
    freeFloat[v] = free < 0 ? 0 : free < total ? free : total < 0 ? 0 : total;
  }
  return {
    passes: p,
    es,
    ef,
    ls,
    lf,
    slack,
    freeFloat,
    critical,
    finish: projectEnd < 0 ? -1 : Math.max(projectEnd - 1, 0),
  };
}

/**
 * The critical path method over a topological `order` of g (from topoOrder): both passes, and
 * the schedule as shown. Durations below 1 count as 1, except a milestone's (0).
 */
export function cpm(
  g: Graph,
  order: Uint32Array,
  progress: Uint8Array,
  duration: Uint32Array,
  facts: TaskFacts = {},
): Cpm {
  const days = dayCounts(progress, duration, facts.milestone);
  const room = scratchRoom(g.n);
  return shownWith(progress, days, facts, room, wholePasses(g, order, progress, days, facts, room));
}

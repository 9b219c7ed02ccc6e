import type { Graph } from './graph.ts';
import { PROGRESS } from './status.ts';

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
   * Tasks in progress as the contract schedules them: S = 0 (their FS and SS links and start
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
 * Done tasks read −1 everywhere (critical 0). `passes`: the numbers these were read from.
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
  readonly predType?: Uint8Array | undefined;
  readonly predLag?: Int32Array | undefined;
}

/** Successor rows with their links, as PredRows. */
export interface SuccRows {
  readonly succStart: Uint32Array;
  readonly succ: Uint32Array;
  readonly succType?: Uint8Array | undefined;
  readonly succLag?: Int32Array | undefined;
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
  const { pred, predType: types, predLag: lags } = rows;
  const d = taskDays(duration, facts.milestone, v);
  const first = rows.predStart[row] ?? 0;
  const stop = rows.predStart[row + 1] ?? 0;
  if (facts.inProgressAtZero === true && progress[v] === PROGRESS.started) {
    let f = d;
    if (types && lags)
      for (let k = first; k < stop; k++) {
        const type = types[k] ?? 0;
        const p = pred[k] ?? 0;
        if ((type & 2) === 0 || progress[p] === PROGRESS.done) continue;
        const x = finishNeed(type, lags[k] ?? 0, start[p] ?? 0, end[p] ?? 0);
        if (x > f) f = x;
      }
    out.s = 0;
    out.f = f;
    return;
  }
  let s = Math.max(0, facts.startNoEarlier?.[v] ?? 0);
  if (types && lags) {
    for (let k = first; k < stop; k++) {
      const p = pred[k] ?? 0;
      if (progress[p] === PROGRESS.done) continue;
      const x = startNeed(types[k] ?? 0, lags[k] ?? 0, start[p] ?? 0, end[p] ?? 0, d);
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
  const { succ, succType: types, succLag: lags } = rows;
  const { milestone } = facts;
  const d = taskDays(duration, milestone, v);
  let t = out.tail;
  let b = out.bound;
  for (let k = rows.succStart[row] ?? 0, stop = rows.succStart[row + 1] ?? 0; k < stop; k++) {
    const s = succ[k] ?? 0;
    if (progress[s] === PROGRESS.done) continue;
    const off = lateOffset(types?.[k] ?? 0, lags?.[k] ?? 0, d, taskDays(duration, milestone, s));
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

/** Both passes over a topological `order` of g. */
export function passes(
  g: Graph,
  order: Uint32Array,
  progress: Uint8Array,
  duration: Uint32Array,
  facts: TaskFacts = {},
): Passes {
  const { n } = g;
  const start = new Int32Array(n);
  const end = new Int32Array(n);
  const tail = new Int32Array(n);
  const bound = new Int32Array(n);
  const rows = rowsOf(g);
  const early = { s: 0, f: 0 };
  let projectEnd = -1;
  for (let i = 0; i < n; i++) {
    const v = order[i] ?? 0;
    if (progress[v] === PROGRESS.done) {
      start[v] = end[v] = -1;
      continue;
    }
    earliest(rows, v, v, progress, duration, facts, start, end, early);
    start[v] = early.s;
    end[v] = early.f;
    if (early.f > projectEnd) projectEnd = early.f;
  }
  const late = { tail: 0, bound: 0 };
  for (let i = n - 1; i >= 0; i--) {
    const v = order[i] ?? 0;
    if (progress[v] === PROGRESS.done) {
      tail[v] = -1;
      bound[v] = NO_BOUND;
      continue;
    }
    latestSeed(facts, v, late);
    latest(rows, v, v, progress, duration, facts, tail, bound, late);
    tail[v] = late.tail;
    bound[v] = late.bound;
  }
  return { start, end, projectEnd, tail, bound };
}

/** Total float of open task v, from its boundaries and latest finish. */
export function totalFloat(p: Passes, days: number, v: number): number {
  const lf = Math.min(p.projectEnd - (p.tail[v] ?? 0), p.bound[v] ?? NO_BOUND);
  return Math.min(lf - days - (p.start[v] ?? 0), lf - (p.end[v] ?? 0));
}

/** The schedule as shown (see Cpm) from the passes' numbers. */
export function shown(
  g: Graph,
  progress: Uint8Array,
  duration: Uint32Array,
  facts: TaskFacts,
  p: Passes,
): Cpm {
  const { n, succStart, succ, links } = g;
  const { milestone } = facts;
  const { start, end, projectEnd, tail, bound } = p;
  const es = new Int32Array(n);
  const ef = new Int32Array(n);
  const ls = new Int32Array(n);
  const lf = new Int32Array(n);
  const slack = new Int32Array(n);
  const freeFloat = new Int32Array(n);
  const critical = new Uint8Array(n);
  const types = links?.succType;
  const lags = links?.succLag;
  const early = { es: 0, ef: 0 };
  for (let v = 0; v < n; v++) {
    if (progress[v] === PROGRESS.done) {
      es[v] = ef[v] = ls[v] = lf[v] = slack[v] = freeFloat[v] = -1;
      continue;
    }
    const d = taskDays(duration, milestone, v);
    const s = start[v] ?? 0;
    const f = end[v] ?? 0;
    const late = Math.min(projectEnd - (tail[v] ?? 0), bound[v] ?? NO_BOUND);
    const total = Math.min(late - d - s, late - f);
    const mark = milestone?.[v] === 1;
    shownEarly(mark, s, f, early);
    es[v] = early.es;
    ef[v] = early.ef;
    ls[v] = mark ? late - 1 : late - d;
    lf[v] = late - 1;
    slack[v] = total;
    critical[v] = total <= 0 ? 1 : 0;
    // Free float: the least room any link to an open successor leaves; E − F with none.
    let free = projectEnd - f;
    let successors = false;
    for (let k = succStart[v] ?? 0, stop = succStart[v + 1] ?? 0; k < stop; k++) {
      const q = succ[k] ?? 0;
      if (progress[q] === PROGRESS.done) continue;
      const type = types?.[k] ?? 0;
      const room =
        ((type & 2) === 2 ? (end[q] ?? 0) : (start[q] ?? 0)) -
        (lags?.[k] ?? 0) -
        ((type & 1) === 1 ? s : f);
      if (!successors || room < free) free = room;
      successors = true;
    }
    freeFloat[v] = Math.max(0, Math.min(free, total));
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
  return shown(g, progress, duration, facts, passes(g, order, progress, duration, facts));
}

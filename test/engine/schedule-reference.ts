/**
 * A deliberately plain reference for the schedule with typed links, lags, milestones,
 * constraints and work in progress: every rule written as the planner's rule reads, each pass a
 * relaxation repeated until nothing changes (no topological order, no typed arrays, no cleverness),
 * over working-day indexes. The property tests compare the engine with it.
 */
import type { RefGraph } from './reference.ts';

export type LinkName = 'FS' | 'SS' | 'FF' | 'SF';

export interface RefLink {
  from: number;
  to: number;
  type: LinkName;
  lag: number;
}

/** A flow as the reference reads it; optional facts default to none. */
export interface RefFlow {
  n: number;
  links: RefLink[];
  progress: number[]; // 0 open, 1 started, 2 done
  duration: number[];
  milestone: boolean[];
  /** The least start boundary, or null. */
  startNoEarlier: (number | null)[];
  /** The greatest latest finish boundary, or null. */
  finishNoLater: (number | null)[];
  /** Tasks in progress start at day 0 (and only their FF and SF links hold them). */
  inProgressAtZero: boolean;
}

/** Per task; done tasks have null everywhere (critical false). */
export interface RefSchedule {
  S: (number | null)[];
  F: (number | null)[];
  LS: (number | null)[];
  LF: (number | null)[];
  earliestStart: (number | null)[];
  earliestFinish: (number | null)[];
  latestStart: (number | null)[];
  latestFinish: (number | null)[];
  totalFloat: (number | null)[];
  freeFloat: (number | null)[];
  critical: boolean[];
  /** The greatest F of the open tasks, null when none is open. */
  E: number | null;
  /** day max(E − 1, 0), null when nothing is open. */
  projectedFinish: number | null;
  status: string[];
}

const DONE = 2;

/** a[i], which the reference only asks of places it holds (else it throws). */
export function at<T>(a: ArrayLike<T>, i: number): T {
  const x = a[i];
  if (x === undefined) throw new RangeError(`no value at ${i}`);
  return x;
}
const STARTED = 1;

/** The plain flow of a RefGraph (FS links, no lag, nothing else). */
export function plainFlow(g: RefGraph): RefFlow {
  return {
    n: g.n,
    links: g.edges.map(([from, to]) => ({ from, to, type: 'FS', lag: 0 })),
    progress: g.progress,
    duration: g.duration,
    milestone: g.duration.map(() => false),
    startNoEarlier: g.duration.map(() => null),
    finishNoLater: g.duration.map(() => null),
    inProgressAtZero: false,
  };
}

export function days(flow: RefFlow, v: number): number {
  return flow.milestone[v] ? 0 : Math.max(1, at(flow.duration, v));
}

/** Relaxes `step` over every task until no value changes (a DAG settles within n + 1 rounds). */
function fixedPoint(n: number, step: () => boolean): void {
  for (let round = 0; round <= n + 1; round++) if (!step()) return;
  throw new Error('no fixed point: a cycle?');
}

export function refSchedule(flow: RefFlow): RefSchedule {
  const { n, links } = flow;
  const open = (v: number) => flow.progress[v] !== DONE;
  const tasks = [...Array(n).keys()];
  const live = links.filter((l) => open(l.from) && open(l.to));
  const atZero = (v: number) => flow.inProgressAtZero && flow.progress[v] === STARTED;

  // Forward: every task's least S and F meeting all of its links, from below.
  const S = tasks.map(() => 0);
  const F = tasks.map((v) => days(flow, v));
  fixedPoint(n, () => {
    let moved = false;
    for (const t of tasks.filter(open)) {
      const d = days(flow, t);
      let s = 0;
      let f = d;
      if (!atZero(t)) {
        s = Math.max(0, flow.startNoEarlier[t] ?? 0);
        for (const l of live.filter((l) => l.to === t)) {
          const p = l.from;
          if (l.type === 'FS') s = Math.max(s, at(F, p) + l.lag);
          if (l.type === 'SS') s = Math.max(s, at(S, p) + l.lag);
          if (l.type === 'FF') s = Math.max(s, at(F, p) + l.lag - d);
          if (l.type === 'SF') s = Math.max(s, at(S, p) + l.lag - d);
        }
        f = s + d;
      } else {
        for (const l of live.filter((l) => l.to === t)) {
          if (l.type === 'FF') f = Math.max(f, at(F, l.from) + l.lag);
          if (l.type === 'SF') f = Math.max(f, at(S, l.from) + l.lag);
        }
      }
      if (s !== S[t] || f !== F[t]) moved = true;
      S[t] = s;
      F[t] = f;
    }
    return moved;
  });
  const openTasks = tasks.filter(open);
  const E = openTasks.length === 0 ? null : Math.max(...openTasks.map((v) => at(F, v)));

  // Backward: every task's greatest LF meeting all of its links, from above.
  const LF = tasks.map(() => E ?? 0);
  const LS = (v: number) => at(LF, v) - days(flow, v);
  fixedPoint(n, () => {
    let moved = false;
    for (const t of openTasks) {
      const d = days(flow, t);
      let lf = Math.min(E ?? 0, flow.finishNoLater[t] ?? Infinity);
      for (const l of live.filter((l) => l.from === t)) {
        const s = l.to;
        if (l.type === 'FS') lf = Math.min(lf, LS(s) - l.lag);
        if (l.type === 'SS') lf = Math.min(lf, LS(s) - l.lag + d);
        if (l.type === 'FF') lf = Math.min(lf, at(LF, s) - l.lag);
        if (l.type === 'SF') lf = Math.min(lf, at(LF, s) - l.lag + d);
      }
      if (lf !== LF[t]) moved = true;
      LF[t] = lf;
    }
    return moved;
  });

  const total = (v: number) => Math.min(LS(v) - at(S, v), at(LF, v) - at(F, v));
  const free = (t: number) => {
    const rooms = live
      .filter((l) => l.from === t)
      .map((l) => {
        const s = l.to;
        if (l.type === 'FS') return at(S, s) - l.lag - at(F, t);
        if (l.type === 'SS') return at(S, s) - l.lag - at(S, t);
        if (l.type === 'FF') return at(F, s) - l.lag - at(F, t);
        return at(F, s) - l.lag - at(S, t);
      });
    const room = rooms.length === 0 ? (E ?? 0) - at(F, t) : Math.min(...rooms);
    return Math.max(0, Math.min(room, total(t)));
  };
  const field = (f: (v: number) => number) => tasks.map((v) => (open(v) ? f(v) : null));
  const mark = (v: number) => Math.max(at(S, v) - 1, 0);
  return {
    S: field((v) => at(S, v)),
    F: field((v) => at(F, v)),
    LS: field(LS),
    LF: field((v) => at(LF, v)),
    earliestStart: field((v) => (flow.milestone[v] ? mark(v) : at(S, v))),
    earliestFinish: field((v) => (flow.milestone[v] ? mark(v) : at(F, v) - 1)),
    latestStart: field((v) => (flow.milestone[v] ? at(LF, v) - 1 : LS(v))),
    latestFinish: field((v) => at(LF, v) - 1),
    totalFloat: field(total),
    freeFloat: field(free),
    critical: tasks.map((v) => open(v) && total(v) <= 0),
    E,
    projectedFinish: E === null ? null : Math.max(E - 1, 0),
    status: refLinkStatus(flow),
  };
}

/** Blocked while an FS predecessor is not done or an SS predecessor has not started. */
export function refLinkStatus(flow: RefFlow): string[] {
  return flow.progress.map((p, v) => {
    if (p === DONE) return 'done';
    if (p === STARTED) return 'in_progress';
    const holds = flow.links.some(
      (l) =>
        l.to === v &&
        ((l.type === 'FS' && flow.progress[l.from] !== DONE) ||
          (l.type === 'SS' && flow.progress[l.from] === 0)),
    );
    return holds ? 'blocked' : 'ready';
  });
}

/** The predecessors holding v's completion: FF not done, SF not started; by link order. */
export function refFinishBlockers(flow: RefFlow, v: number): number[] {
  return flow.links
    .filter(
      (l) =>
        l.to === v &&
        ((l.type === 'FF' && flow.progress[l.from] !== DONE) ||
          (l.type === 'SF' && flow.progress[l.from] === 0)),
    )
    .map((l) => l.from);
}

import { earliest, lateOffset, NO_BOUND, shownEarly, taskDays, type TaskFacts } from './cpm.ts';
import type { Graph } from './graph.ts';
import { PROGRESS } from './status.ts';

/**
 * Resource levelling by the serial rule, over the same working-day boundaries as cpm.ts. Open
 * tasks are ranked by unlevelled start, then least total float, then index; the highest-ranked
 * task whose predecessors are all placed goes next (with SS, FF, SF links or leads a successor
 * may rank before its predecessor), and starts at the least S its links and start constraint
 * allow, from its predecessors' levelled boundaries, on which its person is free for its whole
 * span (time off taken). A milestone takes no day and holds nobody; a task of no person (`person`
 * −1) is held by nobody; one whose duration is 0 (a person with no hours) is not scheduled, nor
 * is anything that waits on it.
 */
export interface LevelInput {
  g: Graph;
  progress: Uint8Array;
  /** Unlevelled shown starts and total float (cpm.ts): they rank the tasks. */
  es: Int32Array;
  slack: Int32Array;
  /** Levelled working days per task; 0: cannot be scheduled (a milestone's is not read). */
  duration: Uint32Array;
  /** The person holding each task (0 … people − 1), −1 for nobody. */
  person: Int32Array;
  people: number;
  /** Unlevelled start boundaries S (the passes' `start`), which rank before `es` when given. */
  start?: Int32Array;
  /** Milestones, constraints and the rule for tasks in progress, as cpm.ts's. */
  facts?: TaskFacts;
  /** Each person's time off: runs of taken day indexes [first, last], in any order. */
  taken?: readonly (readonly (readonly [first: number, last: number])[])[];
}

export interface Levelled {
  /** Levelled shown days (as cpm.ts's es and ef); −1 for done and unscheduled tasks. */
  start: Int32Array;
  finish: Int32Array;
  /** 1 for an open task left unscheduled. */
  unscheduled: Uint8Array;
  /**
   * Total float ≤ 0 on the levelled schedule, each person's next task counted as a successor by
   * an FS link.
   */
  critical: Uint8Array;
  /** The projected finish's day, max(E − 1, 0) over scheduled tasks; −1 when none is. */
  last: number;
}

export function level(input: LevelInput): Levelled {
  const { g, progress, es, slack, duration, person } = input;
  const facts = input.facts ?? {};
  const { n, succStart, succ } = g;
  const rows = { ...g, ...g.links };
  const start = new Int32Array(n).fill(-1);
  const end = new Int32Array(n).fill(-1);
  const unscheduled = new Uint8Array(n);
  const timeOff = Array.from({ length: input.people }, (_, who) => {
    const days = new BusyDays();
    for (const [first, last] of input.taken?.[who] ?? []) days.book(first, last);
    return days;
  });
  const busy = timeOff.map((days) => days.copy());
  const isMilestone = (v: number) => facts.milestone?.[v] === 1;
  // Levelled days: a milestone's 0 whatever its person's hours.
  const levelledDays = Uint32Array.from(duration, (d, v) => (isMilestone(v) ? 0 : d));

  const order = placementOrder(progress, input.start ?? es, slack);
  const rank = new Uint32Array(n);
  order.forEach((v, r) => (rank[v] = r));
  // Open predecessors not placed yet, per task; a task with none waits in `ready` by rank.
  const waiting = new Uint32Array(n);
  for (const v of order)
    for (let k = g.predStart[v] ?? 0, stop = g.predStart[v + 1] ?? 0; k < stop; k++)
      if (progress[g.pred[k] ?? 0] !== PROGRESS.done) waiting[v] = (waiting[v] ?? 0) + 1;
  const ready = new RankHeap(rank);
  for (const v of order) if (waiting[v] === 0) ready.push(v);
  const early = { s: 0, f: 0 };
  let projectEnd = -1;
  for (let v = ready.pop(); v >= 0; v = ready.pop()) {
    for (let k = succStart[v] ?? 0, stop = succStart[v + 1] ?? 0; k < stop; k++) {
      const s = succ[k] ?? 0;
      if (progress[s] === PROGRESS.done) continue;
      waiting[s] = (waiting[s] ?? 1) - 1;
      if (waiting[s] === 0) ready.push(s);
    }
    let waits = levelledDays[v] === 0 && !isMilestone(v);
    for (let k = g.predStart[v] ?? 0, stop = g.predStart[v + 1] ?? 0; k < stop; k++)
      if (unscheduled[g.pred[k] ?? 0] === 1) waits = true;
    if (waits) {
      unscheduled[v] = 1;
      continue;
    }
    // The least boundaries the links allow from the placed predecessors (unplaced ones are done).
    earliest(rows, v, v, progress, levelledDays, facts, start, end, early);
    const d = taskDays(levelledDays, facts.milestone, v);
    const s = d === 0 ? early.s : (busy[person[v] ?? -1]?.take(early.s, d) ?? early.s);
    start[v] = s;
    // A task in progress may finish later than its days, by its FF and SF links.
    end[v] = Math.max(s + d, early.f);
    projectEnd = Math.max(projectEnd, end[v] ?? 0);
  }
  const critical = levelledCritical(input, levelledDays, facts, start, end, projectEnd, timeOff);
  // Shown days, as cpm.ts shows them.
  const day = { es: 0, ef: 0 };
  for (let v = 0; v < n; v++) {
    if ((start[v] ?? -1) < 0) continue;
    shownEarly(isMilestone(v), start[v] ?? 0, end[v] ?? 0, day);
    start[v] = day.es;
    end[v] = day.ef;
  }
  return {
    start,
    finish: end,
    unscheduled,
    critical,
    last: projectEnd < 0 ? -1 : Math.max(projectEnd - 1, 0),
  };
}

/** Open tasks by rank: unlevelled start, then least total float, then index. */
function placementOrder(progress: Uint8Array, first: Int32Array, slack: Int32Array): Uint32Array {
  let open = 0;
  for (let v = 0; v < progress.length; v++) if (progress[v] !== PROGRESS.done) open++;
  const order = new Uint32Array(open);
  for (let v = 0, k = 0; v < progress.length; v++)
    if (progress[v] !== PROGRESS.done) order[k++] = v;
  return order.sort(
    (a, b) => (first[a] ?? 0) - (first[b] ?? 0) || (slack[a] ?? 0) - (slack[b] ?? 0) || a - b,
  );
}

/** Tasks waiting to be placed, the highest-ranked (least rank) first: a binary heap. */
class RankHeap {
  private readonly items: number[] = [];

  constructor(private readonly rank: Uint32Array) {}

  push(v: number): void {
    const { items, rank } = this;
    let i = items.length;
    items.push(v);
    while (i > 0) {
      const up = (i - 1) >> 1;
      const parent = items[up] ?? 0;
      if ((rank[parent] ?? 0) <= (rank[v] ?? 0)) break;
      items[i] = parent;
      i = up;
    }
    items[i] = v;
  }

  /** The highest-ranked task, −1 when none waits. */
  pop(): number {
    const { items, rank } = this;
    const top = items[0];
    const last = items.pop();
    if (top === undefined || last === undefined) return -1;
    if (items.length === 0) return top;
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= items.length) break;
      const right = child + 1;
      if (right < items.length && (rank[items[right] ?? 0] ?? 0) < (rank[items[child] ?? 0] ?? 0))
        child = right;
      if ((rank[items[child] ?? 0] ?? 0) >= (rank[last] ?? 0)) break;
      items[i] = items[child] ?? 0;
      i = child;
    }
    items[i] = last;
    return top;
  }
}

/**
 * Total float ≤ 0 on the levelled schedule: the backward pass over its boundaries, each task's
 * successors its dependents (their links) and the next task its person does (FS). A person's
 * next task may start before a task it waits on by a lead, so the successors are no order: each
 * task's latest finish is relaxed again whenever a successor's falls (a queue, as Bellman and
 * Ford's), from latest start first, so that a plain flow takes each task once. A task of a
 * person ends no later than the last free span of its days before that, as time off allows. A
 * task relaxed
 * more often than there are tasks is on a cycle no schedule meets (work in progress ahead of
 * what it waits on, by the person's order): its latest finish is then −∞, and it is critical.
 */
function levelledCritical(
  input: LevelInput,
  days: Uint32Array,
  facts: TaskFacts,
  start: Int32Array,
  end: Int32Array,
  projectEnd: number,
  timeOff: readonly BusyDays[],
): Uint8Array {
  const { g, person } = input;
  const { n, predStart, pred, succStart, succ } = g;
  const critical = new Uint8Array(n);
  const placed: number[] = [];
  for (let v = 0; v < n; v++) if ((start[v] ?? -1) >= 0) placed.push(v);
  const byStart = Uint32Array.from(placed).sort(
    (a, b) => (start[b] ?? 0) - (start[a] ?? 0) || b - a,
  );
  // Each person's next and previous task by start (milestones take no day: in no one's order).
  const next = new Int32Array(n).fill(-1);
  const previous = new Int32Array(n).fill(-1);
  const lastOf = new Int32Array(input.people).fill(-1);
  for (const v of byStart) {
    const who = person[v] ?? -1;
    if (who < 0 || days[v] === 0) continue;
    const after = lastOf[who] ?? -1;
    if (after >= 0) {
      next[v] = after;
      previous[after] = v;
    }
    lastOf[who] = v;
  }
  const d = (v: number) => taskDays(days, facts.milestone, v);
  const lf = new Float64Array(n);
  for (const v of placed) {
    const bound = facts.finishNoLater?.[v] ?? NO_BOUND;
    lf[v] = Math.min(projectEnd, bound === NO_BOUND ? Infinity : bound);
  }
  const links = g.links;
  const relax = (v: number): number => {
    let latest = lf[v] ?? 0;
    for (let k = succStart[v] ?? 0, stop = succStart[v + 1] ?? 0; k < stop; k++) {
      const s = succ[k] ?? 0;
      if ((start[s] ?? -1) < 0) continue;
      const link = links?.succLink[k] ?? 0;
      const off = lateOffset(link & 3, link >> 2, d(v), d(s));
      latest = Math.min(latest, (lf[s] ?? 0) + off);
    }
    const after = next[v] ?? -1;
    if (after >= 0) latest = Math.min(latest, (lf[after] ?? 0) - d(after));
    const off = timeOff[person[v] ?? -1];
    return off && d(v) > 0 ? off.latestEnd(latest, d(v)) : latest;
  };
  const queue = [...byStart];
  const queued = new Uint8Array(n).fill(1);
  const times = new Uint32Array(n);
  for (let head = 0; head < queue.length; head++) {
    const v = queue[head] ?? 0;
    queued[v] = 0;
    let latest = relax(v);
    if (latest >= (lf[v] ?? 0)) continue;
    times[v] = (times[v] ?? 0) + 1;
    if ((times[v] ?? 0) > placed.length) latest = -Infinity;
    lf[v] = latest;
    const upstream = (u: number) => {
      if (u < 0 || (start[u] ?? -1) < 0 || queued[u] === 1) return;
      queued[u] = 1;
      queue.push(u);
    };
    for (let k = predStart[v] ?? 0, stop = predStart[v + 1] ?? 0; k < stop; k++)
      upstream(pred[k] ?? 0);
    upstream(previous[v] ?? -1);
  }
  for (const v of placed) {
    const late = lf[v] ?? 0;
    const total = Math.min(late - d(v) - (start[v] ?? 0), late - (end[v] ?? 0));
    critical[v] = total <= 0 ? 1 : 0;
  }
  return critical;
}

/**
 * One person's busy days as sorted, disjoint, non-touching runs [from, to]: placing tasks
 * back to back merges their runs, so a gap search walks the idle gaps, not every task.
 */
class BusyDays {
  private readonly from: number[] = [];
  private readonly to: number[] = [];

  copy(): BusyDays {
    const days = new BusyDays();
    days.from.push(...this.from);
    days.to.push(...this.to);
    return days;
  }

  /** The greatest e ≤ `latest` such that the days e − days … e − 1 are all free. */
  latestEnd(latest: number, days: number): number {
    const { from, to } = this;
    let e = latest;
    // From the last run starting before e, back: each run in the way moves e to its start.
    let i = to.length - 1;
    while (i >= 0 && Number.isFinite(e)) {
      if ((from[i] ?? 0) > e - 1) i--;
      else if ((to[i] ?? 0) >= e - days) e = from[i--] ?? e;
      else break;
    }
    return e;
  }

  /** Books the days first … last (a person's time off), joining the runs they overlap or touch. */
  book(first: number, last: number): void {
    const { from, to } = this;
    // The runs from i to j − 1 overlap or touch [first, last]: they become one.
    let i = 0;
    while (i < to.length && (to[i] ?? 0) < first - 1) i++;
    let j = i;
    while (j < from.length && (from[j] ?? 0) <= last + 1) j++;
    const low = j > i ? Math.min(first, from[i] ?? first) : first;
    const high = j > i ? Math.max(last, to[j - 1] ?? last) : last;
    from.splice(i, j - i, low);
    to.splice(i, j - i, high);
  }

  /** Books the first `days` free days in a row at or after `ready`; returns the first. */
  take(ready: number, days: number): number {
    const { from, to } = this;
    // First run that ends at or after `ready`: the ones before it cannot overlap.
    let lo = 0;
    let hi = to.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((to[mid] ?? 0) < ready) lo = mid + 1;
      else hi = mid;
    }
    let day = ready;
    let i = lo;
    // Past the last run nothing is in the way (Infinity): the span fits there.
    while (day + days - 1 >= (from[i] ?? Infinity)) {
      day = Math.max(day, (to[i] ?? 0) + 1);
      i++;
    }
    // The gap before run i holds [day, end]; join the runs it touches.
    const end = day + days - 1;
    const joinsBefore = i > 0 && to[i - 1] === day - 1;
    const joinsAfter = from[i] === end + 1;
    if (joinsBefore && joinsAfter) {
      to[i - 1] = to[i] ?? end;
      from.splice(i, 1);
      to.splice(i, 1);
    } else if (joinsBefore) to[i - 1] = end;
    else if (joinsAfter) from[i] = day;
    else {
      from.splice(i, 0, day);
      to.splice(i, 0, end);
    }
    return day;
  }
}

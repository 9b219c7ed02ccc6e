import type { TaskFacts } from './cpm.ts';
import type { Graph } from './graph.ts';
import { PROGRESS } from './status.ts';

/**
 * Resource levelling by the serial rule (CONTRACT §5), in working-day offsets like cpm.ts.
 * Open tasks are placed one at a time in order of unlevelled earliest start, then least slack,
 * then index; each starts on the first day at or after its dependencies' levelled finish on
 * which its person is free for its whole span. A task of no person (`person` −1) is held by
 * nobody; one whose duration is 0 (a person with no hours) is not scheduled, nor is anything
 * that waits on it.
 */
export interface LevelInput {
  g: Graph;
  progress: Uint8Array;
  /** Unlevelled CPM offsets and slack (cpm.ts): they decide the order of placement. */
  es: Int32Array;
  slack: Int32Array;
  /** Levelled working days per task; 0: cannot be scheduled. */
  duration: Uint32Array;
  /** The person holding each task (0 … people − 1), −1 for nobody. */
  person: Int32Array;
  people: number;
  /** Unlevelled start boundaries S (the passes' `start`), first in the order; absent: `es`. */
  start?: Int32Array;
  /** Milestones (take no day), constraints and the rule for tasks in progress, as cpm.ts's. */
  facts?: TaskFacts;
  /** Each person's time off: runs of taken day indexes [first, last], in any order. */
  taken?: readonly (readonly (readonly [first: number, last: number])[])[];
}

export interface Levelled {
  /** Levelled offsets; −1 for done and unscheduled tasks. */
  start: Int32Array;
  finish: Int32Array;
  /** 1 for an open task left unscheduled. */
  unscheduled: Uint8Array;
  /** Zero slack on the levelled schedule, each person's next task counted as a successor. */
  critical: Uint8Array;
  /** Max finish over scheduled tasks, −1 when none is. */
  last: number;
}

export function level(input: LevelInput): Levelled {
  const { g, progress, es, slack, duration, person } = input;
  const { n, predStart, pred } = g;
  const start = new Int32Array(n).fill(-1);
  const finish = new Int32Array(n).fill(-1);
  const unscheduled = new Uint8Array(n);
  const busy = Array.from({ length: input.people }, () => new BusyDays());

  // Every dependency has a smaller unlevelled start than its dependents, so it is placed first.
  const order = placementOrder(progress, es, slack);
  let last = -1;
  // Reads of the typed arrays default (`?? 0`) only for the type checker: indexes are in range.
  for (const v of order) {
    const days = duration[v] ?? 0;
    let ready = 0;
    let waits = days === 0;
    for (let k = predStart[v] ?? 0, end = predStart[v + 1] ?? 0; k < end && !waits; k++) {
      const p = pred[k] ?? 0;
      if (progress[p] === PROGRESS.done) continue;
      if (unscheduled[p] === 1) waits = true;
      else ready = Math.max(ready, (finish[p] ?? 0) + 1);
    }
    if (waits) {
      unscheduled[v] = 1;
      continue;
    }
    const who = person[v] ?? -1;
    const from = busy[who]?.take(ready, days) ?? ready;
    start[v] = from;
    finish[v] = from + days - 1;
    last = Math.max(last, from + days - 1);
  }
  return {
    start,
    finish,
    unscheduled,
    critical: levelledCritical(input, start, finish, last),
    last,
  };
}

/** Open tasks by unlevelled earliest start, then least slack, then index. */
function placementOrder(progress: Uint8Array, es: Int32Array, slack: Int32Array): Uint32Array {
  let open = 0;
  for (let v = 0; v < progress.length; v++) if (progress[v] !== PROGRESS.done) open++;
  const order = new Uint32Array(open);
  for (let v = 0, k = 0; v < progress.length; v++)
    if (progress[v] !== PROGRESS.done) order[k++] = v;
  return order.sort(
    (a, b) => (es[a] ?? 0) - (es[b] ?? 0) || (slack[a] ?? 0) - (slack[b] ?? 0) || a - b,
  );
}

/**
 * A backward pass over the levelled schedule: a task's successors are its dependents and the
 * next task its person does; critical where it cannot slip a day without moving the finish.
 * Every successor starts after the task finishes, so latest start first is a valid order.
 */
function levelledCritical(
  input: LevelInput,
  start: Int32Array,
  finish: Int32Array,
  last: number,
): Uint8Array {
  const { g, person } = input;
  const { n, succStart, succ } = g;
  const critical = new Uint8Array(n);
  let placed = 0;
  for (let v = 0; v < n; v++) if ((start[v] ?? -1) >= 0) placed++;
  const byStart = new Uint32Array(placed);
  for (let v = 0, k = 0; v < n; v++) if ((start[v] ?? -1) >= 0) byStart[k++] = v;
  byStart.sort((a, b) => (start[b] ?? 0) - (start[a] ?? 0));
  const latestStart = new Int32Array(n);
  // Walking latest start first, the task seen last for a person is the next one they do.
  const nextOf = new Int32Array(input.people).fill(-1);
  for (const v of byStart) {
    let latest = last;
    for (let k = succStart[v] ?? 0, end = succStart[v + 1] ?? 0; k < end; k++) {
      const s = succ[k] ?? 0;
      if ((start[s] ?? -1) >= 0) latest = Math.min(latest, (latestStart[s] ?? 0) - 1);
    }
    const who = person[v] ?? -1;
    if (who >= 0) {
      const next = nextOf[who] ?? -1;
      if (next >= 0) latest = Math.min(latest, (latestStart[next] ?? 0) - 1);
      nextOf[who] = v;
    }
    const from = start[v] ?? 0;
    latestStart[v] = latest - ((finish[v] ?? 0) - from);
    critical[v] = latestStart[v] === from ? 1 : 0;
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

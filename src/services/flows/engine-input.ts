/**
 * A flow version as the engine takes it: one node per task, edges from dependencies,
 * progress and durations in working days. Built whole, or patched from the version before
 * when a change kept the graph's shape.
 *
 * Sub-tasks enter the engine as finished nodes with no edges: they take no time and hold
 * nothing up, and their status follows their objective's (CONTRACT §3).
 */
import { durationDays } from '../../engine/calendar.ts';
import { edgeLists } from '../../engine/graph.ts';
import { CopyOnWrite, type Derived } from '../../engine/incremental.ts';
import type { RecomputeInput } from '../../engine/recompute.ts';
import {
  PROGRESS,
  type EstimateRange,
  type FlowState,
  type TaskPositions,
  type TaskRecord,
} from './model.ts';

/** Hours an objective lasts: its open sub-tasks' when any is estimated, else its own estimate. */
export function objectiveHours(
  task: TaskRecord,
  subtasks: readonly TaskRecord[],
  openOnly: boolean,
): number | null {
  const counted = openOnly ? subtasks.filter((s) => s.progress !== PROGRESS.done) : subtasks;
  const estimated = counted.filter((s) => s.estimateHours !== null);
  if (estimated.length > 0) return estimated.reduce((sum, s) => sum + s.estimateHours!, 0);
  return task.estimateHours;
}

/**
 * The range an objective's hours may fall in, as objectiveHours counts them: its sub-tasks'
 * ranges summed (an estimated sub-task without one counting its estimate at both ends) when
 * its hours are theirs, else its own range; null when nothing counted has a range.
 */
export function objectiveRange(
  task: TaskRecord,
  subtasks: readonly TaskRecord[],
  openOnly: boolean,
): EstimateRange | null {
  const counted = (
    openOnly ? subtasks.filter((s) => s.progress !== PROGRESS.done) : subtasks
  ).filter((s) => s.estimateHours !== null);
  if (counted.length === 0) return task.estimateRange;
  if (counted.every((s) => s.estimateRange === null)) return null;
  let low = 0;
  let high = 0;
  for (const { estimateHours, estimateRange } of counted) {
    low += estimateRange?.low ?? estimateHours ?? 0;
    high += estimateRange?.high ?? estimateHours ?? 0;
  }
  return { low, high };
}

/** A whole version's engine input, without blocking counts (they are asked for on their own). */
export function engineInput(
  state: FlowState,
  index: ReadonlyMap<string, number>,
  children: ReadonlyMap<string, readonly TaskRecord[]>,
): RecomputeInput {
  const n = state.tasks.length;
  const progress = new Uint8Array(n);
  const duration = new Uint32Array(n);
  let edges = 0;
  for (const task of state.tasks) edges += task.dependsOn.length;
  const from = new Uint32Array(edges);
  const to = new Uint32Array(edges);
  let e = 0;
  for (let i = 0; i < n; i++) {
    const task = state.tasks[i]!;
    if (task.parentId !== null) {
      progress[i] = PROGRESS.done;
      duration[i] = 1;
      continue;
    }
    progress[i] = task.progress;
    duration[i] = durationDays(objectiveHours(task, children.get(task.id) ?? [], true));
    for (const dep of task.dependsOn) {
      from[e] = index.get(dep)!;
      to[e] = i;
      e++;
    }
  }
  return { n, from, to, progress, duration, withCounts: false };
}

/** Each objective's sub-tasks, in task order. */
export function childrenOf(tasks: readonly TaskRecord[]): Map<string, TaskRecord[]> {
  const children = new Map<string, TaskRecord[]>();
  for (const task of tasks) {
    if (!task.parentId) continue;
    const list = children.get(task.parentId);
    if (list) list.push(task);
    else children.set(task.parentId, [task]);
  }
  return children;
}

/**
 * How a change kept the graph's shape: the positions of the tasks it replaced (the same
 * tasks in the same places, each with the same parent and dependencies) and how many tasks
 * it appended after them. Null when it removed, moved or relinked any. Commands replace a
 * changed task's record and keep the others, so this compares references: at every position,
 * or at `replaced` alone when the caller knows the others are the same records.
 */
export function shapeChanges(
  before: TaskPositions,
  after: TaskPositions,
  replaced?: readonly number[],
): { changed: number[]; added: number } | null {
  if (after.size < before.size) return null;
  const changed: number[] = [];
  /** Whether position i holds the same task, with the same parent and dependencies. */
  const kept = (i: number): boolean => {
    const a = before.at(i);
    const b = after.at(i);
    if (a === b) return true;
    if (!a || !b || a.id !== b.id || a.parentId !== b.parentId) return false;
    if (
      a.dependsOn !== b.dependsOn &&
      (a.dependsOn.length !== b.dependsOn.length ||
        a.dependsOn.some((d, k) => d !== b.dependsOn[k]))
    )
      return false;
    changed.push(i);
    return true;
  };
  if (replaced) {
    for (const i of replaced) if (!kept(i)) return null;
  } else {
    for (let i = 0; i < before.size; i++) if (!kept(i)) return null;
  }
  return { changed, added: after.size - before.size };
}

/**
 * The engine facts of the next version from the last one's: progress and durations copied,
 * the appended tasks' (from position `old`) added, and progress and durations set again for
 * the changed and new objectives and the objectives of changed or new sub-tasks (whose hours
 * their open sub-tasks make). `touched`: the engine nodes set; `newFrom`/`newTo`: the edges
 * the appended tasks bring (deriveNext takes them beside the graph).
 */
export function patchedInput(
  previous: Pick<RecomputeInput, 'progress' | 'duration'>,
  tasks: TaskPositions,
  index: ReadonlyMap<string, number>,
  children: ReadonlyMap<string, readonly TaskRecord[]>,
  changed: readonly number[],
  old: number,
): {
  progress: Uint8Array;
  duration: Uint32Array;
  touched: number[];
  newFrom: Uint32Array;
  newTo: Uint32Array;
} {
  const n = tasks.size;
  // The previous version's arrays while nothing in them changes (an assignment; a start or
  // complete keeps every duration): each copy is memory outside the heap, collected by V8.
  const progress = new CopyOnWrite(previous.progress, n, 0);
  const duration = new CopyOnWrite(previous.duration, n, 0);
  const edges: [number, number][] = [];
  const touched = new Set<number>();
  const objectives = new Set<number>();
  for (const i of changed) {
    const parentId = tasks.at(i)?.parentId ?? null;
    objectives.add(parentId === null ? i : (index.get(parentId) ?? i));
  }
  for (let i = old; i < n; i++) {
    const task = tasks.at(i);
    touched.add(i);
    if (!task) continue;
    if (task.parentId !== null) {
      // A sub-task is a finished node of its own; it adds to its objective's hours.
      progress.set(i, PROGRESS.done);
      duration.set(i, 1);
      objectives.add(index.get(task.parentId)!);
    } else {
      objectives.add(i);
      for (const dep of task.dependsOn) edges.push([index.get(dep)!, i]);
    }
  }
  for (const i of objectives) {
    const record = tasks.at(i);
    if (!record) continue;
    progress.set(i, record.progress);
    duration.set(i, durationDays(objectiveHours(record, children.get(record.id) ?? [], true)));
    touched.add(i);
  }
  return {
    progress: progress.array,
    duration: duration.array,
    touched: [...touched],
    newFrom: Uint32Array.from(edges, ([f]) => f),
    newTo: Uint32Array.from(edges, ([, t]) => t),
  };
}

/**
 * The engine input of a version derived from the one before: its edge lists are read off the
 * graph when first asked for (only a whole recompute needs them, as for blocking counts), not
 * copied with every version; nor is the graph read before then (deriveNext builds the rows
 * with appended tasks when first read). Spread, it is a plain input.
 */
export function inputOver(
  derived: Pick<Derived, 'n' | 'g'>,
  progress: Uint8Array,
  duration: Uint32Array,
): RecomputeInput {
  let edges: { from: Uint32Array; to: Uint32Array } | null = null;
  const input = { n: derived.n, progress, duration, withCounts: false } as RecomputeInput;
  Object.defineProperties(input, {
    from: { enumerable: true, get: () => (edges ??= edgeLists(derived.g)).from },
    to: { enumerable: true, get: () => (edges ??= edgeLists(derived.g)).to },
  });
  return input;
}

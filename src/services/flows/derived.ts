/**
 * What a version derives beyond the engine's arrays: each task's status and critical flag as
 * the API shows them (a sub-task's follow its objective's), the done and ready counts, and
 * the blocking counts, carried from an earlier version's while only done-ness changes.
 */
import type { Graph } from '../../engine/graph.ts';
import { countsAfter } from '../../engine/incremental.ts';
import {
  STATUS_BLOCKED,
  STATUS_DONE,
  STATUS_IN_PROGRESS,
  STATUS_READY,
} from '../../engine/status.ts';
import { PROGRESS, type TaskRecord } from './model.ts';

export interface TaskStates {
  /** Per task: derived status (engine/status.ts codes) and critical flag. */
  readonly status: Uint8Array;
  readonly critical: Uint8Array;
  readonly counts: { taskCount: number; doneCount: number; readyCount: number };
}

/**
 * From the engine's status and critical flags, where sub-tasks are finished nodes. Only the
 * sub-tasks are visited (through `children`), never every task: a large flow's records are
 * scattered over the heap, and reading each one's parent was most of a version's derivation.
 */
export function taskStates(
  index: ReadonlyMap<string, number>,
  children: ReadonlyMap<string, readonly TaskRecord[]>,
  engine: { status: Uint8Array; critical: Uint8Array },
): TaskStates {
  // Copies when sub-tasks' entries are rewritten below (the engine's are kept as they were);
  // with none, the engine's own, which nothing changes once derived.
  const status = children.size > 0 ? engine.status.slice() : engine.status;
  const critical = children.size > 0 ? engine.critical.slice() : engine.critical;
  for (const [parentId, subtasks] of children) {
    const parent = index.get(parentId)!;
    for (const task of subtasks) {
      const i = index.get(task.id)!;
      status[i] =
        task.progress === PROGRESS.done
          ? STATUS_DONE
          : task.progress === PROGRESS.started
            ? STATUS_IN_PROGRESS
            : status[parent] === STATUS_BLOCKED
              ? STATUS_BLOCKED
              : STATUS_READY;
      // A sub-task is critical when its objective is and it is still open.
      critical[i] = critical[parent]! && status[i] !== STATUS_DONE ? 1 : 0;
    }
  }
  let done = 0;
  let ready = 0;
  for (let i = 0; i < status.length; i++) {
    if (status[i] === STATUS_DONE) done++;
    else if (status[i] === STATUS_READY) ready++;
  }
  return {
    status,
    critical,
    counts: { taskCount: status.length, doneCount: done, readyCount: ready },
  };
}

type DoneFlip = { v: number; done: boolean };

/** Counts of an earlier version and the done-ness changes since, to derive a version's from. */
export interface CountsBase {
  readonly counts: Promise<Uint32Array>;
  readonly flips: readonly DoneFlip[];
}

/** Done-ness changes carried from counts to counts at most: beyond, each walks ancestors anyway. */
const MAX_FLIPS = 256;

/** The engine nodes among `touched` whose done-ness differs between two versions' progress. */
export function doneFlips(
  touched: readonly number[],
  before: Uint8Array,
  after: Uint8Array,
): DoneFlip[] {
  return touched.flatMap((v) => {
    const done = after[v] === PROGRESS.done;
    return (before[v] === PROGRESS.done) === done ? [] : [{ v, done }];
  });
}

/**
 * One version's blocking counts (how many unfinished tasks transitively wait on each task),
 * computed once: from an earlier version's counts when only tasks' done-ness changed since
 * (countsAfter: their ancestors move by one), else in full.
 */
export class BlockingCounts {
  private counts: Promise<Uint32Array> | null = null;

  constructor(private base: CountsBase | null) {}

  /** `full`: a whole count; `graph`: the version's graph, for carried counts. */
  get(full: () => Promise<Uint32Array>, graph: () => Graph): Promise<Uint32Array> {
    if (!this.counts) {
      const carried = this.base;
      this.base = null;
      this.counts = carried
        ? carried.counts.then((counts) => countsAfter(graph(), counts, carried.flips), full)
        : full();
    }
    return this.counts;
  }

  /**
   * What the next version (which changed the done-ness of `flips`' tasks, and nothing of the
   * graph's shape) can take its counts from: these counts, or the ones these are to be taken
   * from, with the flips since. Null past MAX_FLIPS (a full count is then as cheap).
   */
  carry(flips: readonly DoneFlip[]): CountsBase | null {
    if (this.counts) return { counts: this.counts, flips };
    if (!this.base || this.base.flips.length + flips.length > MAX_FLIPS) return null;
    return { counts: this.base.counts, flips: [...this.base.flips, ...flips] };
  }
}

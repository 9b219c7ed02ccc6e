/**
 * Per task, the last version at which its Task (as GET /tasks/{taskId} shows it) changed:
 * stored fields, and derived ones too (status, blockedBy, criticalPath, subtasks), so a task a
 * completion made ready counts as changed. Carried from version to version in memory only; a
 * flow loaded afresh knows nothing before the version it loaded, and marks every task changed
 * at that version (a `changedSince` older than it then lists every task: more, never fewer).
 */
import type { Graph } from '../../engine/graph.ts';
import { STATUS_BLOCKED, STATUS_DONE } from '../../engine/status.ts';
import { sameView, subtaskView, type ViewedVersion, type ViewInputs } from './flow-body.ts';
import type { TaskPositions, TaskRecord } from './model.ts';

/** A version's marks, and the earliest version they are exact after. */
export interface ChangeMarks {
  readonly changedAt: Int32Array;
  readonly knownSince: number;
}

/** A version loaded without one before it: every task marked changed at `version`. */
export function loadedChanges(size: number, version: number): ChangeMarks {
  return { changedAt: new Int32Array(size).fill(version), knownSince: version };
}

/**
 * After a change that kept the graph's shape (tasks replaced in place or appended, no edge
 * of a kept task changed): only what could have moved is visited. A flat pass over the status
 * and critical flags (which a moved finish can flip anywhere); a task whose done-ness flipped
 * changes the blockedBy of its blocked successors; a replaced or new sub-task changes its
 * objective's `subtasks`.
 */
export function changesKeptShape(
  /** The version before, its tasks read by position: neither version's list is built for this. */
  before: Omit<ViewInputs, 'tasks'> & ChangeMarks & { readonly positions: TaskPositions },
  after: ViewedVersion & TaskPositions,
  graph: Graph,
  /** Positions below before's size whose records were replaced. */
  replaced: readonly number[],
  version: number,
): ChangeMarks {
  const n = after.size;
  const old = before.positions.size;
  const changedAt = new Int32Array(n);
  changedAt.set(before.changedAt);
  changedAt.fill(version, old);
  const { succStart, succ } = graph;
  for (let i = 0; i < old; i++) {
    const was = before.status[i];
    const is = after.status[i];
    if (was === is && before.critical[i] === after.critical[i]) continue;
    changedAt[i] = version;
    if ((was === STATUS_DONE) === (is === STATUS_DONE)) continue;
    const end = succStart[i + 1] ?? 0;
    for (let e = succStart[i] ?? end; e < end; e++) {
      const s = succ[e] ?? -1;
      if (after.status[s] === STATUS_BLOCKED) changedAt[s] = version;
    }
  }
  const markParent = (parentId: string | null) => {
    const at = parentId === null ? undefined : after.index.get(parentId);
    if (at !== undefined) changedAt[at] = version;
  };
  for (const i of replaced) {
    changedAt[i] = version;
    const was = before.positions.at(i);
    const is = after.at(i);
    // An objective shows only some of a sub-task's fields (a sub-task's updatedAt is not one).
    if (was?.parentId === is?.parentId && was && is && sameSubtask(was, is)) continue;
    markParent(was?.parentId ?? null);
    markParent(is?.parentId ?? null);
  }
  for (let i = old; i < n; i++) markParent(after.at(i)?.parentId ?? null);
  return { changedAt, knownSince: before.knownSince };
}

const sameSubtask = (a: TaskRecord, b: TaskRecord): boolean =>
  JSON.stringify(subtaskView(a)) === JSON.stringify(subtaskView(b));

/**
 * After any other change (a task removed, an edge added or removed): each task compared with
 * its view before, as the Flow body's fragments are (sameView). Such a change recomputes the
 * whole flow anyway, so a pass over every task is in proportion.
 */
export function changesAnyShape(
  before: ViewInputs & ChangeMarks,
  after: ViewedVersion,
  version: number,
): ChangeMarks {
  const n = after.state.tasks.length;
  const changedAt = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const j = sameView(after, before, i);
    changedAt[i] = j < 0 ? version : (before.changedAt[j] ?? version);
  }
  return { changedAt, knownSince: before.knownSince };
}

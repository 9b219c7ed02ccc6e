/**
 * One flow's part of the work views, computed once per flow version: its objectives
 * ranked for each view (and per assignee), its counts and its top blockers. A workspace
 * view merges these parts (views.ts), so a write re-ranks its own flow and no other.
 */
import {
  STATUS_BLOCKED,
  STATUS_DONE,
  STATUS_IN_PROGRESS,
  STATUS_READY,
} from '../../engine/status.ts';
import { TOP_BLOCKERS } from '../flows/report.ts';
import type { Snapshot } from '../flows/snapshot.ts';

export type ListView = 'available' | 'blocked' | 'in-progress' | 'mine';

const VIEW_STATUSES: Record<ListView, readonly number[]> = {
  available: [STATUS_READY],
  blocked: [STATUS_BLOCKED],
  'in-progress': [STATUS_IN_PROGRESS],
  mine: [STATUS_READY, STATUS_IN_PROGRESS],
};

/** A view's objectives in one flow, as task indices in rank order. */
export interface ViewRanks {
  readonly all: readonly number[];
  /** The same order split by assignee (null: unassigned), for the assignee filter. */
  readonly byAssignee: ReadonlyMap<string | null, readonly number[]>;
}

export interface Blocker {
  readonly taskId: string;
  readonly taskName: string;
  readonly flowId: string;
  readonly blocking: number;
}

/** What a flow's objectives are ranked by. */
interface RankKeys {
  readonly snapshot: Snapshot;
  readonly blocking: Uint32Array;
  /** The flow's due date in ms; +Infinity without one (ranks last). */
  readonly due: number;
}

export interface RankedFlow extends RankKeys {
  readonly views: Readonly<Record<ListView, ViewRanks>>;
  readonly counts: {
    readonly available: number;
    readonly blocked: number;
    readonly inProgress: number;
    readonly done: number;
  };
  /** Its unfinished tasks holding most up, at most TOP_BLOCKERS, in overview order. */
  readonly blockers: readonly Blocker[];
}

/**
 * Critical-path work first, then least slack, then the earliest flow due date, then the
 * most work held up; ties go to the flow's place in the index (oldest flow first), then to
 * the task's position in its flow. `position` is the flow's place, passed in because it
 * moves as flows come and go. Numbers only: merges call this on the event loop per poll.
 */
export function compareTasks(
  a: RankKeys,
  i: number,
  positionA: number,
  b: RankKeys,
  j: number,
  positionB: number,
): number {
  const sa = a.snapshot;
  const sb = b.snapshot;
  return (
    sb.critical[j]! - sa.critical[i]! ||
    sa.slack[i]! - sb.slack[j]! ||
    (a.due === b.due ? 0 : a.due < b.due ? -1 : 1) ||
    b.blocking[j]! - a.blocking[i]! ||
    positionA - positionB ||
    i - j
  );
}

export const compareBlockers = (a: Blocker, b: Blocker) =>
  b.blocking - a.blocking || a.flowId.localeCompare(b.flowId) || a.taskId.localeCompare(b.taskId);

function viewRanks(flow: RankKeys, statuses: readonly number[]): ViewRanks {
  const { state, status } = flow.snapshot;
  const all: number[] = [];
  for (let i = 0; i < state.tasks.length; i++) {
    if (state.tasks[i]!.parentId === null && statuses.includes(status[i]!)) all.push(i);
  }
  all.sort((i, j) => compareTasks(flow, i, 0, flow, j, 0));
  const byAssignee = new Map<string | null, number[]>();
  for (const i of all) {
    const assignee = state.tasks[i]!.assigneeId;
    const list = byAssignee.get(assignee);
    if (list) list.push(i);
    else byAssignee.set(assignee, [i]);
  }
  return { all, byAssignee };
}

export function rankFlow(snapshot: Snapshot, blocking: Uint32Array): RankedFlow {
  const counts = { available: 0, blocked: 0, inProgress: 0, done: 0 };
  const blockers: Blocker[] = [];
  snapshot.state.tasks.forEach((task, i) => {
    if (task.parentId !== null) return;
    const status = snapshot.status[i];
    if (status === STATUS_READY) counts.available++;
    else if (status === STATUS_BLOCKED) counts.blocked++;
    else if (status === STATUS_IN_PROGRESS) counts.inProgress++;
    else counts.done++;
    if (status !== STATUS_DONE && blocking[i]! > 0)
      blockers.push({
        taskId: task.id,
        taskName: task.name,
        flowId: snapshot.flow.id,
        blocking: blocking[i]!,
      });
  });
  const keys = {
    snapshot,
    blocking,
    due: snapshot.flow.dueDate ? Date.parse(snapshot.flow.dueDate) : Number.POSITIVE_INFINITY,
  };
  const views = Object.fromEntries(
    Object.entries(VIEW_STATUSES).map(([view, statuses]) => [view, viewRanks(keys, statuses)]),
  );
  // The workspace's top blockers are among the flows' own top ones: keep only those.
  return {
    ...keys,
    views: views as Record<ListView, ViewRanks>,
    counts,
    blockers: blockers.sort(compareBlockers).slice(0, TOP_BLOCKERS),
  };
}

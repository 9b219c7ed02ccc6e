/**
 * The API's view of a flow version: its summary, each task's view, and the Flow body as
 * JSON bytes, assembled from per-task fragments. A fragment whose inputs did not change
 * since the version before is copied from that version's bytes: after a transition only
 * the tasks it changed are serialized again.
 */
import type { Static } from '@sinclair/typebox';
import type { FlowSummarySchema, TaskSchema } from '../../contract/flow.schema.ts';
import { STATUS_BLOCKED, STATUS_DONE, statusName } from '../../engine/status.ts';
import { PROGRESS, type FlowRecord, type FlowState, type TaskRecord } from './model.ts';

/** Bytes of task JSON serialized for Flow bodies (copied fragments are not counted), since start. */
export const flowJsonStats = { taskBytes: 0 };

export type FlowSummaryView = Static<typeof FlowSummarySchema>;
export type TaskView = Static<typeof TaskSchema>;

/** What the views show of one version (a Snapshot is one). */
export interface ViewedVersion {
  readonly state: FlowState;
  /** A task by position, read without building the state's list. */
  at(position: number): TaskRecord | undefined;
  readonly index: ReadonlyMap<string, number>;
  readonly children: ReadonlyMap<string, readonly TaskRecord[]>;
  /** Per task: derived status (engine/status.ts codes) and critical flag. */
  readonly status: Uint8Array;
  readonly critical: Uint8Array;
}

/**
 * A version's Flow bytes with each task's slice in them, and what those slices were made
 * from: enough to tell whether one still holds for a later version.
 */
export interface Fragments {
  readonly bytes: Buffer;
  readonly start: Int32Array;
  readonly end: Int32Array;
  readonly flowId: string;
  readonly tasks: readonly TaskRecord[];
  readonly index: ReadonlyMap<string, number>;
  readonly children: ReadonlyMap<string, readonly TaskRecord[]>;
  readonly status: Uint8Array;
  readonly critical: Uint8Array;
}

export function summaryView(
  flow: FlowRecord,
  counts: { taskCount: number; doneCount: number; readyCount: number },
  publicUrlBase: string,
): FlowSummaryView {
  return {
    id: flow.id,
    name: flow.name,
    description: flow.description,
    archived: flow.archived,
    public: flow.publicToken !== null,
    publicUrl: flow.publicToken ? `${publicUrlBase}/flows/${flow.publicToken}` : null,
    dueDate: flow.dueDate,
    ...counts,
    version: flow.version,
    createdAt: flow.createdAt,
    updatedAt: flow.updatedAt,
  };
}

/** A sub-task as its objective's Task and work item show it. */
export function subtaskView(s: TaskRecord): TaskView['subtasks'][number] {
  return {
    id: s.id,
    name: s.name,
    done: s.progress === PROGRESS.done,
    assigneeId: s.assigneeId,
    estimateHours: s.estimateHours,
    estimateRange: s.estimateRange,
  };
}

export function taskView(version: ViewedVersion, id: string): TaskView {
  const { state, index, children } = version;
  const i = index.get(id)!;
  const task = version.at(i)!;
  const status = version.status[i]!;
  // Creation order, whatever order the edges were stored or added in: one version, one body.
  const dependsOn = [...task.dependsOn].sort((a, b) => index.get(a)! - index.get(b)!);
  const subtasks = (children.get(task.id) ?? []).map(subtaskView);
  return {
    id: task.id,
    flowId: state.flow.id,
    parentId: task.parentId,
    name: task.name,
    description: task.description,
    status: statusName(status),
    dependsOn,
    blockedBy:
      status === STATUS_BLOCKED
        ? dependsOn.filter((dep) => version.status[index.get(dep)!] !== STATUS_DONE)
        : [],
    assigneeId: task.assigneeId,
    estimateHours: task.estimateHours,
    estimateRange: task.estimateRange,
    criticalPath: version.critical[i] === 1,
    subtasks,
    requiredDeliverables: [...task.deliverables],
    createdAt: task.createdAt,
    updatedAt: task.updatedAt,
  };
}

/**
 * The Flow as JSON bytes: the same bytes as JSON.stringify of `summary` with every task's
 * view. Each task's slice is copied from `base` (an earlier version's) when nothing it shows
 * changed, so the kept fragments cost no memory beyond the body itself.
 */
export function flowBody(
  version: ViewedVersion,
  summary: FlowSummaryView,
  base: Fragments | null,
): Fragments {
  const { tasks } = version.state;
  const n = tasks.length;
  const head = Buffer.from(`${JSON.stringify(summary).slice(0, -1)},"tasks":[`);
  // Per task: the base's slice to copy (its position there), or -1 and freshly serialized bytes.
  const from = new Int32Array(n);
  const fresh = new Array<Buffer | undefined>(n);
  let size = head.length + Math.max(0, n - 1) + 2;
  for (let i = 0; i < n; i++) {
    const j = base ? reusable(version, base, i) : -1;
    from[i] = j;
    if (j >= 0) {
      size += base!.end[j]! - base!.start[j]!;
    } else {
      const bytes = Buffer.from(JSON.stringify(taskView(version, tasks[i]!.id)));
      fresh[i] = bytes;
      size += bytes.length;
      flowJsonStats.taskBytes += bytes.length;
    }
  }
  const out = Buffer.allocUnsafe(size);
  const start = new Int32Array(n);
  const end = new Int32Array(n);
  let at = head.copy(out, 0);
  for (let i = 0; i < n; i++) {
    if (i > 0) out[at++] = 0x2c; // ,
    start[i] = at;
    const j = from[i]!;
    at +=
      j >= 0 ? base!.bytes.copy(out, at, base!.start[j], base!.end[j]) : fresh[i]!.copy(out, at);
    end[i] = at;
  }
  out[at++] = 0x5d; // ]
  out[at++] = 0x7d; // }
  const { index, children, status, critical } = version;
  return {
    bytes: out,
    start,
    end,
    flowId: version.state.flow.id,
    tasks,
    index,
    children,
    status,
    critical,
  };
}

/** The position of task i's fragment in `base` when everything its view shows is unchanged; else -1. */
function reusable(version: ViewedVersion, base: Fragments, i: number): number {
  return base.flowId === version.state.flow.id ? sameView(version, base, i) : -1;
}

/** What a task's view was made from at an earlier version of the same flow. */
export interface ViewInputs {
  readonly tasks: readonly TaskRecord[];
  readonly index: ReadonlyMap<string, number>;
  readonly children: ReadonlyMap<string, readonly TaskRecord[]>;
  readonly status: Uint8Array;
  readonly critical: Uint8Array;
}

/**
 * The position of task i in `before` when everything its view (taskView) shows is the same
 * there; else -1 (also when the task is new).
 */
export function sameView(version: ViewedVersion, before: ViewInputs, i: number): number {
  const { state, index, children, status, critical } = version;
  const task = state.tasks[i]!;
  // Mostly in the same place (only removals shift tasks): no lookup then.
  const j = before.tasks[i] === task ? i : before.index.get(task.id);
  // Commands replace a changed task's record, so the same record means the same fields.
  if (j === undefined || before.tasks[j] !== task) return -1;
  if (before.status[j] !== status[i] || before.critical[j] !== critical[i]) return -1;
  const earlier = before.children.get(task.id) ?? [];
  const now = children.get(task.id) ?? [];
  if (earlier.length !== now.length || earlier.some((child, k) => child !== now[k])) return -1;
  // A blocked task's blockedBy lists its open dependencies (any other's is empty). (dependsOn
  // is listed in task order, which never changes: tasks keep their creation position.)
  if (status[i] !== STATUS_BLOCKED) return j;
  for (const dep of task.dependsOn) {
    if (
      (before.status[before.index.get(dep)!] === STATUS_DONE) !==
      (status[index.get(dep)!] === STATUS_DONE)
    )
      return -1;
  }
  return j;
}

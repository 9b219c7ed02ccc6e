/**
 * An immutable derived view of one flow version: status, critical path and CPM offsets
 * for every task, computed once per version; blocking counts and the serialized Flow are
 * computed on first use and cached, so repeated reads of a version cost nothing.
 *
 * Sub-tasks enter the engine as finished nodes with no edges: they take no time and hold
 * nothing up, and their status follows their objective's (CONTRACT §3).
 */
import { durationDays } from '../graph/calendar.ts';
import type { RecomputeInput, RecomputeOutput } from '../graph/recompute.ts';
import { STATUS_BLOCKED, STATUS_DONE, STATUS_IN_PROGRESS, STATUS_NAMES, STATUS_READY } from '../graph/status.ts';
import { PROGRESS, type FlowState, type TaskRecord } from './model.ts';

export type Recompute = (input: RecomputeInput) => Promise<RecomputeOutput>;

export interface FlowSummaryView {
  id: string;
  name: string;
  description: string | null;
  archived: boolean;
  public: boolean;
  publicUrl: string | null;
  dueDate: string | null;
  taskCount: number;
  doneCount: number;
  readyCount: number;
  createdAt: string;
  updatedAt: string;
}

/** Hours an objective lasts: its open sub-tasks' when any is estimated, else its own estimate. */
export function objectiveHours(task: TaskRecord, subtasks: readonly TaskRecord[], openOnly: boolean): number | null {
  const counted = openOnly ? subtasks.filter((s) => s.progress !== PROGRESS.done) : subtasks;
  const estimated = counted.filter((s) => s.estimateHours !== null);
  if (estimated.length > 0) return estimated.reduce((sum, s) => sum + s.estimateHours!, 0);
  return task.estimateHours;
}

export function engineInput(state: FlowState, index: ReadonlyMap<string, number>, children: ReadonlyMap<string, readonly TaskRecord[]>): RecomputeInput {
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

export class Snapshot {
  readonly version: number;
  /** Per task: derived status (graph/status.ts codes), critical flag, CPM offsets. */
  readonly status: Uint8Array;
  readonly critical: Uint8Array;
  readonly es: Int32Array;
  readonly ef: Int32Array;
  readonly slack: Int32Array;
  readonly finish: number;
  readonly counts: { taskCount: number; doneCount: number; readyCount: number };
  private blockingCounts: Promise<Uint32Array> | null = null;
  private flowBytes: Buffer | null = null;

  private constructor(
    readonly state: FlowState,
    readonly index: ReadonlyMap<string, number>,
    readonly children: ReadonlyMap<string, readonly TaskRecord[]>,
    readonly input: RecomputeInput,
    output: RecomputeOutput,
    private readonly recompute: Recompute,
    private readonly publicUrlBase: string,
  ) {
    this.version = state.flow.version;
    const n = state.tasks.length;
    this.status = output.status;
    this.critical = output.critical;
    this.es = output.es;
    this.ef = output.ef;
    this.slack = output.slack;
    this.finish = output.finish;
    let done = 0;
    let ready = 0;
    for (let i = 0; i < n; i++) {
      const task = state.tasks[i]!;
      if (task.parentId !== null) {
        const parent = this.index.get(task.parentId)!;
        this.status[i] = task.progress === PROGRESS.done ? STATUS_DONE
          : task.progress === PROGRESS.started ? STATUS_IN_PROGRESS
          : this.status[parent] === STATUS_BLOCKED ? STATUS_BLOCKED : STATUS_READY;
      }
      if (this.status[i] === STATUS_DONE) done++;
      else if (this.status[i] === STATUS_READY) ready++;
    }
    // A sub-task is critical when its objective is and it is still open.
    for (let i = 0; i < n; i++) {
      const task = state.tasks[i]!;
      if (task.parentId !== null) this.critical[i] = this.critical[this.index.get(task.parentId)!]! && this.status[i] !== STATUS_DONE ? 1 : 0;
    }
    this.counts = { taskCount: n, doneCount: done, readyCount: ready };
  }

  static async derive(state: FlowState, recompute: Recompute, publicUrlBase: string): Promise<Snapshot> {
    const index = new Map(state.tasks.map((t, i) => [t.id, i]));
    const children = new Map<string, TaskRecord[]>();
    for (const task of state.tasks) {
      if (!task.parentId) continue;
      const list = children.get(task.parentId);
      if (list) list.push(task);
      else children.set(task.parentId, [task]);
    }
    const input = engineInput(state, index, children);
    const output = await recompute(input);
    return new Snapshot(state, index, children, input, output, recompute, publicUrlBase);
  }

  get flow() {
    return this.state.flow;
  }

  task(id: string): TaskRecord | undefined {
    const i = this.index.get(id);
    return i === undefined ? undefined : this.state.tasks[i];
  }

  statusOf(id: string): (typeof STATUS_NAMES)[number] {
    return STATUS_NAMES[this.status[this.index.get(id)!]!]!;
  }

  /** How many unfinished tasks transitively wait on each task; computed once per version. */
  blocking(): Promise<Uint32Array> {
    this.blockingCounts ??= this.recompute({ ...this.input, withCounts: true }).then((out) => out.counts!);
    return this.blockingCounts;
  }

  hours(task: TaskRecord, openOnly = true): number | null {
    return task.parentId ? task.estimateHours : objectiveHours(task, this.children.get(task.id) ?? [], openOnly);
  }

  summary(): FlowSummaryView {
    const flow = this.state.flow;
    return {
      id: flow.id,
      name: flow.name,
      description: flow.description,
      archived: flow.archived,
      public: flow.publicToken !== null,
      publicUrl: flow.publicToken ? `${this.publicUrlBase}/flows/${flow.publicToken}` : null,
      dueDate: flow.dueDate,
      ...this.counts,
      createdAt: flow.createdAt,
      updatedAt: flow.updatedAt,
    };
  }

  taskView(id: string): Record<string, unknown> {
    const i = this.index.get(id)!;
    const task = this.state.tasks[i]!;
    const status = this.status[i]!;
    // Creation order, whatever order the edges were stored or added in: one version, one body.
    const dependsOn = [...task.dependsOn].sort((a, b) => this.index.get(a)! - this.index.get(b)!);
    const subtasks = (this.children.get(task.id) ?? []).map((s) => ({
      id: s.id, name: s.name, done: s.progress === PROGRESS.done, assigneeId: s.assigneeId, estimateHours: s.estimateHours,
    }));
    return {
      id: task.id,
      flowId: this.state.flow.id,
      parentId: task.parentId,
      name: task.name,
      description: task.description,
      status: STATUS_NAMES[status],
      dependsOn,
      blockedBy: status === STATUS_BLOCKED ? dependsOn.filter((dep) => this.status[this.index.get(dep)!] !== STATUS_DONE) : [],
      assigneeId: task.assigneeId,
      estimateHours: task.estimateHours,
      criticalPath: this.critical[i] === 1,
      subtasks,
      requiredDeliverables: task.deliverables,
      createdAt: task.createdAt,
      updatedAt: task.updatedAt,
    };
  }

  /** The Flow as JSON bytes, serialized once per version. */
  flowJson(): Buffer {
    this.flowBytes ??= Buffer.from(JSON.stringify({ ...this.summary(), tasks: this.state.tasks.map((t) => this.taskView(t.id)) }));
    return this.flowBytes;
  }
}

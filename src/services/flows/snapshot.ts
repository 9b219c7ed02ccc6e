/**
 * An immutable derived view of one flow version: status, critical path and CPM offsets
 * for every task, computed once per version; blocking counts and the serialized Flow are
 * computed on first use and cached, so repeated reads of a version cost nothing. The Flow
 * body is assembled from per-task JSON fragments, and a fragment whose inputs did not change
 * since the version before is reused: after a transition only the tasks it changed are
 * serialized again.
 *
 * Sub-tasks enter the engine as finished nodes with no edges: they take no time and hold
 * nothing up, and their status follows their objective's (CONTRACT §3).
 */
import { durationDays } from '../../engine/calendar.ts';
import type { Graph } from '../../engine/graph.ts';
import { appendNodes, countsAfter, derivedFrom, deriveNext, type Derived } from '../../engine/incremental.ts';
import type { RecomputeInput, RecomputeOutput } from '../../engine/recompute.ts';
import { STATUS_BLOCKED, STATUS_DONE, STATUS_IN_PROGRESS, STATUS_NAMES, STATUS_READY } from '../../engine/status.ts';
import { PROGRESS, type FlowState, type TaskRecord } from './model.ts';

export interface Recompute {
  /** A whole flow's derivation (in this thread or on the pool). */
  (input: RecomputeInput): Promise<RecomputeOutput>;
  /** Runs (and times) a derivation from the version before, always in this thread. */
  incremental<T>(derive: () => T): T;
}

/** Bytes of task JSON serialized for Flow bodies (copied fragments are not counted), since start. */
export const flowJsonStats = { taskBytes: 0 };

/**
 * A version's Flow bytes with each task's slice in them, and what those slices were made
 * from: enough to tell whether one still holds for a later version.
 */
interface Fragments {
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

type DoneFlip = { v: number; done: boolean };
interface CountsBase {
  readonly counts: Promise<Uint32Array>;
  readonly flips: readonly DoneFlip[];
}
/** Done-ness changes carried from counts to counts at most: beyond, each walks ancestors anyway. */
const MAX_FLIPS = 256;

/** What the engine gives a snapshot: a full recompute's output, or an incremental derivation. */
type EngineOutput = RecomputeOutput | Derived;

const isDerived = (output: EngineOutput): output is Derived => 'tail' in output;

function childrenOf(tasks: readonly TaskRecord[]): Map<string, TaskRecord[]> {
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
 * changed task's record and keep the others, so this compares references.
 */
function shapeChanges(before: readonly TaskRecord[], after: readonly TaskRecord[]): { changed: number[]; added: number } | null {
  if (after.length < before.length) return null;
  const changed: number[] = [];
  for (let i = 0; i < before.length; i++) {
    const a = before[i]!;
    const b = after[i]!;
    if (a === b) continue;
    if (a.id !== b.id || a.parentId !== b.parentId) return null;
    if (a.dependsOn !== b.dependsOn && (a.dependsOn.length !== b.dependsOn.length || a.dependsOn.some((d, k) => d !== b.dependsOn[k]))) return null;
    changed.push(i);
  }
  return { changed, added: after.length - before.length };
}

/**
 * The engine input of the next version from the last one's: its edges, progress and
 * durations copied, the appended tasks (from position `old`) and their edges added, and
 * progress and durations set again for the changed and new objectives and the objectives
 * of changed or new sub-tasks (whose hours their open sub-tasks make). `touched`: the engine
 * nodes set; `newFrom`/`newTo`: the new edges.
 */
function patchedInput(
  previous: RecomputeInput, tasks: readonly TaskRecord[], index: ReadonlyMap<string, number>,
  children: ReadonlyMap<string, readonly TaskRecord[]>, changed: readonly number[], old: number,
): { input: RecomputeInput; touched: number[]; newFrom: Uint32Array; newTo: Uint32Array } {
  const n = tasks.length;
  const progress = new Uint8Array(n);
  progress.set(previous.progress);
  const duration = new Uint32Array(n);
  duration.set(previous.duration);
  const edges: [number, number][] = [];
  const touched = new Set<number>();
  const objectives = new Set<number>();
  for (const i of changed) objectives.add(tasks[i]!.parentId === null ? i : index.get(tasks[i]!.parentId!)!);
  for (let i = old; i < n; i++) {
    const task = tasks[i]!;
    touched.add(i);
    if (task.parentId !== null) {
      // A sub-task is a finished node of its own; it adds to its objective's hours.
      progress[i] = PROGRESS.done;
      duration[i] = 1;
      objectives.add(index.get(task.parentId)!);
    } else {
      objectives.add(i);
      for (const dep of task.dependsOn) edges.push([index.get(dep)!, i]);
    }
  }
  for (const i of objectives) {
    const record = tasks[i]!;
    progress[i] = record.progress;
    duration[i] = durationDays(objectiveHours(record, children.get(record.id) ?? [], true));
    touched.add(i);
  }
  const newFrom = Uint32Array.from(edges, ([f]) => f);
  const newTo = Uint32Array.from(edges, ([, t]) => t);
  const append = (before: Uint32Array, added: Uint32Array) => {
    if (added.length === 0) return before;
    const all = new Uint32Array(before.length + added.length);
    all.set(before);
    all.set(added, before.length);
    return all;
  };
  return { input: { ...previous, n, from: append(previous.from, newFrom), to: append(previous.to, newTo), progress, duration }, touched: [...touched], newFrom, newTo };
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
  /** Counts of an earlier version and the done-ness changes since, to derive this version's from. */
  private countsBase: CountsBase | null = null;
  private flowBytes: Buffer | null = null;
  private fragments: Fragments | null = null;

  private constructor(
    readonly state: FlowState,
    readonly index: ReadonlyMap<string, number>,
    readonly children: ReadonlyMap<string, readonly TaskRecord[]>,
    readonly input: RecomputeInput,
    /** The engine's own result (sub-tasks as finished nodes), kept to derive the next version from. */
    private output: EngineOutput,
    private readonly recompute: Recompute,
    private readonly publicUrlBase: string,
    /** The latest fragments of an earlier version, to reuse (never a chain of versions: one set). */
    private base: Fragments | null,
  ) {
    this.version = state.flow.version;
    const n = state.tasks.length;
    // Copies: sub-tasks' entries are rewritten below, and the engine's are kept as they were.
    this.status = output.status.slice();
    this.critical = output.critical.slice();
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

  /**
   * `previous`: an earlier version of the same flow. Its serialized tasks may be reused; and
   * when the change kept the graph's shape (no task, dependency or sub-task added or removed:
   * a start, complete, reopen, assignment or estimate), the engine's arrays are patched for
   * the changed tasks and the next version is derived incrementally (deriveNext) instead of
   * recomputed.
   */
  static async derive(state: FlowState, recompute: Recompute, publicUrlBase: string, previous: Snapshot | null = null): Promise<Snapshot> {
    const base = previous ? previous.fragments ?? previous.base : null;
    const shape = previous ? shapeChanges(previous.state.tasks, state.tasks) : null;
    if (previous && shape) {
      const { changed, added } = shape;
      const old = previous.state.tasks.length;
      let index = previous.index;
      if (added > 0) {
        const grown = new Map(previous.index);
        for (let i = old; i < state.tasks.length; i++) grown.set(state.tasks[i]!.id, i);
        index = grown;
      }
      const appended = state.tasks.slice(old);
      // Only when each new task depends on earlier ones: then the old order still holds.
      if (appended.every((task, k) => task.dependsOn.every((dep) => (index.get(dep) ?? Infinity) < old + k))) {
        const subtasksMoved = appended.some((task) => task.parentId !== null) || changed.some((i) => state.tasks[i]!.parentId !== null);
        const children = subtasksMoved ? childrenOf(state.tasks) : previous.children;
        const { input, touched, newFrom, newTo } = patchedInput(previous.input, state.tasks, index, children, changed, old);
        const output = recompute.incremental(() => {
          const engine = added > 0 ? appendNodes(previous.engine(), added, newFrom, newTo) : previous.engine();
          return deriveNext(engine, touched, input.progress, input.duration);
        });
        const snapshot = new Snapshot(state, index, children, input, output, recompute, publicUrlBase, base);
        if (added === 0) {
          const flips = touched.flatMap((v) => {
            const done = input.progress[v] === PROGRESS.done;
            return (previous.input.progress[v] === PROGRESS.done) === done ? [] : [{ v, done }];
          });
          snapshot.countsBase = previous.countsFor(flips);
        }
        return snapshot;
      }
    }
    const index = new Map(state.tasks.map((t, i) => [t.id, i]));
    const children = childrenOf(state.tasks);
    const input = engineInput(state, index, children);
    const output = await recompute(input);
    return new Snapshot(state, index, children, input, output, recompute, publicUrlBase, base);
  }

  /** The dependency graph as the engine holds it (successor and predecessor rows by task position). */
  graph(): Graph {
    return this.engine().g;
  }

  /** The engine's state for deriveNext: kept from the last one, or rebuilt from a full recompute's output once. */
  private engine(): Derived {
    if (isDerived(this.output)) return this.output;
    this.output = derivedFrom(this.input, this.output);
    return this.output;
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

  /**
   * How many unfinished tasks transitively wait on each task; computed once per version:
   * from an earlier version's counts when only tasks' done-ness changed since (countsAfter:
   * their ancestors move by one), else in full.
   */
  blocking(): Promise<Uint32Array> {
    if (!this.blockingCounts) {
      const full = () => this.recompute({ ...this.input, withCounts: true }).then((out) => out.counts!);
      const carried = this.countsBase;
      this.countsBase = null;
      this.blockingCounts = carried
        ? carried.counts.then((counts) => countsAfter(this.engine().g, counts, carried.flips), full)
        : full();
    }
    return this.blockingCounts;
  }

  /**
   * What the next version (which changed the done-ness of `flips`' tasks, and nothing of the
   * graph's shape) can take its counts from: these counts, or the ones this version took its
   * own from, with the flips since. Null past MAX_FLIPS (a full count is then as cheap).
   */
  private countsFor(flips: readonly DoneFlip[]): CountsBase | null {
    if (this.blockingCounts) return { counts: this.blockingCounts, flips };
    if (!this.countsBase || this.countsBase.flips.length + flips.length > MAX_FLIPS) return null;
    return { counts: this.countsBase.counts, flips: [...this.countsBase.flips, ...flips] };
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

  /**
   * The Flow as JSON bytes, once per version: the same bytes as JSON.stringify of the summary
   * with every taskView. Each task's slice is copied from the version before when nothing it
   * shows changed (so the kept fragments cost no memory beyond the body itself).
   */
  flowJson(): Buffer {
    this.flowBytes ??= this.assemble();
    return this.flowBytes;
  }

  private assemble(): Buffer {
    const { tasks } = this.state;
    const n = tasks.length;
    const base = this.base;
    const head = Buffer.from(`${JSON.stringify(this.summary()).slice(0, -1)},"tasks":[`);
    // Per task: the base's slice to copy (its position there), or -1 and freshly serialized bytes.
    const from = new Int32Array(n);
    const fresh = new Array<Buffer | undefined>(n);
    let size = head.length + Math.max(0, n - 1) + 2;
    for (let i = 0; i < n; i++) {
      const j = base ? this.reusable(base, i) : -1;
      from[i] = j;
      if (j >= 0) {
        size += base!.end[j]! - base!.start[j]!;
      } else {
        const bytes = Buffer.from(JSON.stringify(this.taskView(tasks[i]!.id)));
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
      at += j >= 0 ? base!.bytes.copy(out, at, base!.start[j], base!.end[j]) : fresh[i]!.copy(out, at);
      end[i] = at;
    }
    out[at++] = 0x5d; // ]
    out[at++] = 0x7d; // }
    this.fragments = { bytes: out, start, end, flowId: this.flow.id, tasks, index: this.index, children: this.children, status: this.status, critical: this.critical };
    this.base = null;
    return out;
  }

  /** The position of task i's fragment in `base` when everything taskView shows of it is unchanged; else -1. */
  private reusable(base: Fragments, i: number): number {
    const task = this.state.tasks[i]!;
    // Mostly in the same place (only removals shift tasks): no lookup then.
    const j = base.tasks[i] === task ? i : base.index.get(task.id);
    // Commands replace a changed task's record, so the same record means the same fields.
    if (j === undefined || base.tasks[j] !== task || base.flowId !== this.flow.id) return -1;
    if (base.status[j] !== this.status[i] || base.critical[j] !== this.critical[i]) return -1;
    const before = base.children.get(task.id) ?? [];
    const now = this.children.get(task.id) ?? [];
    if (before.length !== now.length || before.some((child, k) => child !== now[k])) return -1;
    // A blocked task's blockedBy lists its open dependencies (any other's is empty). (dependsOn
    // is listed in task order, which never changes: tasks keep their creation position.)
    if (this.status[i] !== STATUS_BLOCKED) return j;
    for (const dep of task.dependsOn) {
      if ((base.status[base.index.get(dep)!] === STATUS_DONE) !== (this.status[this.index.get(dep)!] === STATUS_DONE)) return -1;
    }
    return j;
  }
}

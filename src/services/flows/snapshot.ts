/**
 * An immutable derived view of one flow version: status, critical path and CPM offsets
 * for every task, computed once per version; blocking counts and the serialized Flow are
 * computed on first use and cached, so repeated reads of a version cost nothing. A change
 * that keeps the graph's shape is derived incrementally from the version before.
 */
import type { Graph } from '../../engine/graph.ts';
import { derivedFrom, deriveNext, slackOf, type Derived } from '../../engine/incremental.ts';
import type { RecomputeInput, RecomputeOutput } from '../../engine/recompute.ts';
import type { TaskStatus } from '../../contract/vocabulary.ts';
import { statusName } from '../../engine/status.ts';
import { BlockingCounts, doneFlips, taskStates, type CountsBase } from './derived.ts';
import {
  childrenOf,
  engineInput,
  inputOver,
  objectiveHours,
  objectiveRange,
  patchedInput,
  shapeChanges,
} from './engine-input.ts';
import {
  flowBody,
  summaryView,
  taskView,
  type FlowSummaryView,
  type Fragments,
  type TaskView,
} from './flow-body.ts';
import {
  isPositioned,
  LayeredState,
  NextState,
  positionedTasks,
  type EstimateRange,
  type FlowState,
  type TaskChanges,
  type TaskPositions,
  type TaskRecord,
} from './model.ts';
import { AppendedIndex } from './task-index.ts';
import {
  changesAnyShape,
  changesKeptShape,
  loadedChanges,
  type ChangeMarks,
} from './task-changes.ts';

export interface Recompute {
  /** A whole flow's derivation (in this thread or on the pool, in the flow's workspace's turn). */
  (input: RecomputeInput, workspaceId: string): Promise<RecomputeOutput>;
  /** Runs (and times) a derivation from the version before, always in this thread. */
  incremental<T>(derive: () => T): T;
}

/** What the engine gives a snapshot: a full recompute's output, or an incremental derivation. */
type EngineOutput = RecomputeOutput | Derived;

const isDerived = (output: EngineOutput): output is Derived => 'tail' in output;

/**
 * What a command judges a version by: its stored facts, and its derived status and graph.
 * A Snapshot is one; a command list's Draft (draft.ts) is one not derived yet.
 */
export interface FlowView {
  readonly state: FlowState;
  readonly index: ReadonlyMap<string, number>;
  readonly children: ReadonlyMap<string, readonly TaskRecord[]>;
  readonly flow: FlowState['flow'];
  /** How many tasks, sub-tasks included. */
  readonly size: number;
  /** The task at a position. */
  at(position: number): TaskRecord | undefined;
  task(id: string): TaskRecord | undefined;
  /** The task's status as the API shows it, as its engine/status.ts code. */
  statusCode(id: string): number;
  statusOf(id: string): TaskStatus;
  graph(): Graph;
  /** The state after `changes`, at the flow's next version. */
  next(changes: TaskChanges): FlowState;
}

/**
 * The index and sub-task lists of a version derived whole: the version before's when `replaced`
 * says its tasks kept their places (a command list's draft replaces and appends, never moves)
 * and no sub-task changed, else built anew. A large flow's index is megabytes, and a draft that
 * added a dependency is derived whole.
 */
function placesOf(
  state: FlowState,
  previous: Snapshot | null,
  replaced: readonly number[] | undefined,
): { index: ReadonlyMap<string, number>; children: ReadonlyMap<string, readonly TaskRecord[]> } {
  const { tasks } = state;
  if (
    previous &&
    replaced &&
    tasks.length >= previous.size &&
    replaced.every((i) => tasks[i]?.id === previous.at(i)?.id)
  ) {
    const appended = tasks.slice(previous.size);
    const index =
      appended.length > 0
        ? AppendedIndex.of(
            previous.index,
            appended.map((task) => task.id),
            previous.size,
          )
        : previous.index;
    const subtasksKept =
      appended.every((task) => task.parentId === null) &&
      replaced.every((i) => tasks[i]?.parentId === null && previous.at(i)?.parentId === null);
    return { index, children: subtasksKept ? previous.children : childrenOf(tasks) };
  }
  return { index: new Map(tasks.map((t, i) => [t.id, i])), children: childrenOf(tasks) };
}

export class Snapshot implements FlowView {
  readonly version: number;
  /** Per task: derived status (engine/status.ts codes), critical flag, CPM offsets. */
  readonly status: Uint8Array;
  readonly critical: Uint8Array;
  readonly es: Int32Array;
  readonly ef: Int32Array;
  readonly finish: number;
  readonly counts: { taskCount: number; doneCount: number; readyCount: number };
  /**
   * This version's change marks (task-changes.ts), made when first read: a what-if's scenario
   * and a batch's steps never pay for them, and a committed version has them made off the
   * request's path (settleMarks). Until then the maker holds the version before.
   */
  #marks: ChangeMarks | null = null;
  #makeMarks: ((self: Snapshot) => ChangeMarks) | null;
  private readonly blockingCounts: BlockingCounts;
  /** This version's Flow body and its slices, once serialized. */
  private fragments: Fragments | null = null;
  /** Slack, once asked for. */
  private slackDays: Int32Array | null = null;
  /** The tasks by position: the state's list, or a draft's read through it until its list is built. */
  private readonly tasks: TaskPositions;

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
    /** Counts of an earlier version and the done-ness changes since, to derive this version's from. */
    countsBase: CountsBase | null,
    /** Makes this version's change marks, from its status and critical flags. */
    marks: (self: Snapshot) => ChangeMarks,
  ) {
    this.#makeMarks = marks;
    this.version = state.flow.version;
    this.tasks = positionedTasks(state);
    const states = taskStates(index, children, output);
    this.status = states.status;
    this.critical = states.critical;
    this.counts = states.counts;
    this.es = output.es;
    this.ef = output.ef;
    this.finish = output.finish;
    this.blockingCounts = new BlockingCounts(countsBase);
  }

  /** Per task, the last version its Task changed at, exact after `knownSince`. */
  get changedAt(): Int32Array {
    return this.settleMarks().changedAt;
  }

  /**
   * Marks this version's changes against `before`, an earlier version it was derived from through
   * others (a command list's steps, each derived from the one before), in one pass when first
   * read, instead of once per step through every version between; and lets those go, which the
   * marks' maker would otherwise hold until then.
   */
  marksAgainst(before: Snapshot): void {
    if (this.#marks) return;
    this.#makeMarks = (self) =>
      changesAnyShape({ ...before.viewInputs(), tasks: before.state.tasks }, self, self.version);
  }

  /** The earliest version the marks are exact after (the one this flow was loaded at). */
  get knownSince(): number {
    return this.settleMarks().knownSince;
  }

  /** Makes the marks now if they are not yet, and lets the version before go. */
  settleMarks(): ChangeMarks {
    if (!this.#marks) {
      this.#marks = (this.#makeMarks ?? ((self) => loadedChanges(self.size, self.version)))(this);
      this.#makeMarks = null;
    }
    return this.#marks;
  }

  /**
   * `previous`: an earlier version of the same flow. Its serialized tasks may be reused; and
   * when the change kept the graph's shape (no task, dependency or sub-task added or removed:
   * a start, complete, reopen, assignment or estimate), the engine's arrays are patched for
   * the changed tasks and the next version is derived incrementally (deriveNext) instead of
   * recomputed.
   */
  static async derive(
    next: FlowState,
    recompute: Recompute,
    publicUrlBase: string,
    previous: Snapshot | null = null,
    /** The only positions below previous's size whose records differ, when the caller knows them. */
    replaced?: readonly number[],
  ): Promise<Snapshot> {
    // A command's next state knows which records it replaced: no pass over a large flow to find them.
    replaced ??= previous ? replacedBy(previous, next) : undefined;
    // Read by position, the list built only if something reads it whole: a draft's (see
    // DraftState), and a command's next state layered over this version's. Any other held plain.
    const state: FlowState = isPositioned(next)
      ? next
      : ((previous && LayeredState.after(previous, next)) ?? {
          flow: next.flow,
          tasks: next.tasks,
        });
    const tasks = positionedTasks(state);
    const base = previous ? (previous.fragments ?? previous.base) : null;
    const shape = previous ? shapeChanges(previous, tasks, replaced) : null;
    if (previous && shape) {
      const { changed, added } = shape;
      const old = previous.size;
      const appended: TaskRecord[] = [];
      for (let i = old; i < tasks.size; i++) {
        const task = tasks.at(i);
        if (task) appended.push(task);
      }
      const index =
        added > 0
          ? AppendedIndex.of(
              previous.index,
              appended.map((task) => task.id),
              old,
            )
          : previous.index;
      // Only when each new task depends on earlier ones: then the old order still holds.
      if (
        appended.every((task, k) =>
          task.dependsOn.every((dep) => (index.get(dep) ?? Infinity) < old + k),
        )
      ) {
        const subtasksMoved =
          appended.some((task) => task.parentId !== null) ||
          changed.some((i) => (tasks.at(i)?.parentId ?? null) !== null);
        const children = subtasksMoved ? childrenOf(state.tasks) : previous.children;
        const { progress, duration, touched, newFrom, newTo } = patchedInput(
          previous.input,
          tasks,
          index,
          children,
          changed,
          old,
        );
        const output = recompute.incremental(() =>
          deriveNext(previous.engine(), touched, progress, duration, {
            added,
            from: newFrom,
            to: newTo,
          }),
        );
        const input = inputOver(output, progress, duration);
        const countsBase =
          added === 0
            ? previous.blockingCounts.carry(doneFlips(touched, previous.input.progress, progress))
            : null;
        return new Snapshot(
          state,
          index,
          children,
          input,
          output,
          recompute,
          publicUrlBase,
          base,
          countsBase,
          (self) => changesKeptShape(previous.viewInputs(), self, output.g, changed, self.version),
        );
      }
    }
    const { index, children } = placesOf(state, previous, replaced);
    const input = engineInput(state, index, children);
    const output = await recompute(input, state.flow.workspaceId);
    return new Snapshot(
      state,
      index,
      children,
      input,
      output,
      recompute,
      publicUrlBase,
      base,
      null,
      (self) =>
        previous
          ? changesAnyShape(
              { ...previous.viewInputs(), tasks: previous.state.tasks },
              self,
              self.version,
            )
          : loadedChanges(self.size, self.version),
    );
  }

  /**
   * What this version's task views were made from, and its change marks: for the next version's
   * marks. Its tasks by position; a pass over all of them (changesAnyShape) takes the list.
   */
  private viewInputs() {
    const { index, children, status, critical, changedAt, knownSince } = this;
    return { positions: this.tasks, index, children, status, critical, changedAt, knownSince };
  }

  /**
   * Per task: slack in working days (−1 when done). An incremental derivation keeps tails, not
   * slack: it is read off them when first asked for (a what-if's scenario never is).
   */
  get slack(): Int32Array {
    const output = this.output;
    return (this.slackDays ??= isDerived(output) ? slackOf(output) : output.slack);
  }

  /** The dependency graph as the engine holds it (successor and predecessor rows by task position). */
  graph(): Graph {
    return this.engine().g;
  }

  /** The tasks by position, in an order where each comes after everything it waits on. */
  topologicalOrder(): Uint32Array {
    return this.engine().order;
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

  get size(): number {
    return this.tasks.size;
  }

  at(position: number): TaskRecord | undefined {
    return this.tasks.at(position);
  }

  task(id: string): TaskRecord | undefined {
    const i = this.index.get(id);
    return i === undefined ? undefined : this.tasks.at(i);
  }

  next(changes: TaskChanges): FlowState {
    return new NextState(this, changes);
  }

  statusCode(id: string): number {
    return this.status[this.index.get(id)!]!;
  }

  statusOf(id: string): TaskStatus {
    return statusName(this.statusCode(id));
  }

  /** How many unfinished tasks transitively wait on each task; computed once per version. */
  blocking(): Promise<Uint32Array> {
    return this.blockingCounts.get(
      () =>
        this.recompute({ ...this.input, withCounts: true }, this.flow.workspaceId).then(
          (out) => out.counts!,
        ),
      () => this.engine().g,
    );
  }

  hours(task: TaskRecord, openOnly = true): number | null {
    return task.parentId
      ? task.estimateHours
      : objectiveHours(task, this.children.get(task.id) ?? [], openOnly);
  }

  /** The range `hours` may fall in (see objectiveRange). */
  hoursRange(task: TaskRecord, openOnly = true): EstimateRange | null {
    return task.parentId
      ? task.estimateRange
      : objectiveRange(task, this.children.get(task.id) ?? [], openOnly);
  }

  summary(): FlowSummaryView {
    return summaryView(this.state.flow, this.counts, this.publicUrlBase);
  }

  taskView(id: string): TaskView {
    return taskView(this, id);
  }

  /** The Flow as JSON bytes, once per version (see flowBody). */
  flowJson(): Buffer {
    if (!this.fragments) {
      this.fragments = flowBody(this, this.summary(), this.base);
      // These fragments are what a later version reuses now: the earlier version's can go.
      this.base = null;
    }
    return this.fragments.bytes;
  }
}

/**
 * The positions a command's next state replaced in `previous`, when it was made from it
 * (`previous.next(changes)`) and removed nothing; undefined when that is not known.
 */
function replacedBy(previous: Snapshot, next: FlowState): number[] | undefined {
  const changes = next instanceof NextState ? next.changesAfter(previous) : null;
  if (!changes || changes.remove?.size) return undefined;
  const positions: number[] = [];
  for (const task of changes.replace ?? []) {
    const at = previous.index.get(task.id);
    if (at === undefined) return undefined;
    positions.push(at);
  }
  return positions;
}

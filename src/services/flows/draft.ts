/**
 * A command list's state not derived yet (commands.service.ts): a FlowView over the last
 * derived version (its base) with tasks replaced or appended, none removed or moved, held as
 * those changes alone (a step costs what it changed, not the flow's size). Status is read off
 * the records, as the engine would derive it (a task is blocked while a dependency is not done;
 * a sub-task follows its objective); a command that needs the graph raises NotDerived and is
 * judged again on a derived version. Most commands (an estimate, an assignment, a start or a
 * completion, a task added after others) never do, so a list of them is derived once, at its
 * end, not once per command.
 */
import type { Graph } from '../../engine/graph.ts';
import {
  statusName,
  STATUS_BLOCKED,
  STATUS_DONE,
  STATUS_IN_PROGRESS,
  STATUS_READY,
} from '../../engine/status.ts';
import type { TaskStatus } from '../../contract/vocabulary.ts';
import {
  NextState,
  PROGRESS,
  tasksOnRead,
  type FlowRecord,
  type FlowState,
  type TaskChanges,
  type TaskRecord,
} from './model.ts';
import type { FlowView, Snapshot } from './snapshot.ts';
import { AppendedIndex } from './task-index.ts';

/** A command read a draft's graph: it must be judged on a derived version. */
export class NotDerived extends Error {}

export class Draft implements FlowView {
  /** The state to derive. */
  #state: DraftState | null = null;

  private constructor(
    /** The version derived last, whose graph and sub-tasks this draft keeps. */
    readonly base: Snapshot,
    readonly flow: FlowRecord,
    readonly index: ReadonlyMap<string, number>,
    /** The base's positions whose records changed, with their records now. */
    private readonly replaced: ReadonlyMap<number, TaskRecord>,
    /** The tasks after the base's, in order. */
    private readonly appended: readonly TaskRecord[],
  ) {}

  /**
   * `next`, the state a command made of `view` (a derived version or a draft over one), at
   * `version`, as a draft, with the positions of the tasks it replaced; null when it is not
   * `view.next(…)` as built, or removed, moved or re-parented a task, or changed or added a
   * sub-task (the base's sub-task lists would be stale).
   */
  static after(
    view: Snapshot | Draft,
    next: FlowState,
    version: number,
  ): { draft: Draft; changed: number[] } | null {
    const changes = next instanceof NextState ? next.changesAfter(view) : null;
    if (!changes || changes.remove?.size) return null;
    const add = changes.add ?? [];
    if (add.some((task) => task.parentId !== null)) return null;
    const base = view instanceof Draft ? view.base : view;
    const replaced = new Map(view instanceof Draft ? view.replaced : []);
    const appended = view instanceof Draft ? [...view.appended] : [];
    const changed: number[] = [];
    for (const task of changes.replace ?? []) {
      const i = view.index.get(task.id);
      if (i === undefined || task.parentId !== null) return null;
      if (i < base.size) replaced.set(i, task);
      else appended[i - base.size] = task;
      changed.push(i);
    }
    appended.push(...add);
    // Over the base's index, all appended ids at once: a chain one deep, however many steps.
    const index =
      add.length > 0
        ? AppendedIndex.of(
            base.index,
            appended.map((task) => task.id),
            base.size,
          )
        : view.index;
    return {
      draft: new Draft(base, { ...next.flow, version }, index, replaced, appended),
      changed,
    };
  }

  get state(): DraftState {
    return (this.#state ??= new DraftState(this));
  }

  /** The whole list: the base's with the replaced records, and the appended after it. */
  list(): TaskRecord[] {
    // Made at its length at once: pushed onto a copy, a large flow's list was copied twice.
    const tasks = this.base.state.tasks.concat(this.appended);
    for (const [i, task] of this.replaced) tasks[i] = task;
    return tasks;
  }

  /** The base's positions whose records this draft replaced, in order. */
  replacedPositions(): number[] {
    return [...this.replaced.keys()].sort((a, b) => a - b);
  }

  get size(): number {
    return this.base.size + this.appended.length;
  }

  at(position: number): TaskRecord | undefined {
    return position < this.base.size
      ? (this.replaced.get(position) ?? this.base.at(position))
      : this.appended[position - this.base.size];
  }

  next(changes: TaskChanges): FlowState {
    return new NextState(this, changes);
  }

  get children(): ReadonlyMap<string, readonly TaskRecord[]> {
    return this.base.children;
  }

  task(id: string): TaskRecord | undefined {
    const i = this.index.get(id);
    return i === undefined ? undefined : this.at(i);
  }

  statusCode(id: string): number {
    const task = this.task(id);
    if (!task) throw new RangeError(`${id} is not a task of this draft`);
    if (task.progress === PROGRESS.done) return STATUS_DONE;
    if (task.progress === PROGRESS.started) return STATUS_IN_PROGRESS;
    if (task.parentId !== null)
      return this.statusCode(task.parentId) === STATUS_BLOCKED ? STATUS_BLOCKED : STATUS_READY;
    return task.dependsOn.every((dep) => this.task(dep)?.progress === PROGRESS.done)
      ? STATUS_READY
      : STATUS_BLOCKED;
  }

  statusOf(id: string): TaskStatus {
    return statusName(this.statusCode(id));
  }

  graph(): Graph {
    throw new NotDerived();
  }

  /** Positions of the tasks that wait on `id` directly: the base's successors still waiting, and appended ones. */
  private dependents(id: string): number[] {
    const out: number[] = [];
    const at = this.base.index.get(id);
    if (at !== undefined) {
      const { succStart, succ } = this.base.graph();
      for (let k = succStart[at] ?? 0, end = succStart[at + 1] ?? 0; k < end; k++) {
        const v = succ[k] ?? 0;
        if (this.at(v)?.dependsOn.includes(id)) out.push(v);
      }
    }
    for (let v = this.base.size; v < this.size; v++)
      if (this.at(v)?.dependsOn.includes(id)) out.push(v);
    return out;
  }

  /**
   * Tasks of `before` that were blocked there and are ready here, in flow order, where
   * `changed` are the positions this draft replaced: what session.ts's unblockedIds finds
   * between two derived versions, found from the records that changed, not from every task.
   */
  unblockedSince(before: FlowView, changed: readonly number[]): string[] {
    const candidates = new Set<number>(changed);
    for (const i of changed) {
      const was = before.at(i);
      const is = this.at(i);
      // A task done now may free what waits on it.
      if (is && was && is.progress === PROGRESS.done && was.progress !== PROGRESS.done)
        for (const v of this.dependents(is.id)) candidates.add(v);
    }
    // A sub-task follows its objective.
    for (const v of [...candidates]) {
      const task = this.at(v);
      for (const sub of (task && this.children.get(task.id)) ?? []) {
        const at = this.index.get(sub.id);
        if (at !== undefined) candidates.add(at);
      }
    }
    const unblocked: string[] = [];
    for (const v of [...candidates].sort((a, b) => a - b)) {
      const task = this.at(v);
      if (!task || v >= before.size) continue;
      if (
        before.statusCode(task.id) === STATUS_BLOCKED &&
        this.statusCode(task.id) === STATUS_READY
      )
        unblocked.push(task.id);
    }
    return unblocked;
  }
}

/**
 * A draft's state, as a version derived from it holds it: its tasks are read by position
 * through the draft (`size`, `at`) and its list is built when first read, then the draft let
 * go. A what-if's scenario is read only at the tasks it answers with, and a large flow's list
 * is megabytes.
 */
export class DraftState implements FlowState {
  readonly flow: FlowRecord;
  declare readonly tasks: readonly TaskRecord[];
  #draft: Draft | null;
  #tasks: readonly TaskRecord[] | null = null;

  constructor(draft: Draft) {
    this.flow = draft.flow;
    this.#draft = draft;
    tasksOnRead(this, () => {
      const tasks = (this.#tasks ??= this.#draft?.list() ?? []);
      this.#draft = null;
      return tasks;
    });
  }

  get size(): number {
    return this.#tasks?.length ?? this.#draft?.size ?? 0;
  }

  at(position: number): TaskRecord | undefined {
    return this.#tasks ? this.#tasks[position] : this.#draft?.at(position);
  }
}

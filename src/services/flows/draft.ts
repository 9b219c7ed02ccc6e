/**
 * A command list's state not derived yet (commands.service.ts): a FlowView over the last
 * derived version (its base) with tasks replaced or appended, none removed or moved. Status is
 * read off the records, as the engine would derive it (a task is blocked while a dependency is
 * not done; a sub-task follows its objective); a command that needs the graph raises
 * NotDerived and is judged again on a derived version. Most commands (an estimate, an
 * assignment, a start or a completion, a task added after others) never do, so a list of them
 * is derived once, at its end, not once per command.
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
import { PROGRESS, type FlowState, type TaskRecord } from './model.ts';
import type { FlowView, Snapshot } from './snapshot.ts';
import { AppendedIndex } from './task-index.ts';

/** A command read a draft's graph: it must be judged on a derived version. */
export class NotDerived extends Error {}

export class Draft implements FlowView {
  private constructor(
    readonly state: FlowState,
    readonly index: ReadonlyMap<string, number>,
    /** The version derived last, whose graph and sub-tasks this draft keeps. */
    readonly base: Snapshot,
  ) {}

  /**
   * `state` as a draft over `view` (a derived version or a draft over one) and the positions of
   * the tasks it replaced; null when it removed, moved or re-parented a task, or changed or
   * added a sub-task (the base's sub-task lists would be stale).
   */
  static after(
    view: Snapshot | Draft,
    state: FlowState,
  ): { draft: Draft; changed: number[] } | null {
    const before = view.state.tasks;
    const after = state.tasks;
    if (after.length < before.length) return null;
    const changed: number[] = [];
    for (let i = 0; i < before.length; i++) {
      const was = before[i];
      const is = after[i];
      if (was === is) continue;
      if (!was || !is || was.id !== is.id || is.parentId !== null) return null;
      changed.push(i);
    }
    const appended = after.slice(before.length);
    if (appended.some((task) => task.parentId !== null)) return null;
    const index =
      appended.length > 0
        ? AppendedIndex.of(
            view.index,
            appended.map((task) => task.id),
            before.length,
          )
        : view.index;
    const base = view instanceof Draft ? view.base : view;
    return { draft: new Draft(state, index, base), changed };
  }

  get flow(): FlowState['flow'] {
    return this.state.flow;
  }

  get children(): ReadonlyMap<string, readonly TaskRecord[]> {
    return this.base.children;
  }

  task(id: string): TaskRecord | undefined {
    const i = this.index.get(id);
    return i === undefined ? undefined : this.state.tasks[i];
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
        if (this.state.tasks[v]?.dependsOn.includes(id)) out.push(v);
      }
    }
    for (let v = this.base.state.tasks.length; v < this.state.tasks.length; v++)
      if (this.state.tasks[v]?.dependsOn.includes(id)) out.push(v);
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
      const was = before.state.tasks[i];
      const is = this.state.tasks[i];
      // A task done now may free what waits on it.
      if (is && was && is.progress === PROGRESS.done && was.progress !== PROGRESS.done)
        for (const v of this.dependents(is.id)) candidates.add(v);
    }
    // A sub-task follows its objective.
    for (const v of [...candidates]) {
      const task = this.state.tasks[v];
      for (const sub of (task && this.children.get(task.id)) ?? []) {
        const at = this.index.get(sub.id);
        if (at !== undefined) candidates.add(at);
      }
    }
    const unblocked: string[] = [];
    for (const v of [...candidates].sort((a, b) => a - b)) {
      const task = this.state.tasks[v];
      if (!task || v >= before.state.tasks.length) continue;
      if (
        before.statusCode(task.id) === STATUS_BLOCKED &&
        this.statusCode(task.id) === STATUS_READY
      )
        unblocked.push(task.id);
    }
    return unblocked;
  }
}

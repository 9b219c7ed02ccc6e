/**
 * A what-if's state not derived yet (commands.service.ts): a FlowView whose status and graph
 * are asked for only when a command needs them.
 */
import type { Graph } from '../../engine/graph.ts';
import type { TaskStatus } from '../../contract/vocabulary.ts';
import type { FlowState, TaskRecord } from './model.ts';
import type { FlowView } from './snapshot.ts';
import { AppendedIndex } from './task-index.ts';

/** A command read a draft's derived parts: it must be judged on a derived version. */
export class NotDerived extends Error {}

/**
 * A what-if's state not derived yet: its stored facts, with the index and sub-tasks of the
 * version before carried over (tasks appended, none removed or moved). A command that reads
 * status or the graph raises NotDerived, and is judged again on the derived version; most
 * commands (an estimate, an assignment, a task added after others) never do, so a list of
 * them is derived once, at its end, not once per command.
 */
export class Draft implements FlowView {
  private constructor(
    readonly state: FlowState,
    readonly index: ReadonlyMap<string, number>,
    readonly children: ReadonlyMap<string, readonly TaskRecord[]>,
  ) {}

  /** `state` as a draft over `view`, or null when it removed, moved or re-parented a task, or changed a sub-task. */
  static after(view: FlowView, state: FlowState): Draft | null {
    const before = view.state.tasks;
    const after = state.tasks;
    if (after.length < before.length) return null;
    for (let i = 0; i < before.length; i++) {
      const was = before[i];
      const is = after[i];
      if (was === is) continue;
      if (!was || !is || was.id !== is.id || is.parentId !== null) return null;
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
    return new Draft(state, index, view.children);
  }

  get flow(): FlowState['flow'] {
    return this.state.flow;
  }

  task(id: string): TaskRecord | undefined {
    const i = this.index.get(id);
    return i === undefined ? undefined : this.state.tasks[i];
  }

  get status(): Uint8Array {
    throw new NotDerived();
  }

  statusOf(): TaskStatus {
    throw new NotDerived();
  }

  graph(): Graph {
    throw new NotDerived();
  }
}

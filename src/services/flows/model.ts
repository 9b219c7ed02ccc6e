/**
 * The stored facts of one flow, held immutably by its session: a command builds the next
 * state by structural sharing (a new tasks array, new records only for what changed), so
 * a failed transaction leaves the current state untouched and readers never see a half.
 */
import type { FlowRecord, FlowState, TaskRecord } from '../../storage/flows.store.ts';

export { PROGRESS, type Progress } from '../../engine/status.ts';
export type { Deliverable, FlowRecord, FlowState, TaskRecord } from '../../storage/flows.store.ts';

/** The flow record of the next version: every command that changes a flow goes through here. */
export function nextFlow(
  flow: FlowRecord,
  patch: Partial<
    Pick<FlowRecord, 'name' | 'description' | 'dueDate' | 'archived' | 'publicToken'>
  > = {},
): FlowRecord {
  return { ...flow, ...patch, version: flow.version + 1, updatedAt: new Date().toISOString() };
}

/**
 * The next state with some tasks replaced, some removed and some added (in that order).
 * With the state's `index` (task id → position), a change that removes nothing copies the
 * list and sets the replaced places: no lookup per task of a large flow.
 */
export function withTasks(
  state: FlowState,
  changes: {
    replace?: readonly TaskRecord[];
    remove?: ReadonlySet<string>;
    add?: readonly TaskRecord[];
  },
  index?: ReadonlyMap<string, number>,
): TaskRecord[] {
  if (index && !changes.remove?.size) {
    const next = state.tasks.slice();
    for (const task of changes.replace ?? []) next[index.get(task.id)!] = task;
    next.push(...(changes.add ?? []));
    return next;
  }
  const replaced = new Map((changes.replace ?? []).map((task) => [task.id, task]));
  const next: TaskRecord[] = [];
  for (const task of state.tasks) {
    if (changes.remove?.has(task.id)) continue;
    next.push(replaced.get(task.id) ?? task);
  }
  next.push(...(changes.add ?? []));
  return next;
}

/**
 * The position after every task's: tasks are held in position order (loaded by it, new ones
 * appended after the last), so the last one's is the largest, read without a pass over a
 * large flow.
 */
export function nextPosition(state: FlowState): number {
  return (state.tasks.at(-1)?.position ?? 0) + 1;
}

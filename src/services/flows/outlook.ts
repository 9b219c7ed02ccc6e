/**
 * A what-if's answer, read off two snapshots of one flow (CONTRACT §5): each one's outlook
 * (projected finish, on track, critical path) and the tasks whose outlook differs between
 * them. Dates are laid on the calendar only for what is answered.
 */
import type { Outlook, TaskOutlook } from '../../contract/plan.schema.ts';
import { addWorkingDays } from '../../engine/calendar.ts';
import { STATUS_DONE, statusName } from '../../engine/status.ts';
import type { Snapshot } from './snapshot.ts';
import { AppendedIndex } from './task-index.ts';

/** A task whose outlook the scenario changes: made (no `before`), removed (no `after`) or moved. */
export interface ChangedTask {
  taskId: string;
  ref?: string;
  before?: TaskOutlook;
  after?: TaskOutlook;
}

/** The last outlook of each snapshot asked for: every what-if on a version answers its `current`. */
const outlooks = new WeakMap<Snapshot, { start: string; outlook: Outlook }>();

export function outlook(snapshot: Snapshot, start: string): Outlook {
  const known = outlooks.get(snapshot);
  if (known?.start === start) return known.outlook;
  const made = outlookOf(snapshot, start);
  outlooks.set(snapshot, { start, outlook: made });
  return made;
}

function outlookOf(snapshot: Snapshot, start: string): Outlook {
  const projectedFinish = snapshot.finish >= 0 ? addWorkingDays(start, snapshot.finish) : null;
  const dueDate = snapshot.flow.dueDate ? snapshot.flow.dueDate.slice(0, 10) : null;
  // Off the engine's arrays: only the critical tasks' records are read. Positions, not an
  // object per task: a large flow's path is thousands of tasks long.
  const { critical: flags, es } = snapshot;
  const critical: number[] = [];
  for (let i = 0; i < flags.length; i++)
    if (flags[i] === 1 && snapshot.at(i)?.parentId === null) critical.push(i);
  critical.sort((a, b) => (es[a] ?? 0) - (es[b] ?? 0) || a - b);
  return {
    projectedFinish,
    // As the schedule says it: nothing left open lands on any due date.
    onTrack: dueDate === null ? null : projectedFinish === null || projectedFinish <= dueDate,
    criticalPath: critical.flatMap((i) => snapshot.at(i)?.id ?? []),
  };
}

/**
 * The calendar day of each working-day offset from `start`, each worked out once: a change
 * upstream moves thousands of tasks onto a few hundred distinct days.
 */
function calendarFrom(start: string): (offset: number) => string {
  const days = new Map<number, string>();
  return (offset) => {
    let day = days.get(offset);
    if (day === undefined) days.set(offset, (day = addWorkingDays(start, offset)));
    return day;
  };
}

/** The outlook of position `i`; sub-tasks and done tasks have no dates of their own. */
function taskOutlook(snapshot: Snapshot, i: number, day: (offset: number) => string): TaskOutlook {
  const status = snapshot.status[i] ?? STATUS_DONE;
  const dated = snapshot.at(i)?.parentId === null && status !== STATUS_DONE;
  return {
    status: statusName(status),
    earliestStart: dated ? day(snapshot.es[i] ?? -1) : null,
    earliestFinish: dated ? day(snapshot.ef[i] ?? -1) : null,
    critical: snapshot.critical[i] === 1,
  };
}

/**
 * Whether two positions' outlooks differ, read off the engine's arrays alone (no record read,
 * no date built): sub-tasks and done tasks hold −1 dates there, so their dates compare equal.
 */
function differs(a: Snapshot, i: number, b: Snapshot, j: number): boolean {
  return (
    a.status[i] !== b.status[j] ||
    a.critical[i] !== b.critical[j] ||
    a.es[i] !== b.es[j] ||
    a.ef[i] !== b.ef[j]
  );
}

/** The tasks whose outlook the scenario changes, made or removed, in the scenario's flow order then removals. */
export function changedTasks(
  current: Snapshot,
  scenario: Snapshot,
  start: string,
  refs: ReadonlyMap<string, string>,
): ChangedTask[] {
  const day = calendarFrom(start);
  const changed: ChangedTask[] = [];
  if (AppendedIndex.extends(scenario.index, current.index)) {
    // Tasks only appended (a what-if's drafts, or derivations that kept each task's place): the
    // current tasks hold their positions, and only the engine's arrays are compared.
    for (let i = 0; i < current.size; i++) {
      if (!differs(current, i, scenario, i)) continue;
      const task = scenario.at(i);
      if (task)
        changed.push({
          taskId: task.id,
          before: taskOutlook(current, i, day),
          after: taskOutlook(scenario, i, day),
        });
    }
    for (let j = current.size; j < scenario.size; j++) {
      const task = scenario.at(j);
      if (task)
        changed.push({
          taskId: task.id,
          ref: refs.get(task.id),
          after: taskOutlook(scenario, j, day),
        });
    }
    return changed;
  }
  const before = current.state.tasks;
  const after = scenario.state.tasks;
  let kept = 0;
  for (let j = 0; j < after.length; j++) {
    const task = after[j];
    if (task === undefined) continue;
    // Most tasks are the same record in the same place: no lookup, and no read of the record.
    const i = before[j] === task || before[j]?.id === task.id ? j : current.index.get(task.id);
    if (i === undefined) {
      changed.push({
        taskId: task.id,
        ref: refs.get(task.id),
        after: taskOutlook(scenario, j, day),
      });
      continue;
    }
    kept++;
    if (differs(current, i, scenario, j))
      changed.push({
        taskId: task.id,
        before: taskOutlook(current, i, day),
        after: taskOutlook(scenario, j, day),
      });
  }
  // Every task of the current flow is still there: nothing removed to look for.
  if (kept === before.length) return changed;
  for (let i = 0; i < before.length; i++) {
    const id = before[i]?.id;
    if (id !== undefined && after[i]?.id !== id && !scenario.index.has(id))
      changed.push({ taskId: id, before: taskOutlook(current, i, day) });
  }
  return changed;
}

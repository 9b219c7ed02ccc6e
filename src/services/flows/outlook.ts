/**
 * A what-if's answer, read off two snapshots of one flow (CONTRACT §5): each one's outlook
 * (projected finish, on track, critical path) and the tasks whose outlook differs between
 * them. Dates are laid on the calendar only for what is answered.
 */
import type { Outlook, TaskOutlook } from '../../contract/plan.schema.ts';
import { addWorkingDays } from '../../engine/calendar.ts';
import { STATUS_DONE, statusName } from '../../engine/status.ts';
import type { Snapshot } from './snapshot.ts';

/** A task whose outlook the scenario changes: made (no `before`), removed (no `after`) or moved. */
export interface ChangedTask {
  taskId: string;
  ref?: string;
  before?: TaskOutlook;
  after?: TaskOutlook;
}

export function outlook(snapshot: Snapshot, start: string): Outlook {
  const projectedFinish = snapshot.finish >= 0 ? addWorkingDays(start, snapshot.finish) : null;
  const dueDate = snapshot.flow.dueDate ? snapshot.flow.dueDate.slice(0, 10) : null;
  const critical: { id: string; es: number; i: number }[] = [];
  snapshot.state.tasks.forEach((task, i) => {
    const at = engineAt(snapshot, i);
    if (at.critical && task.parentId === null) critical.push({ id: task.id, es: at.es, i });
  });
  critical.sort((a, b) => a.es - b.es || a.i - b.i);
  return {
    projectedFinish,
    // As the schedule says it: nothing left open lands on any due date.
    onTrack: dueDate === null ? null : projectedFinish === null || projectedFinish <= dueDate,
    criticalPath: critical.map((c) => c.id),
  };
}

/**
 * What the engine derived for position `i` (a position of the snapshot's tasks, so every array
 * holds it); `dated`: an open objective, which has dates of its own (sub-tasks and done tasks do not).
 */
function engineAt(snapshot: Snapshot, i: number) {
  const status = snapshot.status[i] ?? STATUS_DONE;
  return {
    status,
    es: snapshot.es[i] ?? -1,
    ef: snapshot.ef[i] ?? -1,
    critical: snapshot.critical[i] === 1,
    dated: snapshot.state.tasks[i]?.parentId === null && status !== STATUS_DONE,
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

function taskOutlook(snapshot: Snapshot, i: number, day: (offset: number) => string): TaskOutlook {
  const at = engineAt(snapshot, i);
  return {
    status: statusName(at.status),
    earliestStart: at.dated ? day(at.es) : null,
    earliestFinish: at.dated ? day(at.ef) : null,
    critical: at.critical,
  };
}

/** Whether two positions' outlooks differ, read off the engine's arrays (no dates built). */
function differs(a: Snapshot, i: number, b: Snapshot, j: number): boolean {
  const before = engineAt(a, i);
  const after = engineAt(b, j);
  if (before.status !== after.status || before.critical !== after.critical) return true;
  return before.dated && (before.es !== after.es || before.ef !== after.ef);
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
  const after = scenario.state.tasks;
  for (const [j, { id }] of after.entries()) {
    // Mostly in the same place (only removals shift tasks): no lookup then.
    const i = current.state.tasks[j]?.id === id ? j : current.index.get(id);
    if (i === undefined) {
      changed.push({ taskId: id, ref: refs.get(id), after: taskOutlook(scenario, j, day) });
    } else if (differs(current, i, scenario, j)) {
      changed.push({
        taskId: id,
        before: taskOutlook(current, i, day),
        after: taskOutlook(scenario, j, day),
      });
    }
  }
  for (const [i, { id }] of current.state.tasks.entries()) {
    if (after[i]?.id !== id && !scenario.index.has(id))
      changed.push({ taskId: id, before: taskOutlook(current, i, day) });
  }
  return changed;
}

/**
 * The resource-levelled schedule of a flow (CONTRACT §5): the version's unlevelled CPM offsets
 * decide the order, engine/level.ts places each objective on its assignee's free days, and the
 * result is laid on the calendar like the unlevelled schedule (schedule.ts).
 */
import { durationDays, workingDayNames } from '../../engine/calendar.ts';
import { level, type Levelled } from '../../engine/level.ts';
import { PROGRESS, STATUS_DONE } from '../../engine/status.ts';
import { refuseLateFinish, type ScheduleView } from './schedule.ts';
import type { Snapshot } from './snapshot.ts';

/** The levelled schedule always says what it left unscheduled. */
export type LevelledScheduleView = ScheduleView & { unscheduled: string[] };

/** The assignees of the open objectives, whose hours a levelled schedule of this version reads. */
export function levelledAssignees(snapshot: Snapshot): string[] {
  const ids = new Set<string>();
  for (const task of snapshot.state.tasks)
    if (task.parentId === null && task.assigneeId !== null && task.progress !== PROGRESS.done)
      ids.add(task.assigneeId);
  return [...ids];
}

/**
 * The levelled schedule from `start`, each assignee working `hours.get(id)` hours a day.
 * `chosen`: the caller chose the start, so a finish past LAST_DAY is refused, not clamped.
 */
export function buildLevelledSchedule(
  snapshot: Snapshot,
  start: string,
  hours: ReadonlyMap<string, number>,
  chosen: boolean,
): LevelledScheduleView {
  const tasks = snapshot.state.tasks;
  const taskHours = tasks.map((task) => (task.parentId === null ? snapshot.hours(task) : null));
  const levelled = levelSnapshot(snapshot, taskHours, hours);
  if (chosen) refuseLateFinish(start, levelled.last, 'query');
  const day = workingDayNames(start);
  const entries: LevelledScheduleView['entries'] = [];
  const unscheduled: string[] = [];
  for (let i = 0; i < tasks.length; i++) {
    const task = tasks[i];
    if (task === undefined || task.parentId !== null) continue;
    const estimated = taskHours[i] !== null;
    if (snapshot.status[i] === STATUS_DONE)
      entries.push({ taskId: task.id, taskName: task.name, criticalPath: false, estimated });
    else if (levelled.unscheduled[i] === 1) {
      unscheduled.push(task.id);
      entries.push({
        taskId: task.id,
        taskName: task.name,
        earliestStart: null,
        earliestFinish: null,
        criticalPath: false,
        estimated,
        delayDays: null,
      });
    } else {
      const from = levelled.start[i] ?? 0;
      entries.push({
        taskId: task.id,
        taskName: task.name,
        earliestStart: day(from),
        earliestFinish: day(levelled.finish[i] ?? 0),
        criticalPath: levelled.critical[i] === 1,
        estimated,
        delayDays: from - (snapshot.es[i] ?? 0),
      });
    }
  }
  // Work nobody can do means the flow cannot land: no finish, and not on track.
  const projectedFinish = unscheduled.length > 0 || levelled.last < 0 ? null : day(levelled.last);
  const dueDate = snapshot.flow.dueDate ? snapshot.flow.dueDate.slice(0, 10) : null;
  const onTrack =
    dueDate === null
      ? null
      : unscheduled.length === 0 && (projectedFinish === null || projectedFinish <= dueDate);
  return {
    flowId: snapshot.flow.id,
    startDate: start,
    dueDate,
    projectedFinish,
    onTrack,
    entries,
    unscheduled,
  };
}

/**
 * The engine's input from a version: each open objective's person (by first appearance) and
 * its days at that person's hours (0 hours: 0 days, not schedulable); unassigned objectives
 * keep their plain days (8 hours a day). Sub-tasks are finished nodes there already, holding no one.
 */
function levelSnapshot(
  snapshot: Snapshot,
  taskHours: readonly (number | null)[],
  hours: ReadonlyMap<string, number>,
): Levelled {
  const tasks = snapshot.state.tasks;
  const n = tasks.length;
  const person = new Int32Array(n).fill(-1);
  const duration = new Uint32Array(n);
  const people = new Map<string, number>();
  for (let i = 0; i < n; i++) {
    const task = tasks[i];
    if (task === undefined || task.parentId !== null || task.progress === PROGRESS.done) continue;
    const plainDays = snapshot.input.duration[i] ?? 1;
    if (task.assigneeId === null) {
      duration[i] = plainDays;
      continue;
    }
    let who = people.get(task.assigneeId);
    if (who === undefined) people.set(task.assigneeId, (who = people.size));
    person[i] = who;
    // An assignee with no membership here (hours unknown) works the default 8-hour day.
    const perDay = hours.get(task.assigneeId);
    duration[i] =
      perDay === undefined
        ? plainDays
        : perDay === 0
          ? 0
          : durationDays(taskHours[i] ?? null, perDay);
  }
  return level({
    g: snapshot.graph(),
    progress: snapshot.input.progress,
    es: snapshot.es,
    slack: snapshot.slack,
    duration,
    person,
    people: people.size,
  });
}

/**
 * The working-day schedule of a flow (CONTRACT §4): CPM offsets from the snapshot laid on
 * the calendar from `startDate`. Only the dates depend on the request; the offsets are
 * computed once per version.
 */
import type { Static } from '@sinclair/typebox';
import type { ScheduleSchema } from '../../contract/schedule.schema.ts';
import { LAST_DAY } from '../../contract/vocabulary.ts';
import { fitsCalendar, isoDate, startOfSchedule, workingDayNames } from '../../engine/calendar.ts';
import { STATUS_DONE } from '../../engine/status.ts';
import { validationFailed } from '../../platform/errors.ts';
import { parseInstant } from './dates.ts';
import type { Snapshot } from './snapshot.ts';

export type ScheduleView = Static<typeof ScheduleSchema>;

/**
 * `startDate` as given (date or date-time, its UTC day; outside the date range a 400 at the
 * query's `/startDate`), else today (UTC); a weekend moves to Monday.
 */
export function scheduleStart(startDate: string | undefined, now = new Date()): string {
  return startOfSchedule(
    isoDate(startDate === undefined ? now : parseInstant(startDate, 'query', '/startDate')),
  );
}

/**
 * The schedule a caller asked for from `startDate`: refused when its finish would pass
 * LAST_DAY, where the caller chose the start. Without one (today) such days read LAST_DAY.
 */
export function requestedSchedule(snapshot: Snapshot, startDate: string | undefined): ScheduleView {
  const start = scheduleStart(startDate);
  if (startDate !== undefined) refuseLateFinish(start, snapshot.finish, 'query');
  return buildSchedule(snapshot, start);
}

/**
 * Refuses a `startDate` the caller chose from which `finish` working days (an offset; −1 when
 * nothing is open) would end after LAST_DAY, at the request's `/startDate`.
 */
export function refuseLateFinish(start: string, finish: number, where: 'query' | 'body'): void {
  if (finish >= 0 && !fitsCalendar(start, finish))
    throw validationFailed([
      {
        in: where,
        pointer: '/startDate',
        message: `from ${start} the flow's ${finish + 1} working days would end after ${LAST_DAY}, the last day a date can name: choose an earlier startDate`,
      },
    ]);
}

export function buildSchedule(snapshot: Snapshot, start: string): ScheduleView {
  const day = workingDayNames(start);
  const entries: ScheduleView['entries'] = [];
  const tasks = snapshot.state.tasks;
  for (let i = 0; i < tasks.length; i++) {
    const task = tasks[i]!;
    if (task.parentId !== null) continue;
    const estimated = snapshot.hours(task) !== null;
    if (snapshot.status[i] === STATUS_DONE) {
      entries.push({ taskId: task.id, taskName: task.name, criticalPath: false, estimated });
      continue;
    }
    entries.push({
      taskId: task.id,
      taskName: task.name,
      earliestStart: day(snapshot.es[i]!),
      earliestFinish: day(snapshot.ef[i]!),
      criticalPath: snapshot.critical[i] === 1,
      estimated,
    });
  }
  const projectedFinish = snapshot.finish >= 0 ? day(snapshot.finish) : null;
  const dueDate = snapshot.flow.dueDate ? snapshot.flow.dueDate.slice(0, 10) : null;
  return {
    flowId: snapshot.flow.id,
    startDate: start,
    dueDate,
    projectedFinish,
    // Nothing left open lands on any due date.
    onTrack: dueDate === null ? null : projectedFinish === null || projectedFinish <= dueDate,
    entries,
  };
}

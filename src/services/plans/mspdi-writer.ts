/**
 * A flow as an MSPDI document MS Project opens (2007 and later; the elements are those of its
 * mspdi_pj12 schema, in the schema's order): its tasks, links with their lags, constraints,
 * milestones, progress, assignees as resources, the calendar, and the dates the flow computed as
 * MS Project's early and late dates and slack.
 *
 * A task's Duration is the working days the flow schedules it for times the hours in a day (12
 * hours on days of 8 are 2 days: PT16H0M0S); the estimate itself is kept in an extended
 * attribute the reader takes back while Duration is unchanged, and a started task's hours left,
 * as re-estimated, are its RemainingDuration. Tasks are of fixed duration, so
 * assigning a resource moves no date, and the project honours links over constraints (a missed
 * finish-no-later-than shows as negative slack, as in the flow, rather than moving the task).
 */
import { durationDays } from '../../engine/calendar.ts';
import { workingPeriods, writeCalendar } from './mspdi-calendar.ts';
import {
  CONSTRAINT_CODES,
  ESTIMATE_ALIAS,
  ESTIMATE_FIELD_ID,
  ESTIMATE_FIELD_NAME,
  FORMAT_DAYS,
  LINK_TYPE_CODES,
  MSPDI_NAMESPACE,
} from './mspdi-format.ts';
import { clock, dateTimeText, durationText, momentText } from './mspdi-values.ts';
import type { ExportPlan, ExportTask } from './plan.ts';
import { XmlOut } from './xml-out.ts';

/** What every task is written with: the working day's times and length. */
interface Day {
  readonly minutes: number;
  readonly start: number;
  readonly end: number;
  readonly hoursPerDay: number;
}

export function writeMspdi(plan: ExportPlan): string {
  const periods = workingPeriods(plan.calendar.hoursPerDay);
  const day: Day = {
    minutes: Math.round(plan.calendar.hoursPerDay * 60),
    start: periods[0]?.[0] ?? 0,
    end: periods[periods.length - 1]?.[1] ?? 0,
    hoursPerDay: plan.calendar.hoursPerDay,
  };
  const uids = new Map(plan.tasks.map((task, i) => [task.id, i + 1]));
  const finish = plan.tasks.reduce(
    (last, t) =>
      t.schedule && t.schedule.earliestFinish > last ? t.schedule.earliestFinish : last,
    plan.startDate,
  );
  const out = new XmlOut().open('Project', MSPDI_NAMESPACE);
  out.leaf('SaveVersion', 12).leaf('Name', plan.name).leaf('Title', plan.name);
  out.leaf('ScheduleFromStart', true).leaf('StartDate', momentText(plan.startDate, day.start));
  out.leaf('FinishDate', momentText(finish, day.end)).leaf('CriticalSlackLimit', 0);
  // The schema asks for a currency; a flow has no costs.
  out.leaf('CurrencyCode', 'USD').leaf('CalendarUID', 1);
  out.leaf('DefaultStartTime', clock(day.start)).leaf('DefaultFinishTime', clock(day.end));
  out.leaf('MinutesPerDay', day.minutes);
  out.leaf('MinutesPerWeek', day.minutes * plan.calendar.workingDays.length);
  out.leaf('DaysPerMonth', 20).leaf('DefaultTaskType', 1).leaf('DurationFormat', FORMAT_DAYS);
  out.leaf('HonorConstraints', false);
  out.open('ExtendedAttributes').open('ExtendedAttribute').leaf('FieldID', ESTIMATE_FIELD_ID);
  out.leaf('FieldName', ESTIMATE_FIELD_NAME).leaf('Alias', ESTIMATE_ALIAS);
  out.close('ExtendedAttribute').close('ExtendedAttributes');
  writeCalendar(out, plan.calendar);
  out.open('Tasks');
  plan.tasks.forEach((task, i) => writeTask(out, task, i + 1, uids, day, plan.startDate));
  out.close('Tasks');
  writeAssignees(out, plan.tasks);
  return out.close('Project').text();
}

function writeTask(
  out: XmlOut,
  task: ExportTask,
  uid: number,
  uids: Map<string, number>,
  day: Day,
  startDate: string,
): void {
  const days = task.milestone ? 0 : durationDays(task.estimateHours, day.hoursPerDay);
  const duration = days * day.minutes;
  const remaining =
    task.progress === 'done'
      ? 0
      : task.progress === 'started' && task.remainingHours !== null
        ? task.remainingHours * 60
        : duration;
  const s = task.schedule;
  // A milestone is a moment: where its day ends (after what it waits on), or, with nothing to
  // wait on, where the schedule's first day starts.
  const first = task.links.length === 0 && task.constraint === null;
  const milestoneAt = (date: string) =>
    momentText(date, first && date === startDate ? day.start : day.end);
  const early = s && {
    start: task.milestone ? milestoneAt(s.earliestStart) : momentText(s.earliestStart, day.start),
    finish: task.milestone ? milestoneAt(s.earliestFinish) : momentText(s.earliestFinish, day.end),
  };
  const startedAt = task.startedAt === null ? null : dateTimeText(task.startedAt);
  const completedAt = task.completedAt === null ? null : dateTimeText(task.completedAt);

  out.open('Task').leaf('UID', uid).leaf('ID', uid).leaf('Name', task.name).leaf('Type', 1);
  out.leaf('IsNull', false).leaf('OutlineNumber', String(uid)).leaf('OutlineLevel', 1);
  out.leaf('Start', task.progress === 'open' ? early?.start : (startedAt ?? early?.start));
  out.leaf('Finish', task.progress === 'done' ? completedAt : early?.finish);
  out.leaf('Duration', durationText(duration)).leaf('DurationFormat', FORMAT_DAYS);
  out.leaf('Estimated', task.estimateHours === null && !task.milestone);
  out.leaf('Milestone', task.milestone).leaf('Summary', false);
  if (s) {
    out.leaf('Critical', s.totalFloatDays <= 0);
    out.leaf('EarlyStart', early?.start).leaf('EarlyFinish', early?.finish);
    out.leaf(
      'LateStart',
      task.milestone ? momentText(s.latestStart, day.end) : momentText(s.latestStart, day.start),
    );
    out.leaf('LateFinish', momentText(s.latestFinish, day.end));
    // Slack in tenths of a minute of working time.
    out.leaf('FreeSlack', s.freeFloatDays * day.minutes * 10);
    out.leaf('TotalSlack', s.totalFloatDays * day.minutes * 10);
  }
  out.leaf('PercentComplete', percentComplete(task, duration, remaining));
  out.leaf('ActualStart', task.progress === 'open' ? null : startedAt);
  out.leaf('ActualFinish', task.progress === 'done' ? completedAt : null);
  out.leaf('ActualDuration', durationText(Math.max(0, duration - remaining)));
  out.leaf('RemainingDuration', durationText(remaining));
  const constraint = task.constraint;
  out.leaf('ConstraintType', constraint === null ? 0 : CONSTRAINT_CODES[constraint.type]);
  out.leaf('CalendarUID', -1);
  if (constraint !== null)
    out.leaf(
      'ConstraintDate',
      momentText(constraint.date, constraint.type === 'startNoEarlierThan' ? day.start : day.end),
    );
  for (const link of task.links) {
    out.open('PredecessorLink').leaf('PredecessorUID', uids.get(link.taskId) ?? 0);
    out.leaf('Type', LINK_TYPE_CODES.indexOf(link.type)).leaf('CrossProject', false);
    out.leaf('LinkLag', link.lagDays * day.minutes * 10).leaf('LagFormat', FORMAT_DAYS);
    out.close('PredecessorLink');
  }
  if (task.estimateHours !== null && !task.milestone) {
    out.open('ExtendedAttribute').leaf('FieldID', ESTIMATE_FIELD_ID);
    out.leaf('Value', task.estimateHours).close('ExtendedAttribute');
  }
  out.close('Task');
}

/**
 * Done: 100. Started: 0 while nobody re-estimated the hours left (all of it remains), else the
 * share done, within 1–99 so that it reads back as started with those hours left.
 */
function percentComplete(task: ExportTask, duration: number, remaining: number): number {
  if (task.progress === 'done') return 100;
  if (task.progress === 'open' || task.remainingHours === null) return 0;
  const share = duration > remaining ? (duration - remaining) / duration : 0;
  return Math.min(99, Math.max(1, Math.round(100 * share)));
}

/** Each assignee once as a work resource (by email), and an assignment per task they do. */
function writeAssignees(out: XmlOut, tasks: readonly ExportTask[]): void {
  const resources = new Map<string, { uid: number; name: string; email: string }>();
  for (const { assignee } of tasks)
    if (assignee !== null && !resources.has(assignee.email))
      resources.set(assignee.email, { uid: resources.size + 1, ...assignee });
  if (resources.size === 0) return;
  out.open('Resources');
  for (const { uid, name, email } of resources.values()) {
    out.open('Resource').leaf('UID', uid).leaf('ID', uid).leaf('Name', name).leaf('Type', 1);
    out.leaf('EmailAddress', email).close('Resource');
  }
  out.close('Resources').open('Assignments');
  let uid = 0;
  tasks.forEach((task, i) => {
    const resource = task.assignee && resources.get(task.assignee.email);
    if (!resource) return;
    out
      .open('Assignment')
      .leaf('UID', ++uid)
      .leaf('TaskUID', i + 1);
    out.leaf('ResourceUID', resource.uid).leaf('Units', 1).close('Assignment');
  });
  out.close('Assignments');
}

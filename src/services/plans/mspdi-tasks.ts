/**
 * An MSPDI file's tasks: classified by their outline (a task beneath the nearest one before it of
 * a lower OutlineLevel; a task with tasks beneath it, or marked Summary, is a summary) and read
 * into a flow's fields: Duration as hours (an elapsed one converted), Milestone, ConstraintType 4
 * and 7 (a Deadline where there is no constraint), PercentComplete with RemainingDuration,
 * ActualStart and ActualFinish. Each change is a warning naming the task's UID.
 */
import { durationDays } from '../../engine/calendar.ts';
import { count } from '../../platform/plural.ts';
import { dateOf, dayNumber, isFlowDate } from './days.ts';
import type { Findings } from './findings.ts';
import {
  CONSTRAINT_CODES,
  ELAPSED_FORMATS,
  OTHER_CONSTRAINTS,
  type ProjectSettings,
  type TaskEntry,
} from './mspdi-format.ts';
import {
  parseBoolean,
  parseDateTime,
  parseDecimal,
  parseDuration,
  parseInteger,
  type Moment,
} from './mspdi-values.ts';
import { MAX_ESTIMATE_HOURS, type PlanConstraint, type PlanTaskFields } from './plan.ts';
import { lineOf, recordsOf, type XmlRecord } from './xml.ts';

export const isTrue = (text: string | undefined): boolean =>
  text !== undefined && parseBoolean(text) === true;

/** The file's tasks in order, but UID 0 (the project's own summary) and null rows. */
export function outline(records: readonly XmlRecord[], findings: Findings): TaskEntry[] {
  const entries: TaskEntry[] = [];
  const open: TaskEntry[] = [];
  const uids = new Set<number>();
  for (const record of records) {
    const uid = parseInteger(record.fields.UID ?? '');
    if (uid === null || uids.has(uid)) {
      findings.fail(
        lineOf(record, 'UID'),
        uid === null
          ? `a Task has no UID (or not a number: "${record.fields.UID ?? ''}")`
          : `a second Task has UID ${uid}`,
      );
      continue;
    }
    uids.add(uid);
    if (uid === 0 || isTrue(record.fields.IsNull)) continue;
    const level =
      parseInteger(record.fields.OutlineLevel ?? '') ??
      (record.fields.OutlineNumber?.split('.').length || 1);
    while ((open[open.length - 1]?.level ?? -Infinity) >= level) open.pop();
    const parent = open[open.length - 1] ?? null;
    if (parent?.kind === 'leaf') parent.kind = 'summary';
    const entry: TaskEntry = {
      record,
      uid,
      level,
      kind: isTrue(record.fields.Summary)
        ? 'summary'
        : skipped(record, uid, findings)
          ? 'skipped'
          : 'leaf',
      index: -1,
      minutes: null,
      parent,
    };
    entries.push(entry);
    open.push(entry);
  }
  return entries;
}

/** Warns of and says whether a task is left out whole (external, an inserted project, inactive). */
function skipped(record: XmlRecord, uid: number, findings: Findings): boolean {
  const name = record.fields.Name ?? '';
  if (isTrue(record.fields.ExternalTask) || isTrue(record.fields.IsSubproject)) {
    findings.warn(
      'EXTERNAL_TASK',
      `Task ${uid} ("${name}") belongs to another project: it is not imported, nor its links`,
      uid,
    );
    return true;
  }
  if (record.fields.Active !== undefined && !isTrue(record.fields.Active)) {
    findings.warn(
      'INACTIVE_TASK',
      `Task ${uid} ("${name}") is inactive: it is not imported, nor its links`,
      uid,
    );
    return true;
  }
  return false;
}

/** The warning a summary earns: it is not imported, the `beneath` tasks under it are. */
export function summaryWarning(summary: TaskEntry, beneath: number, findings: Findings): void {
  const name = summary.record.fields.Name ?? '';
  if (isTrue(summary.record.fields.Recurring))
    findings.warn(
      'RECURRING_TASK',
      `The recurring task ${summary.uid} ("${name}") is not imported: its occurrences are, as ordinary tasks (${count(beneath, 'task')})`,
      summary.uid,
    );
  else
    findings.warn(
      'SUMMARY_TASK',
      `The summary task ${summary.uid} ("${name}") is not imported: the ${count(beneath, 'task')} beneath it are, and its links apply to each of them`,
      summary.uid,
    );
}

/**
 * A task's Duration as working minutes (null where it has none); an elapsed one is converted by
 * the calendar's share of working time, warned of when `warn` (the task is imported).
 */
export function durationMinutes(
  entry: TaskEntry,
  settings: ProjectSettings,
  findings: Findings,
  warn: boolean,
): number | null {
  const { Duration: text, DurationFormat: format } = entry.record.fields;
  if (text === undefined) return null;
  const minutes = parseDuration(text, settings.minutesPerDay);
  if (minutes === null) {
    findings.fail(
      lineOf(entry.record, 'Duration'),
      `task ${entry.uid}'s Duration "${text}" is not a duration`,
    );
    return null;
  }
  if (!ELAPSED_FORMATS.has(parseInteger(format ?? '') ?? 0)) return minutes;
  const working = (minutes * settings.workingDaysPerWeek * settings.minutesPerDay) / (7 * 1440);
  if (warn)
    findings.warn(
      'ELAPSED_DURATION',
      `Task ${entry.uid} lasts ${hours(minutes)} hours of elapsed time: read as ${hours(working)} working hours`,
      entry.uid,
    );
  return working;
}

/** Minutes as hours to two decimals, as an estimate holds them. */
const hours = (minutes: number) => Math.round((minutes / 60) * 100) / 100;

/** A leaf's fields (its `minutes` already read); `estimateField`: a flowplan export's FieldID. */
export function readTask(
  entry: TaskEntry,
  settings: ProjectSettings,
  estimateField: string | undefined,
  findings: Findings,
): PlanTaskFields {
  const { record, uid, minutes } = entry;
  let milestone = isTrue(record.fields.Milestone);
  if (milestone && (minutes ?? 0) > 0)
    findings.warn(
      'MILESTONE_DURATION_DROPPED',
      `Task ${uid} is a milestone of ${hours(minutes ?? 0)} hours: imported as a milestone, without them`,
      uid,
    );
  else if (!milestone && minutes === 0) {
    milestone = true;
    findings.warn(
      'MILESTONE_FROM_ZERO_DURATION',
      `Task ${uid} takes no time: imported as a milestone`,
      uid,
    );
  }
  let estimateHours = milestone || minutes === null ? null : hours(minutes);
  if (estimateHours !== null && estimateHours > MAX_ESTIMATE_HOURS) {
    findings.warn(
      'ESTIMATE_LIMITED',
      `Task ${uid} lasts ${estimateHours} hours, more than a task's ${MAX_ESTIMATE_HOURS}: read as ${MAX_ESTIMATE_HOURS}`,
      uid,
    );
    estimateHours = MAX_ESTIMATE_HOURS;
  }
  const kept = milestone ? undefined : keptEstimate(entry, estimateField, settings, findings);
  if (isTrue(record.fields.Manual))
    findings.warn(
      'MANUAL_TASK',
      `Task ${uid} is scheduled manually: here it is scheduled by its links and constraint`,
      uid,
    );
  return {
    name: findings.taskName(record.fields.Name ?? '', uid),
    estimateHours: kept === undefined ? estimateHours : kept,
    milestone,
    constraint: constraintOf(entry, settings, findings),
    ...progressOf(entry, settings, findings),
  };
}

/**
 * The estimate a flowplan export kept in its extended attribute (empty: none), while the task's
 * Duration is still the one the export wrote for it; undefined without one, or once changed.
 */
function keptEstimate(
  entry: TaskEntry,
  fieldId: string | undefined,
  settings: ProjectSettings,
  findings: Findings,
): number | null | undefined {
  if (fieldId === undefined) return undefined;
  const attribute = recordsOf(entry.record, 'ExtendedAttribute').find(
    (a) => a.fields.FieldID === fieldId,
  );
  const text = attribute?.fields.Value ?? '';
  const kept = text === '' ? null : parseDecimal(text);
  if (text !== '' && kept === null) {
    findings.fail(
      attribute?.line ?? entry.record.line,
      `task ${entry.uid}'s kept estimate "${text}" is not a number`,
    );
    return undefined;
  }
  const written = durationDays(kept, settings.minutesPerDay / 60) * settings.minutesPerDay;
  return entry.minutes === written ? kept : undefined;
}

/** A date-time field as a moment within a flow's dates: null where absent, or a problem. */
export function flowMoment(record: XmlRecord, field: string, findings: Findings): Moment | null {
  const text = record.fields[field];
  if (text === undefined) return null;
  const moment = parseDateTime(text);
  if (moment === null)
    findings.fail(lineOf(record, field), `${field} "${text}" is not a date-time`);
  else if (!isFlowDate(moment.date))
    findings.fail(
      lineOf(record, field),
      `${field} ${moment.date} is outside the dates a flow holds (1970 to 9999)`,
    );
  else return moment;
  return null;
}

/** The day a start moment names: one at or past the day's end starts the next day. */
const startDay = (m: Moment, s: ProjectSettings) =>
  m.minutes >= s.dayEnd ? dateOf((dayNumber(m.date) ?? 0) + 1) : m.date;
/** The day a finish moment names: one at or before the day's start finishes the day before. */
const finishDay = (m: Moment, s: ProjectSettings) =>
  m.minutes <= s.dayStart ? dateOf((dayNumber(m.date) ?? 0) - 1) : m.date;

function constraintOf(
  entry: TaskEntry,
  settings: ProjectSettings,
  findings: Findings,
): PlanConstraint | null {
  const { record, uid } = entry;
  const typeText = record.fields.ConstraintType ?? '0';
  const type = parseInteger(typeText);
  let constraint: PlanConstraint | null = null;
  if (type === CONSTRAINT_CODES.startNoEarlierThan || type === CONSTRAINT_CODES.finishNoLaterThan) {
    if (record.fields.ConstraintDate === undefined)
      findings.fail(
        lineOf(record, 'ConstraintType'),
        `task ${uid} has a constraint without a ConstraintDate`,
      );
    const moment = flowMoment(record, 'ConstraintDate', findings);
    if (moment !== null)
      constraint =
        type === CONSTRAINT_CODES.startNoEarlierThan
          ? { type: 'startNoEarlierThan', date: startDay(moment, settings) }
          : { type: 'finishNoLaterThan', date: finishDay(moment, settings) };
  } else if (type === null)
    findings.fail(
      lineOf(record, 'ConstraintType'),
      `task ${uid}'s ConstraintType "${typeText}" is not a number`,
    );
  else if (type !== 0)
    findings.warn(
      'CONSTRAINT_UNSUPPORTED',
      `Task ${uid}'s constraint "${OTHER_CONSTRAINTS[type] ?? `type ${type}`}" is not kept: a flow holds start-no-earlier-than and finish-no-later-than`,
      uid,
    );
  const deadline = flowMoment(record, 'Deadline', findings);
  if (deadline === null) return constraint;
  if (type !== 0) {
    findings.warn(
      'DEADLINE_IGNORED',
      `Task ${uid}'s deadline is not kept: it has a constraint`,
      uid,
    );
    return constraint;
  }
  findings.warn(
    'DEADLINE_AS_CONSTRAINT',
    `Task ${uid}'s deadline is kept as a finish-no-later-than constraint`,
    uid,
  );
  return { type: 'finishNoLaterThan', date: finishDay(deadline, settings) };
}

/**
 * Where the task stands: done at PercentComplete 100 or with an ActualFinish; started above 0 or
 * with an ActualStart, its RemainingDuration (above 0) the hours left; else not started.
 */
function progressOf(
  entry: TaskEntry,
  settings: ProjectSettings,
  findings: Findings,
): Pick<PlanTaskFields, 'progress' | 'remainingHours' | 'startedAt' | 'completedAt'> {
  const { record, uid } = entry;
  const pctText = record.fields.PercentComplete ?? '0';
  const parsed = parseDecimal(pctText);
  if (parsed === null || parsed > 100)
    findings.fail(
      lineOf(record, 'PercentComplete'),
      `task ${uid}'s PercentComplete "${pctText}" is not 0 to 100`,
    );
  const percent = parsed ?? 0;
  const started = flowMoment(record, 'ActualStart', findings);
  const finished = flowMoment(record, 'ActualFinish', findings);
  if (percent >= 100 || finished !== null)
    return {
      progress: 'done',
      remainingHours: null,
      startedAt: started?.iso ?? null,
      completedAt: finished?.iso ?? null,
    };
  if (percent === 0 && started === null)
    return { progress: 'open', remainingHours: null, startedAt: null, completedAt: null };
  const remainingText = record.fields.RemainingDuration;
  const remaining =
    percent === 0 || remainingText === undefined
      ? null
      : parseDuration(remainingText, settings.minutesPerDay);
  if (remaining === null && percent > 0 && remainingText !== undefined)
    findings.fail(
      lineOf(record, 'RemainingDuration'),
      `task ${uid}'s RemainingDuration "${remainingText}" is not a duration`,
    );
  return {
    progress: 'started',
    remainingHours: remaining === null ? null : hours(remaining),
    startedAt: started?.iso ?? null,
    completedAt: null,
  };
}

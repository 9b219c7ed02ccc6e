/**
 * An MSPDI document (the XML MS Project 2003–2019 saves) read into a plan: each task that is not
 * a summary, not null, not UID 0, not inactive and not of another project becomes a task
 * (mspdi-tasks.ts), with its links (mspdi-links.ts) and resource (mspdi-resources.ts); the
 * project calendar (mspdi-calendar.ts) and StartDate become the plan's. Whatever a flow cannot
 * represent is a warning naming the task's UID, never a silent drop; a value that is not of its
 * format refuses the document, naming its line. More than MAX_IMPORT_TASKS tasks are refused as
 * the parser reaches the one too many.
 */
import { documentText, Findings, lineName, unreadableAt } from './findings.ts';
import { CALENDARS_SHAPE, calendarsByUid, readCalendar } from './mspdi-calendar.ts';
import { ESTIMATE_ALIAS, MSPDI_NAMESPACE, type ProjectSettings } from './mspdi-format.ts';
import { leavesBeneath, readLinks } from './mspdi-links.ts';
import { readResources } from './mspdi-resources.ts';
import {
  durationMinutes,
  flowMoment,
  isTrue,
  outline,
  readTask,
  summaryWarning,
} from './mspdi-tasks.ts';
import { parseClock, parseInteger } from './mspdi-values.ts';
import { MAX_IMPORT_TASKS, type ImportedPlan, type ImportedTask } from './plan.ts';
import { lineOf, readXml, recordOf, recordsOf, type Shape, type XmlRecord } from './xml.ts';

const SHAPE: Shape = {
  fields: [
    'Name',
    'Title',
    'StartDate',
    'ScheduleFromStart',
    'CalendarUID',
    'DefaultStartTime',
    'DefaultFinishTime',
    'MinutesPerDay',
  ],
  records: {
    ExtendedAttributes: { records: { ExtendedAttribute: { fields: ['FieldID', 'Alias'] } } },
    Calendars: CALENDARS_SHAPE,
    Tasks: {
      records: {
        Task: {
          fields: [
            'UID',
            'Name',
            'IsNull',
            'OutlineLevel',
            'OutlineNumber',
            'Duration',
            'DurationFormat',
            'Milestone',
            'Summary',
            'Recurring',
            'Manual',
            'Active',
            'ExternalTask',
            'IsSubproject',
            'ConstraintType',
            'ConstraintDate',
            'Deadline',
            'CalendarUID',
            'PercentComplete',
            'ActualStart',
            'ActualFinish',
            'RemainingDuration',
          ],
          records: {
            PredecessorLink: {
              fields: ['PredecessorUID', 'Type', 'CrossProject', 'LinkLag', 'LagFormat'],
            },
            ExtendedAttribute: { fields: ['FieldID', 'Value'] },
          },
        },
      },
    },
    Resources: {
      records: { Resource: { fields: ['UID', 'Name', 'EmailAddress', 'IsNull', 'CalendarUID'] } },
    },
    Assignments: { records: { Assignment: { fields: ['TaskUID', 'ResourceUID'] } } },
  },
};

/** More Task elements than a file of MAX_IMPORT_TASKS tasks holds, summaries and null rows too. */
const MAX_TASK_RECORDS = 5 * MAX_IMPORT_TASKS;
const DEFAULT_MINUTES_PER_DAY = 480;

/** A Task element that is a task unless its outline shows it is a summary. */
const leafCandidate = (r: XmlRecord) =>
  !isTrue(r.fields.Summary) && !isTrue(r.fields.IsNull) && r.fields.UID !== '0';

export function readMspdi(body: Uint8Array): ImportedPlan {
  const text = documentText(body, 'MSPDI document');
  let records = 0;
  let leaves = 0;
  const project = readXml(text, {
    root: 'Project',
    namespace: MSPDI_NAMESPACE,
    shape: SHAPE,
    what: 'MSPDI document',
    onRecord(record) {
      if (record.name !== 'Task') return;
      if (++records > MAX_TASK_RECORDS)
        throw unreadableAt(
          record.line,
          `the document has more than ${MAX_TASK_RECORDS} Task elements`,
        );
      if (leafCandidate(record) && ++leaves > MAX_IMPORT_TASKS)
        throw unreadableAt(
          record.line,
          `the document has more than ${MAX_IMPORT_TASKS} tasks, the most one import creates`,
        );
    },
  });
  const findings = new Findings();
  const minutesPerDay = minutesPerDayOf(project, findings);
  const calendars = calendarsByUid(project);
  const calendar = readCalendar(project, calendars, minutesPerDay, findings);
  if (calendar?.workingDays.length === 0)
    findings.fail(project.line, 'the project calendar has no working day');
  const settings: ProjectSettings = {
    minutesPerDay,
    dayStart: clockField(project, 'DefaultStartTime', 8 * 60, findings),
    // A day that ends at 00:00 ends at midnight.
    dayEnd: clockField(project, 'DefaultFinishTime', 17 * 60, findings) || 1440,
    workingDaysPerWeek: calendar?.workingDays.length || 5,
  };
  if (project.fields.ScheduleFromStart !== undefined && !isTrue(project.fields.ScheduleFromStart))
    findings.warn(
      'SCHEDULED_FROM_FINISH',
      'The project is scheduled from its finish date; a flow is scheduled from its start',
    );

  const entries = outline(recordsOf(recordOf(project, 'Tasks'), 'Task'), findings);
  const estimateField = recordsOf(
    recordOf(project, 'ExtendedAttributes'),
    'ExtendedAttribute',
  ).find((a) => a.fields.Alias === ESTIMATE_ALIAS)?.fields.FieldID;
  const leafEntries = entries.filter((e) => e.kind === 'leaf');
  // A summary's duration sizes a percentage lag from it; a leaf's is read with the leaf.
  for (const entry of entries)
    if (entry.kind === 'summary') entry.minutes = durationMinutes(entry, settings, findings, false);
  const tasks = leafEntries.map((entry, index) => {
    entry.index = index;
    entry.minutes = durationMinutes(entry, settings, findings, true);
    const own = parseInteger(entry.record.fields.CalendarUID ?? '');
    const calendarOfTask = own === null ? undefined : calendars.get(own);
    if (calendarOfTask !== undefined)
      findings.warn(
        'TASK_CALENDAR',
        `Task ${entry.uid} has a calendar of its own ("${calendarOfTask.fields.Name ?? own}"): it follows the project's`,
        entry.uid,
      );
    return readTask(entry, settings, estimateField, findings);
  });
  const beneath = leavesBeneath(entries);
  for (const entry of entries)
    if (entry.kind === 'summary') summaryWarning(entry, beneath.get(entry)?.length ?? 0, findings);
  const links = readLinks(entries, beneath, tasks.length, settings, findings);
  const resources = readResources(project, entries, tasks.length, calendars, findings);
  const start = flowMoment(project, 'StartDate', findings);
  findings.check();
  return {
    name: projectName(project),
    startDate: start?.date ?? null,
    calendar,
    tasks: tasks.map((task, i): ImportedTask => ({
      ...task,
      uid: leafEntries[i]?.uid ?? 0,
      links: links[i] ?? [],
      resource: resources[i] ?? null,
    })),
    warnings: findings.warnings,
  };
}

function minutesPerDayOf(project: XmlRecord, findings: Findings): number {
  const text = project.fields.MinutesPerDay;
  if (text === undefined) return DEFAULT_MINUTES_PER_DAY;
  const minutes = parseInteger(text);
  if (minutes === null) {
    findings.fail(
      lineOf(project, 'MinutesPerDay'),
      `MinutesPerDay "${text}" is not a whole number of minutes`,
    );
    return DEFAULT_MINUTES_PER_DAY;
  }
  const held = Math.min(1440, Math.max(60, minutes));
  if (held !== minutes)
    findings.warn(
      'CALENDAR_SIMPLIFIED',
      `MinutesPerDay ${minutes} is outside a flow's 1 to 24 hours a day: it is read as ${held}`,
    );
  return held;
}

function clockField(
  project: XmlRecord,
  field: string,
  fallback: number,
  findings: Findings,
): number {
  const text = project.fields[field];
  const minutes = text === undefined ? fallback : parseClock(text);
  if (minutes === null)
    findings.fail(lineOf(project, field), `${field} "${text}" is not a time of day`);
  return minutes ?? fallback;
}

/** The project's Title, else its Name without the file extension MS Project gives it. */
function projectName(project: XmlRecord): string | null {
  return (
    lineName(project.fields.Title ?? '', 200).name ??
    lineName((project.fields.Name ?? '').replace(/\.(xml|mpp)$/i, ''), 200).name
  );
}

/**
 * Who does each task, as an MSPDI file says: its first assignment's resource (name and email,
 * for matching the workspace's members), the others a warning, as a flow's task has one
 * assignee. A resource's own calendar (working times or exceptions of its own) is not kept: a
 * warning naming the resource's UID.
 */
import { count } from '../../platform/plural.ts';
import { type Findings, lineName } from './findings.ts';
import { hasOwnTimes } from './mspdi-calendar.ts';
import type { TaskEntry } from './mspdi-format.ts';
import { parseBoolean, parseInteger } from './mspdi-values.ts';
import type { PlanResource } from './plan.ts';
import { lineOf, recordOf, recordsOf, type XmlRecord } from './xml.ts';

/** The resource of each of the plan's `taskCount` tasks, by index (null: none). */
export function readResources(
  project: XmlRecord,
  entries: readonly TaskEntry[],
  taskCount: number,
  calendars: Map<number, XmlRecord>,
  findings: Findings,
): (PlanResource | null)[] {
  const resources = new Map<number, PlanResource>();
  for (const record of recordsOf(recordOf(project, 'Resources'), 'Resource')) {
    const uid = parseInteger(record.fields.UID ?? '');
    if (uid === null) {
      findings.fail(
        lineOf(record, 'UID'),
        `a Resource has no UID (or not a number: "${record.fields.UID ?? ''}")`,
      );
      continue;
    }
    const name = lineName(record.fields.Name ?? '', 200).name;
    const email = lineName(record.fields.EmailAddress ?? '', 320).name;
    if (parseBoolean(record.fields.IsNull ?? '0') === true || (name === null && email === null))
      continue;
    resources.set(uid, { uid, name, email });
    const calendar = calendars.get(parseInteger(record.fields.CalendarUID ?? '') ?? NaN);
    if (calendar !== undefined && hasOwnTimes(calendar))
      findings.warn(
        'RESOURCE_CALENDAR',
        `Resource ${uid} ("${name ?? email}") has working times of its own: they are not kept`,
        uid,
      );
  }
  const tasks = new Map(entries.map((e) => [e.uid, e]));
  const assigned: (PlanResource | null)[] = Array.from({ length: taskCount }, () => null);
  const extra = new Map<TaskEntry, number>();
  for (const record of recordsOf(recordOf(project, 'Assignments'), 'Assignment')) {
    const taskUid = parseInteger(record.fields.TaskUID ?? '');
    const resourceUid = parseInteger(record.fields.ResourceUID ?? '');
    if (taskUid === null || resourceUid === null) {
      findings.fail(record.line, 'an Assignment has no TaskUID or ResourceUID (or not a number)');
      continue;
    }
    // No such resource: MS Project's placeholder for an unassigned task (UID −65535).
    const resource = resources.get(resourceUid);
    const task = tasks.get(taskUid);
    if (resource === undefined || task === undefined || task.kind === 'skipped') continue;
    if (task.kind === 'summary')
      findings.warn(
        'EXTRA_ASSIGNMENTS',
        `Resource ${resourceUid} of the summary task ${taskUid} is not kept: a summary is not imported`,
        taskUid,
      );
    else if (assigned[task.index] === null) assigned[task.index] = resource;
    else extra.set(task, (extra.get(task) ?? 0) + 1);
  }
  for (const [task, more] of extra) {
    const kept = assigned[task.index];
    findings.warn(
      'EXTRA_ASSIGNMENTS',
      `Task ${task.uid} has ${count(more + 1, 'resource')}: ${kept?.name ?? kept?.email} is kept, as a task has one assignee`,
      task.uid,
    );
  }
  return assigned;
}

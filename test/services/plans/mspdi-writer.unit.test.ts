/**
 * Issue 54, item 4: the MSPDI export. import(export(flow)) gives back the same tasks, links,
 * calendar, start and name (a property over random flows: every link type and lag, milestones,
 * constraints, progress, assignees, calendars of any weekdays, hours and holidays); and the
 * document says what MS Project reads: Duration as the days scheduled times the hours a day, the
 * estimate in its extended attribute, the flow's dates and slack as MS Project writes its own,
 * elements in the schema's order (the writer's output was checked against mspdi_pj12 with
 * xmllint when written; the order test here keeps it).
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import t from 'tap';
import { readMspdi } from '../../../src/services/plans/mspdi-reader.ts';
import { writeMspdi } from '../../../src/services/plans/mspdi-writer.ts';
import type { ExportPlan, ExportTask, TaskSchedule } from '../../../src/services/plans/plan.ts';
import { readXml, recordOf, recordsOf } from '../../../src/services/plans/xml.ts';
import { expectedImport, importedTasks, planArb } from './arbitraries.ts';
import { bytes, NS } from './mspdi-document.ts';

const weekday = (date: string) => ((new Date(`${date}T00:00:00Z`).getUTCDay() + 6) % 7) + 1;

t.test('import(export(flow)) gives back its tasks, links, calendar, start and name', async (t) => {
  fc.assert(
    fc.property(planArb, (plan) => {
      const back = readMspdi(bytes(writeMspdi(plan)));
      assert.deepStrictEqual(importedTasks(back), expectedImport(plan, true));
      assert.deepStrictEqual(back.calendar, {
        ...plan.calendar,
        // A holiday on a day the calendar does not work changes nothing: it is not kept.
        holidays: plan.calendar.holidays.filter((h) =>
          plan.calendar.workingDays.includes(weekday(h.date)),
        ),
      });
      assert.equal(back.startDate, plan.startDate);
      assert.equal(back.name, plan.name);
      assert.deepStrictEqual(back.warnings, []);
    }),
    { numRuns: 150 },
  );
  t.pass('150 random flows read back as written');
});

const schedule = (
  es: string,
  ef: string,
  ls: string,
  lf: string,
  total: number,
  free: number,
): TaskSchedule => ({
  earliestStart: es,
  earliestFinish: ef,
  latestStart: ls,
  latestFinish: lf,
  totalFloatDays: total,
  freeFloatDays: free,
});

const base: Omit<ExportTask, 'id' | 'name'> = {
  estimateHours: null,
  milestone: false,
  constraint: null,
  progress: 'open',
  remainingHours: null,
  startedAt: null,
  completedAt: null,
  links: [],
  assignee: null,
  schedule: null,
};

const PLAN: ExportPlan = {
  name: 'R&D <launch>',
  startDate: '2024-01-08',
  calendar: {
    workingDays: [1, 2, 3, 4, 5],
    hoursPerDay: 8,
    holidays: [{ date: '2024-01-17', name: 'Company day' }],
  },
  tasks: [
    {
      ...base,
      id: 'tsk_k',
      name: 'Kick-off',
      milestone: true,
      schedule: schedule('2024-01-08', '2024-01-08', '2024-01-09', '2024-01-09', 2, 0),
    },
    {
      ...base,
      id: 'tsk_a',
      name: 'Design "A" \uFFFF',
      estimateHours: 12,
      progress: 'started',
      remainingHours: 4,
      startedAt: '2024-01-08T09:15:30.500Z',
      links: [{ taskId: 'tsk_k', type: 'FS', lagDays: 0 }],
      assignee: { name: 'Ann Lee', email: 'ann@example.com' },
      schedule: schedule('2024-01-08', '2024-01-09', '2024-01-10', '2024-01-11', -1, 0),
    },
    {
      ...base,
      id: 'tsk_b',
      name: 'Build',
      constraint: { type: 'startNoEarlierThan', date: '2024-01-10' },
      links: [{ taskId: 'tsk_a', type: 'SS', lagDays: -1 }],
      assignee: { name: 'Ann Lee', email: 'ann@example.com' },
      schedule: schedule('2024-01-10', '2024-01-10', '2024-01-11', '2024-01-11', 1, 1),
    },
    {
      ...base,
      id: 'tsk_d',
      name: 'Done',
      estimateHours: 3,
      progress: 'done',
      startedAt: '2024-01-02T10:00:00.000Z',
      completedAt: '2024-01-03T10:00:00.000Z',
      constraint: { type: 'finishNoLaterThan', date: '2024-03-01' },
      assignee: { name: 'Bo', email: 'bo@example.com' },
    },
    {
      ...base,
      id: 'tsk_s',
      name: 'Ship',
      milestone: true,
      links: [{ taskId: 'tsk_b', type: 'FF', lagDays: 2 }],
      schedule: schedule('2024-01-12', '2024-01-12', '2024-01-12', '2024-01-12', 0, 0),
    },
  ],
};

/** The written document's fields, read back plainly. */
function written(plan: ExportPlan) {
  const xml = writeMspdi(plan);
  const fields = (record: { fields: Partial<Record<string, string>> } | undefined) =>
    record?.fields ?? {};
  const project = readXml(xml, {
    root: 'Project',
    namespace: NS,
    what: 'MSPDI document',
    shape: {
      fields: [
        'SaveVersion',
        'Name',
        'Title',
        'StartDate',
        'FinishDate',
        'CurrencyCode',
        'DefaultStartTime',
        'DefaultFinishTime',
        'MinutesPerDay',
        'MinutesPerWeek',
        'HonorConstraints',
        'DefaultTaskType',
      ],
      records: {
        Tasks: {
          records: {
            Task: {
              fields: [
                'UID',
                'Name',
                'Type',
                'Start',
                'Finish',
                'Duration',
                'Estimated',
                'Milestone',
                'Critical',
                'EarlyStart',
                'EarlyFinish',
                'LateStart',
                'LateFinish',
                'FreeSlack',
                'TotalSlack',
                'PercentComplete',
                'ActualStart',
                'ActualFinish',
                'ActualDuration',
                'RemainingDuration',
                'ConstraintType',
                'ConstraintDate',
              ],
              records: {
                PredecessorLink: { fields: ['PredecessorUID', 'Type', 'LinkLag', 'LagFormat'] },
                ExtendedAttribute: { fields: ['FieldID', 'Value'] },
              },
            },
          },
        },
        Resources: { records: { Resource: { fields: ['UID', 'Name', 'EmailAddress', 'Type'] } } },
        Assignments: {
          records: { Assignment: { fields: ['UID', 'TaskUID', 'ResourceUID', 'Units'] } },
        },
      },
    },
  });
  return {
    xml,
    project: project.fields,
    tasks: recordsOf(recordOf(project, 'Tasks'), 'Task'),
    resources: recordsOf(recordOf(project, 'Resources'), 'Resource').map(fields),
    assignments: recordsOf(recordOf(project, 'Assignments'), 'Assignment').map(fields),
  };
}

t.test(
  'the project: its name, start and finish, the day’s times, links over constraints',
  async (t) => {
    const { project, xml } = written(PLAN);
    t.strictSame(project, {
      SaveVersion: '12',
      Name: 'R&D <launch>',
      Title: 'R&D <launch>',
      StartDate: '2024-01-08T08:00:00',
      FinishDate: '2024-01-12T17:00:00',
      CurrencyCode: 'USD',
      DefaultStartTime: '08:00:00',
      DefaultFinishTime: '17:00:00',
      MinutesPerDay: '480',
      MinutesPerWeek: '2400',
      DefaultTaskType: '1',
      HonorConstraints: '0',
    });
    t.ok(
      xml.startsWith(
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Project xmlns="http://schemas.microsoft.com/project">\n',
      ),
    );
    t.match(xml, '<Name>R&amp;D &lt;launch&gt;</Name>', 'escaped');
  },
);

t.test(
  'each task: Duration in scheduled days, the dates and slack as MS Project writes them',
  async (t) => {
    const { tasks } = written(PLAN);
    const [kickoff, design, build, done, ship] = tasks.map((task) => task.fields);
    t.strictSame(kickoff, {
      UID: '1',
      Name: 'Kick-off',
      Type: '1',
      Start: '2024-01-08T08:00:00',
      Finish: '2024-01-08T08:00:00',
      Duration: 'PT0H0M0S',
      Estimated: '0',
      Milestone: '1',
      Critical: '0',
      // A milestone waiting on nothing is where the first day starts; late, where its day ends.
      EarlyStart: '2024-01-08T08:00:00',
      EarlyFinish: '2024-01-08T08:00:00',
      LateStart: '2024-01-09T17:00:00',
      LateFinish: '2024-01-09T17:00:00',
      FreeSlack: '0',
      TotalSlack: '9600',
      PercentComplete: '0',
      ActualDuration: 'PT0H0M0S',
      RemainingDuration: 'PT0H0M0S',
      ConstraintType: '0',
    });
    t.strictSame(design, {
      UID: '2',
      // U+FFFF is no character of XML: written as U+FFFD.
      Name: 'Design "A" \uFFFD',
      Type: '1',
      Start: '2024-01-08T09:15:30',
      Finish: '2024-01-09T17:00:00',
      // 12 hours are 2 days of 8.
      Duration: 'PT16H0M0S',
      Estimated: '0',
      Milestone: '0',
      Critical: '1',
      EarlyStart: '2024-01-08T08:00:00',
      EarlyFinish: '2024-01-09T17:00:00',
      LateStart: '2024-01-10T08:00:00',
      LateFinish: '2024-01-11T17:00:00',
      FreeSlack: '0',
      TotalSlack: '-4800',
      // 4 of 16 hours left: 75% done.
      PercentComplete: '75',
      ActualStart: '2024-01-08T09:15:30',
      ActualDuration: 'PT12H0M0S',
      RemainingDuration: 'PT4H0M0S',
      ConstraintType: '0',
    });
    t.strictSame(
      tasks[1]?.records.map((r) => r.fields),
      [
        { PredecessorUID: '1', Type: '1', LinkLag: '0', LagFormat: '7' },
        { FieldID: '188743767', Value: '12' },
      ],
    );
    t.strictSame(
      [
        build?.Duration,
        build?.Estimated,
        build?.ConstraintType,
        build?.ConstraintDate,
        build?.TotalSlack,
        build?.FreeSlack,
      ],
      ['PT8H0M0S', '1', '4', '2024-01-10T08:00:00', '4800', '4800'],
      'no estimate: a day, "estimated"; start no earlier than at the day’s start',
    );
    t.strictSame(
      tasks[2]?.records.map((r) => r.fields),
      [{ PredecessorUID: '2', Type: '3', LinkLag: '-4800', LagFormat: '7' }],
      'SS with a lead of a day: tenths of a minute',
    );
    t.strictSame(
      [
        done?.Start,
        done?.Finish,
        done?.PercentComplete,
        done?.ActualStart,
        done?.ActualFinish,
        done?.RemainingDuration,
        done?.EarlyStart,
        done?.ConstraintType,
        done?.ConstraintDate,
      ],
      [
        '2024-01-02T10:00:00',
        '2024-01-03T10:00:00',
        '100',
        '2024-01-02T10:00:00',
        '2024-01-03T10:00:00',
        'PT0H0M0S',
        undefined,
        '7',
        '2024-03-01T17:00:00',
      ],
      'done: its actual dates, no schedule',
    );
    t.strictSame(
      [
        ship?.EarlyStart,
        ship?.LateFinish,
        tasks[4]?.records[0]?.fields.Type,
        tasks[4]?.records[0]?.fields.LinkLag,
      ],
      ['2024-01-12T17:00:00', '2024-01-12T17:00:00', '0', '9600'],
      'a milestone after its link is where its day ends',
    );
  },
);

t.test('assignees are resources (each once, by email) and an assignment each', async (t) => {
  const { resources, assignments } = written(PLAN);
  t.strictSame(resources, [
    { UID: '1', Name: 'Ann Lee', Type: '1', EmailAddress: 'ann@example.com' },
    { UID: '2', Name: 'Bo', Type: '1', EmailAddress: 'bo@example.com' },
  ]);
  t.strictSame(assignments, [
    { UID: '1', TaskUID: '2', ResourceUID: '1', Units: '1' },
    { UID: '2', TaskUID: '3', ResourceUID: '1', Units: '1' },
    { UID: '3', TaskUID: '4', ResourceUID: '2', Units: '1' },
  ]);
  const { xml } = written({
    ...PLAN,
    tasks: PLAN.tasks.map((task) => ({ ...task, assignee: null })),
  });
  t.notOk(xml.includes('<Resources>'), 'nobody assigned: no resources');
});

t.test('a started task: its share done, and days that end at midnight', async (t) => {
  const task: ExportTask = {
    ...base,
    id: 'tsk_1',
    name: 'Over',
    estimateHours: 8,
    progress: 'started',
    startedAt: '2024-01-08T00:00:00.000Z',
    schedule: schedule('2024-01-08', '2024-01-08', '2024-01-08', '2024-01-08', 0, 0),
  };
  const percent = (t: Partial<ExportTask>) =>
    written({ ...PLAN, tasks: [{ ...task, ...t }] }).tasks[0]?.fields.PercentComplete;
  t.equal(percent({}), '0', 'nobody re-estimated: nothing done yet');
  t.equal(percent({ remainingHours: 20 }), '1', 'more left than planned: 1%, still started');
  t.equal(percent({ remainingHours: 0 }), '99', 'nothing left: 99%, still started');
  t.equal(percent({ milestone: true, estimateHours: null, remainingHours: 0 }), '1');
  const allDay = written({
    ...PLAN,
    calendar: { workingDays: [1, 2, 3, 4, 5, 6, 7], hoursPerDay: 24, holidays: [] },
    tasks: [{ ...task, constraint: { type: 'finishNoLaterThan', date: '2024-01-31' } }],
  });
  t.strictSame(
    [
      allDay.project.DefaultStartTime,
      allDay.project.DefaultFinishTime,
      allDay.tasks[0]?.fields.EarlyFinish,
      allDay.tasks[0]?.fields.ConstraintDate,
    ],
    ['00:00:00', '00:00:00', '2024-01-09T00:00:00', '2024-02-01T00:00:00'],
    'a day’s end at midnight is the next day at 00:00',
  );
  const back = readMspdi(bytes(allDay.xml));
  t.strictSame(back.tasks[0]?.constraint, { type: 'finishNoLaterThan', date: '2024-01-31' });
});

t.test('elements are in the order of the schema’s sequences', async (t) => {
  // The order mspdi_pj12.xsd gives the elements the writer uses, for Project and Task.
  const PROJECT = [
    'SaveVersion',
    'Name',
    'Title',
    'ScheduleFromStart',
    'StartDate',
    'FinishDate',
    'CriticalSlackLimit',
    'CurrencyCode',
    'CalendarUID',
    'DefaultStartTime',
    'DefaultFinishTime',
    'MinutesPerDay',
    'MinutesPerWeek',
    'DaysPerMonth',
    'DefaultTaskType',
    'DurationFormat',
    'HonorConstraints',
    'ExtendedAttributes',
    'Calendars',
    'Tasks',
    'Resources',
    'Assignments',
  ];
  const TASK = [
    'UID',
    'ID',
    'Name',
    'Type',
    'IsNull',
    'OutlineNumber',
    'OutlineLevel',
    'Start',
    'Finish',
    'Duration',
    'DurationFormat',
    'Estimated',
    'Milestone',
    'Summary',
    'Critical',
    'EarlyStart',
    'EarlyFinish',
    'LateStart',
    'LateFinish',
    'FreeSlack',
    'TotalSlack',
    'PercentComplete',
    'ActualStart',
    'ActualFinish',
    'ActualDuration',
    'RemainingDuration',
    'ConstraintType',
    'CalendarUID',
    'ConstraintDate',
    'PredecessorLink',
    'ExtendedAttribute',
  ];
  const { xml } = written(PLAN);
  const project = [...xml.matchAll(/^\t<(\w+)/gm)].map((m) => m[1] ?? '');
  t.strictSame(
    project,
    PROJECT.filter((name) => project.includes(name)),
  );
  for (const block of xml.split('<Task>').slice(1)) {
    const names = [...(block.split('</Task>')[0] ?? '').matchAll(/^\t\t\t<(\w+)/gm)].map(
      (m) => m[1] ?? '',
    );
    const order = names.filter((name, i) => name !== names[i - 1]);
    t.strictSame(
      order,
      TASK.filter((name) => order.includes(name)),
    );
  }
});

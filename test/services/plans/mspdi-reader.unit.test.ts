/**
 * Issue 54, item 1: an MSPDI document read into a plan, field by field: leaf tasks, durations,
 * milestones, the two constraint types (and a deadline), progress, the four link types with lags
 * by the project's minutes a day, links of summary tasks applied beneath them, resources. What a
 * flow cannot represent is a warning naming the task's UID; a value not of its format refuses the
 * document naming its line. (The calendar: mspdi-calendar.unit.test.ts.)
 */
import t from 'tap';
import { readMspdi } from '../../../src/services/plans/mspdi-reader.ts';
import { MAX_IMPORT_TASKS, type ImportedPlan } from '../../../src/services/plans/plan.ts';
import { bytes, link, mspdi, refusal, task, type DocumentSpec } from './mspdi-document.ts';

const read = (spec: DocumentSpec): ImportedPlan => readMspdi(bytes(mspdi(spec)));
const refused = (spec: DocumentSpec) => refusal(() => read(spec));
const codes = (plan: ImportedPlan) => plan.warnings.map((w) => [w.code, w.uid]);

t.test(
  'each leaf task becomes a task; the project summary, null rows and summaries do not',
  async (t) => {
    const plan = read({
      project: { Title: 'Launch' },
      tasks: [
        { UID: 0, ID: 0, Name: 'Launch', OutlineLevel: 0, Summary: 1 },
        task(1, 'Phase', { Summary: 1 }),
        task(2, '  Design\tit  ', { OutlineLevel: 2, Duration: 'PT12H0M0S' }),
        { UID: 3, ID: 3, IsNull: 1 },
        task(4, 'Build', { OutlineLevel: 2, Duration: 'PT36H30M0S' }),
        task(5, 'Ship', { Duration: 'P1DT2H' }),
        { UID: 6, ID: 6, Name: 'Unknown', OutlineLevel: 1 },
      ],
    });
    t.equal(plan.name, 'Launch', 'the Title');
    t.equal(plan.startDate, '2024-01-08');
    t.strictSame(
      plan.tasks.map((x) => [x.uid, x.name, x.estimateHours, x.milestone, x.progress]),
      [
        [2, 'Design it', 12, false, 'open'],
        [4, 'Build', 36.5, false, 'open'],
        // A day (D) is the project's working day: 8 hours, and 2 more.
        [5, 'Ship', 10, false, 'open'],
        [6, 'Unknown', null, false, 'open'],
      ],
    );
    t.strictSame(codes(plan), [['SUMMARY_TASK', 1]]);
    t.match(plan.warnings[0]?.message, /the 2 tasks beneath it are/);
  },
);

t.test('a task with tasks beneath it is a summary, whatever its Summary says', async (t) => {
  const plan = read({
    tasks: [
      task(1, 'Group', { OutlineNumber: '1' }),
      { UID: 2, ID: 2, Name: 'Inside', OutlineNumber: '1.1', Duration: 'PT8H0M0S' },
      task(3, 'Empty summary', { Summary: 1 }),
    ],
  });
  t.strictSame(
    plan.tasks.map((x) => x.uid),
    [2],
  );
  t.strictSame(codes(plan), [
    ['SUMMARY_TASK', 1],
    ['SUMMARY_TASK', 3],
  ]);
  t.match(plan.warnings[1]?.message, /the 0 tasks beneath it/);
});

t.test('milestones, zero durations, elapsed durations and estimates past the limit', async (t) => {
  const plan = read({
    tasks: [
      task(1, 'Milestone', { Milestone: 1, Duration: 'PT0H0M0S' }),
      task(2, 'Zero', { Duration: 'PT0H0M0S' }),
      task(3, 'Long milestone', { Milestone: 1, Duration: 'PT16H0M0S' }),
      // 7 elapsed days on a 5-day week of 8 hours: 7 × 5/7 = 5 working days, 40 hours.
      task(4, 'Elapsed', { Duration: 'PT168H0M0S', DurationFormat: 8 }),
      task(5, 'Huge', { Duration: 'PT200000H0M0S' }),
    ],
  });
  t.strictSame(
    plan.tasks.map((x) => [x.uid, x.milestone, x.estimateHours]),
    [
      [1, true, null],
      [2, true, null],
      [3, true, null],
      [4, false, 40],
      [5, false, 100_000],
    ],
  );
  t.strictSame(codes(plan), [
    ['MILESTONE_FROM_ZERO_DURATION', 2],
    ['MILESTONE_DURATION_DROPPED', 3],
    ['ELAPSED_DURATION', 4],
    ['ESTIMATE_LIMITED', 5],
  ]);
});

t.test(
  'ConstraintType 4 and 7 are kept, a Deadline where there is none; the others warn',
  async (t) => {
    const plan = read({
      tasks: [
        task(1, 'Snet', { ConstraintType: 4, ConstraintDate: '2024-01-10T08:00:00' }),
        // At the day's end it starts the next day; at its start a finish is the day before.
        task(2, 'Snet late', { ConstraintType: 4, ConstraintDate: '2024-01-10T17:00:00' }),
        task(3, 'Fnlt', { ConstraintType: 7, ConstraintDate: '2024-01-12T17:00:00' }),
        task(4, 'Fnlt early', { ConstraintType: 7, ConstraintDate: '2024-01-12T08:00:00' }),
        task(5, 'Asap', { ConstraintType: 0, ConstraintDate: '2024-01-12T08:00:00' }),
        task(6, 'Mso', { ConstraintType: 2, ConstraintDate: '2024-01-12T08:00:00' }),
        task(7, 'Odd', { ConstraintType: 9 }),
        task(8, 'Deadline', { Deadline: '2024-02-01T17:00:00' }),
        task(9, 'Both', {
          ConstraintType: 4,
          ConstraintDate: '2024-01-09T08:00:00',
          Deadline: '2024-02-01T17:00:00',
        }),
        task(10, 'Alap deadline', { ConstraintType: 1, Deadline: '2024-02-01T17:00:00' }),
      ],
    });
    t.strictSame(
      plan.tasks.map((x) => x.constraint),
      [
        { type: 'startNoEarlierThan', date: '2024-01-10' },
        { type: 'startNoEarlierThan', date: '2024-01-11' },
        { type: 'finishNoLaterThan', date: '2024-01-12' },
        { type: 'finishNoLaterThan', date: '2024-01-11' },
        null,
        null,
        null,
        { type: 'finishNoLaterThan', date: '2024-02-01' },
        { type: 'startNoEarlierThan', date: '2024-01-09' },
        null,
      ],
    );
    t.strictSame(codes(plan), [
      ['CONSTRAINT_UNSUPPORTED', 6],
      ['CONSTRAINT_UNSUPPORTED', 7],
      ['DEADLINE_AS_CONSTRAINT', 8],
      ['DEADLINE_IGNORED', 9],
      ['CONSTRAINT_UNSUPPORTED', 10],
      ['DEADLINE_IGNORED', 10],
    ]);
    t.match(plan.warnings[0]?.message, /"Must Start On" is not kept/);
    t.match(plan.warnings[1]?.message, /"type 9" is not kept/);
  },
);

t.test('progress: PercentComplete, RemainingDuration, ActualStart and ActualFinish', async (t) => {
  const plan = read({
    tasks: [
      task(1, 'Open'),
      task(2, 'Half', {
        Duration: 'PT40H0M0S',
        PercentComplete: 50,
        ActualStart: '2024-01-02T09:30:00',
        RemainingDuration: 'PT20H0M0S',
      }),
      task(3, 'Begun', {
        PercentComplete: 0,
        ActualStart: '2024-01-03T08:00:00',
        RemainingDuration: 'PT8H0M0S',
      }),
      task(4, 'Done', {
        PercentComplete: 100,
        ActualStart: '2024-01-02T08:00:00',
        ActualFinish: '2024-01-04T17:00:00',
      }),
      task(5, 'Finished', { ActualFinish: '2024-01-04T17:00:00+02:00' }),
      task(6, 'Some', { PercentComplete: 10 }),
    ],
  });
  t.strictSame(
    plan.tasks.map((x) => [x.progress, x.remainingHours, x.startedAt, x.completedAt]),
    [
      ['open', null, null, null],
      ['started', 20, '2024-01-02T09:30:00.000Z', null],
      // Started, nothing done yet: its estimate counts, as a task nobody re-estimated.
      ['started', null, '2024-01-03T08:00:00.000Z', null],
      ['done', null, '2024-01-02T08:00:00.000Z', '2024-01-04T17:00:00.000Z'],
      ['done', null, null, '2024-01-04T15:00:00.000Z'],
      ['started', null, null, null],
    ],
  );
});

t.test(
  'the four link types, lags by the minutes a day, leads, rounding and the limits',
  async (t) => {
    const plan = read({
      project: { MinutesPerDay: 450 },
      calendars: [
        `<Calendar><UID>1</UID><WeekDays>${[1, 2, 3, 4, 5, 6, 7]
          .map(
            (d) =>
              `<WeekDay><DayType>${d}</DayType><DayWorking>${d >= 2 && d <= 6 ? 1 : 0}</DayWorking></WeekDay>`,
          )
          .join('')}</WeekDays></Calendar>`,
      ],
      tasks: [
        task(1, 'P', { Duration: 'PT15H0M0S' }),
        task(2, 'FF', { links: [link(1, { Type: 0, LinkLag: 4500 })] }),
        task(3, 'FS', { links: [link(1, { Type: 1, LinkLag: -9000 })] }),
        task(4, 'SF', { links: [link(1, { Type: 2 })] }),
        task(5, 'SS', { links: [link(1, { Type: 3, LinkLag: 6750 })] }),
        // 1.5 working days of 450 minutes: rounded away from zero, a warning.
        task(6, 'Half', { links: [link(1, { LinkLag: -6750 })] }),
        // 7 elapsed days (LagFormat 8): 7 × 5/7 = 5 working days.
        task(7, 'Elapsed', { links: [link(1, { LinkLag: 100800, LagFormat: 8 })] }),
        // 50% of P's 15 hours (2 days of 7.5): 1 day.
        task(8, 'Percent', { links: [link(1, { LinkLag: 50, LagFormat: 19 })] }),
        task(9, 'Far', { links: [link(1, { LinkLag: 600 * 4500 })] }),
        task(10, 'Plain', { links: [{ PredecessorUID: 1 }] }),
      ],
    });
    t.strictSame(
      plan.tasks.slice(1).map((x) => x.links),
      [
        [{ task: 0, type: 'FF', lagDays: 1 }],
        [{ task: 0, type: 'FS', lagDays: -2 }],
        [{ task: 0, type: 'SF', lagDays: 0 }],
        [{ task: 0, type: 'SS', lagDays: 2 }],
        [{ task: 0, type: 'FS', lagDays: -2 }],
        [{ task: 0, type: 'FS', lagDays: 5 }],
        [{ task: 0, type: 'FS', lagDays: 1 }],
        [{ task: 0, type: 'FS', lagDays: 500 }],
        [{ task: 0, type: 'FS', lagDays: 0 }],
      ],
    );
    t.strictSame(codes(plan), [
      ['LAG_ROUNDED', 5],
      ['LAG_ROUNDED', 6],
      ['LAG_ELAPSED', 7],
      ['LAG_PERCENT', 8],
      ['LAG_LIMITED', 9],
    ]);
    t.match(plan.warnings[0]?.message, /lag of 1\.5 working days is rounded to 2/);
  },
);

t.test(
  'links of summaries apply to each task beneath; duplicates and what cannot be kept warn',
  async (t) => {
    const plan = read({
      tasks: [
        task(1, 'Before'),
        task(2, 'Group', { Summary: 1, links: [link(1)] }),
        task(3, 'In A', { OutlineLevel: 2, links: [link(1)] }),
        task(4, 'Sub', { OutlineLevel: 2, Summary: 1 }),
        task(5, 'In B', { OutlineLevel: 3, links: [link(3, { Type: 3 })] }),
        task(6, 'After', {
          links: [link(2), link(3), link(99), link(7), link(1, { CrossProject: 1 })],
        }),
        task(7, 'Gone', { Active: 0 }),
        task(8, 'Holder', { Summary: 1 }),
        task(9, 'Self', { OutlineLevel: 2, links: [link(8)] }),
        task(10, 'External', { ExternalTask: 1 }),
        task(11, 'Inserted', { IsSubproject: 1, links: [link(10)] }),
        task(12, 'Lonely', { Summary: 1 }),
        task(13, 'Waits on nothing', { links: [link(12)] }),
      ],
    });
    const byUid = new Map(plan.tasks.map((x, i) => [x.uid, i]));
    const i = (uid: number) => byUid.get(uid);
    t.strictSame(
      plan.tasks.map((x) => x.uid),
      [1, 3, 5, 6, 9, 13],
    );
    t.strictSame(
      plan.tasks[i(3) ?? -1]?.links,
      [{ task: i(1), type: 'FS', lagDays: 0 }],
      'the summary’s link, once',
    );
    t.strictSame(plan.tasks[i(5) ?? -1]?.links, [
      { task: i(1), type: 'FS', lagDays: 0 },
      { task: i(3), type: 'SS', lagDays: 0 },
    ]);
    t.strictSame(plan.tasks[i(6) ?? -1]?.links, [
      { task: i(3), type: 'FS', lagDays: 0 },
      { task: i(5), type: 'FS', lagDays: 0 },
    ]);
    t.strictSame(plan.tasks[i(9) ?? -1]?.links, [], 'Self waits on its own summary');
    t.strictSame(
      plan.tasks[i(13) ?? -1]?.links,
      [],
      'a summary with no task beneath holds nothing',
    );
    t.strictSame(codes(plan), [
      ['INACTIVE_TASK', 7],
      ['EXTERNAL_TASK', 10],
      ['EXTERNAL_TASK', 11],
      ['SUMMARY_TASK', 2],
      ['SUMMARY_TASK', 4],
      ['SUMMARY_TASK', 8],
      ['SUMMARY_TASK', 12],
      ['LINK_DUPLICATE', 3],
      ['LINK_DUPLICATE', 6],
      ['LINK_DROPPED', 6],
      ['LINK_DROPPED', 6],
      ['LINK_DROPPED', 6],
      ['LINK_DROPPED', 9],
      ['LINK_DROPPED', 13],
    ]);
    t.match(plan.warnings[9]?.message, /task 99 is not imported/);
    t.match(plan.warnings[10]?.message, /task 7 is not imported/);
    t.match(plan.warnings[11]?.message, /comes from another project/);
    t.match(plan.warnings[12]?.message, /joins a task to itself/);
    t.match(plan.warnings[13]?.message, /summary task 12 has no task beneath it/);
  },
);

t.test('recurring and manual tasks, task calendars: warnings naming the task', async (t) => {
  const plan = read({
    calendars: [
      `<Calendar><UID>1</UID><Name>Standard</Name></Calendar>`,
      `<Calendar><UID>2</UID><Name>Night shift</Name><BaseCalendarUID>1</BaseCalendarUID></Calendar>`,
      `<Calendar><UID>3</UID></Calendar>`,
    ],
    tasks: [
      task(1, 'Weekly meeting', { Summary: 1, Recurring: 1 }),
      task(2, 'Weekly meeting 1', { OutlineLevel: 2 }),
      task(3, 'Weekly meeting 2', { OutlineLevel: 2 }),
      task(4, 'By hand', { Manual: 1, CalendarUID: 2 }),
      task(5, 'Unnamed calendar', { CalendarUID: 3 }),
      task(6, 'Project calendar', { CalendarUID: -1 }),
    ],
  });
  t.strictSame(
    plan.tasks.map((x) => x.uid),
    [2, 3, 4, 5, 6],
  );
  t.strictSame(codes(plan), [
    ['TASK_CALENDAR', 4],
    ['MANUAL_TASK', 4],
    ['TASK_CALENDAR', 5],
    ['RECURRING_TASK', 1],
  ]);
  t.match(plan.warnings[0]?.message, /"Night shift"/);
  t.match(plan.warnings[2]?.message, /\("3"\)/);
  t.match(plan.warnings[3]?.message, /its occurrences are, as ordinary tasks \(2 tasks\)/);
});

t.test(
  'resources: the first assignment’s, by name and email; the others and their calendars warn',
  async (t) => {
    const plan = read({
      calendars: [
        `<Calendar><UID>1</UID></Calendar>`,
        `<Calendar><UID>5</UID><BaseCalendarUID>1</BaseCalendarUID></Calendar>`,
        `<Calendar><UID>6</UID><BaseCalendarUID>1</BaseCalendarUID><WeekDays><WeekDay><DayType>7</DayType><DayWorking>1</DayWorking></WeekDay></WeekDays></Calendar>`,
      ],
      tasks: [
        task(1, 'One'),
        task(2, 'Two'),
        task(3, 'Group', { Summary: 1 }),
        task(4, 'Three', { OutlineLevel: 2 }),
        task(5, 'Off', { Active: 0 }),
      ],
      resources: [
        { UID: 0, ID: 0 },
        { UID: 1, ID: 1, Name: 'Ann Lee', EmailAddress: 'ann@example.com', CalendarUID: 5 },
        { UID: 2, ID: 2, Name: 'Bo', CalendarUID: 6 },
        { UID: 3, ID: 3, EmailAddress: 'cy@example.com' },
        { UID: 4, ID: 4, Name: 'Nobody', IsNull: 1 },
      ],
      assignments: [
        { UID: 1, TaskUID: 1, ResourceUID: 1 },
        { UID: 2, TaskUID: 1, ResourceUID: 2 },
        { UID: 3, TaskUID: 1, ResourceUID: 3 },
        { UID: 4, TaskUID: 2, ResourceUID: -65535 },
        { UID: 5, TaskUID: 3, ResourceUID: 2 },
        { UID: 6, TaskUID: 4, ResourceUID: 3 },
        { UID: 7, TaskUID: 5, ResourceUID: 3 },
        { UID: 8, TaskUID: 0, ResourceUID: 3 },
      ],
    });
    t.strictSame(
      plan.tasks.map((x) => x.resource),
      [
        { uid: 1, name: 'Ann Lee', email: 'ann@example.com' },
        null,
        { uid: 3, name: null, email: 'cy@example.com' },
      ],
    );
    t.strictSame(codes(plan), [
      ['INACTIVE_TASK', 5],
      ['SUMMARY_TASK', 3],
      ['RESOURCE_CALENDAR', 2],
      ['EXTRA_ASSIGNMENTS', 3],
      ['EXTRA_ASSIGNMENTS', 1],
    ]);
    t.match(plan.warnings[4]?.message, /has 3 resources: Ann Lee is kept/);
  },
);

t.test('names: blank ones are named by the UID, long ones cut; the project’s name', async (t) => {
  const long = 'x'.repeat(600);
  const plan = read({
    project: { Name: 'Roadmap.MPP' },
    tasks: [task(1, '  '), task(2, long), { UID: 3, ID: 3 }],
  });
  t.equal(plan.name, 'Roadmap', 'the Name without its extension, when there is no Title');
  t.strictSame(
    plan.tasks.map((x) => x.name),
    ['Task 1', 'x'.repeat(500), 'Task 3'],
  );
  t.strictSame(codes(plan), [
    ['NAME_MISSING', 1],
    ['NAME_SHORTENED', 2],
    ['NAME_MISSING', 3],
  ]);
  t.equal(read({ project: { Name: '' } }).name, null);
  t.equal(
    read({ project: { StartDate: '2024-01-08T08:00:00' }, tasks: [] }).tasks.length,
    0,
    'no task: an empty plan',
  );
  const bare = readMspdi(bytes(`<Project xmlns="http://schemas.microsoft.com/project"/>`));
  t.strictSame(bare, { name: null, startDate: null, calendar: null, tasks: [], warnings: [] });
});

t.test('a project scheduled from its finish warns; one from its start does not', async (t) => {
  t.strictSame(codes(read({ project: { ScheduleFromStart: 0 } })), [
    ['SCHEDULED_FROM_FINISH', undefined],
  ]);
  t.strictSame(codes(read({ project: { ScheduleFromStart: 1 } })), []);
});

t.test(
  'an estimate a flowplan export kept is read back while the Duration is the one written',
  async (t) => {
    const definition = `<ExtendedAttribute><FieldID>188743767</FieldID><FieldName>Number1</FieldName><Alias>flowplan estimateHours</Alias></ExtendedAttribute>`;
    const kept = (value: string) => [{ FieldID: 188743767, Value: value }];
    const plan = read({
      extendedAttributes: definition,
      tasks: [
        // 12 hours are 2 days of 8: the export wrote PT16H.
        task(1, 'Kept', { Duration: 'PT16H0M0S', attributes: kept('12') }),
        // Someone made it 3 days since: the Duration wins.
        task(2, 'Changed', { Duration: 'PT24H0M0S', attributes: kept('12') }),
        // No estimate: it lasts a day, and none is kept.
        task(3, 'Unestimated', { Duration: 'PT8H0M0S' }),
        task(4, 'Other field', { Duration: 'PT8H0M0S', attributes: [{ FieldID: 1, Value: 'x' }] }),
        task(5, 'Milestone', { Duration: 'PT0H0M0S', Milestone: 1, attributes: kept('3') }),
      ],
    });
    t.strictSame(
      plan.tasks.map((x) => x.estimateHours),
      [12, 24, null, null, null],
    );
    const foreign = read({
      tasks: [task(1, 'No definition', { Duration: 'PT16H0M0S', attributes: kept('12') })],
    });
    t.equal(foreign.tasks[0]?.estimateHours, 16, 'without the definition the field is any other');
    const bad = refused({
      extendedAttributes: definition,
      tasks: [task(1, 'Bad', { Duration: 'PT16H0M0S', attributes: kept('lots') })],
    });
    t.match(bad.message, /kept estimate "lots" is not a number/);
  },
);

t.test('values not of their format refuse the document, naming each line', async (t) => {
  const spec: DocumentSpec = {
    project: { MinutesPerDay: 'eight hours', DefaultStartTime: 'early', StartDate: 'Monday' },
    tasks: [
      task(1, 'Dur', { Duration: 'three days' }),
      { UID: 'x', ID: 2 },
      task(3, 'Dup'),
      task(3, 'Dup again'),
      task(4, 'Pct', { PercentComplete: 150 }),
      task(5, 'Rem', { PercentComplete: 50, RemainingDuration: 'PT-1H' }),
      task(6, 'Actual', { ActualStart: '2024-13-01T08:00:00' }),
      task(7, 'Old', { ActualFinish: '1969-12-31T08:00:00' }),
      task(8, 'Ctype', { ConstraintType: 'soon' }),
      task(9, 'Cdate', { ConstraintType: 4 }),
      task(10, 'Link', {
        links: [
          { PredecessorUID: 'one' },
          link(1, { Type: 7 }),
          link(1, { LinkLag: '1.5' }),
          link(1, { LagFormat: 'd' }),
        ],
      }),
    ],
    resources: [{ Name: 'No UID' }],
    assignments: [{ UID: 1, TaskUID: 'a', ResourceUID: 1 }],
  };
  const text = mspdi(spec);
  const { code, errors } = refusal(() => readMspdi(bytes(text)));
  t.equal(code, 'VALIDATION_FAILED');
  const lineOf = (needle: string, from = 0) =>
    text.slice(0, text.indexOf(needle, from)).split('\n').length;
  const expected: [string, number][] = [
    ['MinutesPerDay "eight hours" is not a whole number of minutes', lineOf('<MinutesPerDay>')],
    ['DefaultStartTime "early" is not a time of day', 0],
    ['a Task has no UID (or not a number: "x")', lineOf('<UID>x')],
    ['a second Task has UID 3', lineOf('<UID>3</UID>', text.indexOf('<UID>3</UID>') + 1)],
  ];
  for (const [message, line] of expected) {
    const found = errors.find((e) => e.message.endsWith(message));
    t.ok(found, message);
    if (line > 0) t.equal(found?.line, line, `${message}: line ${line}`);
  }
  for (const pattern of [
    /task 1's Duration "three days" is not a duration/,
    /task 4's PercentComplete "150" is not 0 to 100/,
    /task 5's RemainingDuration "PT-1H" is not a duration/,
    /ActualStart "2024-13-01T08:00:00" is not a date-time/,
    /ActualFinish 1969-12-31 is outside the dates a flow holds/,
    /task 8's ConstraintType "soon" is not a number/,
    /task 9 has a constraint without a ConstraintDate/,
    /a link of task 10 has no PredecessorUID \(or not a number: "one"\)/,
    /a link of task 10 has Type "7"/,
    /a link of task 10 has LinkLag "1.5", not a whole number/,
    /a link of task 10 has LagFormat "d", not a whole number/,
    /a Resource has no UID/,
    /an Assignment has no TaskUID or ResourceUID/,
    /StartDate "Monday" is not a date-time/,
  ])
    t.ok(
      errors.some((e) => pattern.test(e.message)),
      String(pattern),
    );
  t.ok(
    errors.every((e) => e.message.startsWith(`line ${e.line}: `)),
    'each problem says its line',
  );
});

t.test('more than 20,000 tasks are refused as the parser reaches the one too many', async (t) => {
  const tasks = Array.from(
    { length: MAX_IMPORT_TASKS + 1 },
    (_, i) => `<Task><UID>${i + 1}</UID></Task>`,
  ).join('\n');
  const text = `<Project xmlns="http://schemas.microsoft.com/project"><Tasks>\n${tasks}\n</Tasks></Project>`;
  const { message, errors } = refusal(() => readMspdi(bytes(text)));
  t.match(message, /more than 20000 tasks/);
  t.equal(errors[0]?.line, MAX_IMPORT_TASKS + 2, 'the line of the task too many');
  // Summaries and null rows are not tasks: 20,000 tasks among them are read.
  const withSummaries = `<Project xmlns="http://schemas.microsoft.com/project"><Tasks><Task><UID>0</UID></Task><Task><UID>30000</UID><Summary>1</Summary></Task><Task><UID>30001</UID><IsNull>1</IsNull></Task>\n${tasks.slice(0, tasks.lastIndexOf('\n'))}\n</Tasks></Project>`;
  t.equal(readMspdi(bytes(withSummaries)).tasks.length, MAX_IMPORT_TASKS);
  const rows = Array.from(
    { length: 5 * MAX_IMPORT_TASKS + 1 },
    () => `<Task><UID>0</UID></Task>`,
  ).join('');
  const flood = refusal(() =>
    readMspdi(
      bytes(
        `<Project xmlns="http://schemas.microsoft.com/project"><Tasks>${rows}</Tasks></Project>`,
      ),
    ),
  );
  t.match(flood.message, /more than 100000 Task elements/);
});

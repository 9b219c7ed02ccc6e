/**
 * `npm run bench:import`: reading MSPDI documents of 10,000 and 20,000 tasks into a plan
 * (readMspdi: the size check, UTF-8, saxes, the mapping, links through summaries, resources),
 * median of RUNS after a warm-up, with the document's size, and writing the export of such a flow
 * (writeMspdi). Three densities of the same plan: "minimal", the fields the reader needs (UID,
 * name, outline, duration, links); "lean", those and a resource each (as a flowplan export is
 * about that size); "full", every field MS Project 2010 writes for a task. A document over the
 * import's 10 MB limit is refused by size, so each density is also measured at the most tasks
 * under the limit. Each document is built here: a summary every 50 tasks, a chain of FS links
 * with an SS link and a lag now and then, ten holidays. The import route's whole time (one
 * transaction) is measured once the route exists. Prints one JSON line.
 */
import { readMspdi } from '../src/services/plans/mspdi-reader.ts';
import { writeMspdi } from '../src/services/plans/mspdi-writer.ts';
import { MAX_IMPORT_BYTES, type ExportPlan } from '../src/services/plans/plan.ts';
import { machine } from './support.ts';

const RUNS = 5;

/** What MS Project writes of a task beyond what the reader keeps (values as it writes them). */
const FULL_FIELDS = [
  'Active>1',
  'Manual>0',
  'Type>0',
  'IsNull>0',
  'CreateDate>2024-01-02T09:00:00',
  'Priority>500',
  'Start>2024-01-08T08:00:00',
  'Finish>2024-01-08T17:00:00',
  'ManualStart>2024-01-08T08:00:00',
  'ManualFinish>2024-01-08T17:00:00',
  'ManualDuration>PT8H0M0S',
  'Work>PT8H0M0S',
  'ResumeValid>0',
  'EffortDriven>0',
  'Recurring>0',
  'OverAllocated>0',
  'Estimated>0',
  'Critical>0',
  'IsSubproject>0',
  'IsSubprojectReadOnly>0',
  'ExternalTask>0',
  'EarlyStart>2024-01-08T08:00:00',
  'EarlyFinish>2024-01-08T17:00:00',
  'LateStart>2024-01-08T08:00:00',
  'LateFinish>2024-01-08T17:00:00',
  'StartVariance>0',
  'FinishVariance>0',
  'WorkVariance>0.00',
  'FreeSlack>0',
  'TotalSlack>0',
  'StartSlack>0',
  'FinishSlack>0',
  'FixedCost>0',
  'FixedCostAccrual>3',
  'PercentWorkComplete>0',
  'Cost>0',
  'OvertimeCost>0',
  'OvertimeWork>PT0H0M0S',
  'ActualDuration>PT0H0M0S',
  'ActualCost>0',
  'ActualOvertimeCost>0',
  'ActualWork>PT0H0M0S',
  'ActualOvertimeWork>PT0H0M0S',
  'RegularWork>PT8H0M0S',
  'RemainingCost>0',
  'RemainingWork>PT8H0M0S',
  'RemainingOvertimeCost>0',
  'RemainingOvertimeWork>PT0H0M0S',
  'ACWP>0.00',
  'CV>0.00',
  'LevelAssignments>1',
  'LevelingCanSplit>1',
  'LevelingDelay>0',
  'LevelingDelayFormat>8',
  'IgnoreResourceCalendar>0',
  'HideBar>0',
  'Rollup>0',
  'BCWS>0.00',
  'BCWP>0.00',
  'PhysicalPercentComplete>0',
  'EarnedValueMethod>0',
  'IsPublished>1',
  'CommitmentType>0',
].map((f) => {
  const [name, value] = f.split('>');
  return `<${name}>${value}</${name}>`;
});

type Density = 'minimal' | 'lean' | 'full';

function document(tasks: number, density: Density): string {
  const full = density === 'full';
  const resources = density !== 'minimal';
  const parts = [
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Project xmlns="http://schemas.microsoft.com/project">',
    '<SaveVersion>14</SaveVersion><Name>Bench.xml</Name><StartDate>2024-01-08T08:00:00</StartDate><CalendarUID>1</CalendarUID><MinutesPerDay>480</MinutesPerDay>',
    '<Calendars><Calendar><UID>1</UID><Name>Standard</Name><IsBaseCalendar>1</IsBaseCalendar><WeekDays>',
    ...[1, 2, 3, 4, 5, 6, 7].map(
      (d) =>
        `<WeekDay><DayType>${d}</DayType><DayWorking>${d >= 2 && d <= 6 ? 1 : 0}</DayWorking>${d >= 2 && d <= 6 ? '<WorkingTimes><WorkingTime><FromTime>08:00:00</FromTime><ToTime>12:00:00</ToTime></WorkingTime><WorkingTime><FromTime>13:00:00</FromTime><ToTime>17:00:00</ToTime></WorkingTime></WorkingTimes>' : ''}</WeekDay>`,
    ),
    ...Array.from(
      { length: 10 },
      (_, i) =>
        `<WeekDay><DayType>0</DayType><DayWorking>0</DayWorking><TimePeriod><FromDate>2024-0${1 + (i % 9)}-1${i % 10}T00:00:00</FromDate><ToDate>2024-0${1 + (i % 9)}-1${i % 10}T23:59:00</ToDate></TimePeriod></WeekDay>`,
    ),
    '</WeekDays></Calendar></Calendars><Tasks>',
  ];
  let uid = 0;
  let previous = 0;
  const assignments: string[] = [];
  for (let i = 0; i < tasks; i++) {
    if (i % 50 === 0) {
      uid++;
      parts.push(
        `<Task><UID>${uid}</UID><ID>${uid}</ID><Name>Phase ${uid}</Name><OutlineLevel>1</OutlineLevel><Duration>PT400H0M0S</Duration><Summary>1</Summary>${full ? FULL_FIELDS.join('') : ''}</Task>`,
      );
    }
    uid++;
    const link =
      previous === 0
        ? ''
        : `<PredecessorLink><PredecessorUID>${previous}</PredecessorUID><Type>${i % 7 === 0 ? 3 : 1}</Type><CrossProject>0</CrossProject><LinkLag>${i % 5 === 0 ? 4800 : 0}</LinkLag><LagFormat>7</LagFormat></PredecessorLink>`;
    parts.push(
      `<Task><UID>${uid}</UID><ID>${uid}</ID><Name>Task ${i} of the programme</Name><OutlineNumber>${Math.floor(i / 50) + 1}.${(i % 50) + 1}</OutlineNumber><OutlineLevel>2</OutlineLevel><Duration>PT${8 * (1 + (i % 5))}H0M0S</Duration><DurationFormat>7</DurationFormat><Milestone>0</Milestone><Summary>0</Summary><PercentComplete>0</PercentComplete><ConstraintType>0</ConstraintType><CalendarUID>-1</CalendarUID>${full ? FULL_FIELDS.join('') : ''}${link}</Task>`,
    );
    if (resources)
      assignments.push(
        `<Assignment><UID>${i + 1}</UID><TaskUID>${uid}</TaskUID><ResourceUID>${1 + (i % 50)}</ResourceUID><Units>1</Units></Assignment>`,
      );
    previous = uid;
  }
  parts.push('</Tasks><Resources>');
  for (let r = 1; r <= (resources ? 50 : 0); r++)
    parts.push(
      `<Resource><UID>${r}</UID><ID>${r}</ID><Name>Person ${r}</Name><Type>1</Type><EmailAddress>person${r}@example.com</EmailAddress></Resource>`,
    );
  parts.push(`</Resources><Assignments>${assignments.join('')}</Assignments></Project>`);
  return parts.join('\n');
}

const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

function measure(tasks: number, density: Density) {
  const body = Buffer.from(document(tasks, density), 'utf8');
  const size = {
    tasks,
    density,
    bytes: body.byteLength,
    kBPerTask: Number((body.byteLength / tasks / 1024).toFixed(2)),
  };
  if (body.byteLength > MAX_IMPORT_BYTES) return { ...size, refusedBySize: true };
  const plan = readMspdi(body);
  const times: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const started = performance.now();
    readMspdi(body);
    times.push(performance.now() - started);
  }
  const parseMs = median(times);
  return {
    ...size,
    parseMs: Number(parseMs.toFixed(1)),
    mbPerSecond: Number((body.byteLength / 1e6 / (parseMs / 1000)).toFixed(1)),
    imported: plan.tasks.length,
    links: plan.tasks.reduce((n, t) => n + t.links.length, 0),
    warnings: plan.warnings.length,
  };
}

/** The most tasks (in hundreds) a document of `density` holds under the import limit. */
function mostUnderLimit(density: Density): number {
  const perTask = Buffer.byteLength(document(1000, density)) / 1000;
  return Math.floor(MAX_IMPORT_BYTES / perTask / 100) * 100 - 100;
}

/** Writing the export of the imported flow: its plan with a schedule, through writeMspdi. */
function measureWrite(tasks: number) {
  const plan = readMspdi(Buffer.from(document(tasks, 'minimal'), 'utf8'));
  const ids = plan.tasks.map((_, i) => `tsk_${i}`);
  const exported: ExportPlan = {
    name: 'Bench',
    startDate: '2024-01-08',
    calendar: plan.calendar ?? { workingDays: [1, 2, 3, 4, 5], hoursPerDay: 8, holidays: [] },
    tasks: plan.tasks.map((task, i) => ({
      ...task,
      id: ids[i] ?? '',
      links: task.links.map((l) => ({
        taskId: ids[l.task] ?? '',
        type: l.type,
        lagDays: l.lagDays,
      })),
      assignee: null,
      schedule: {
        earliestStart: '2024-01-08',
        earliestFinish: '2024-01-09',
        latestStart: '2024-01-10',
        latestFinish: '2024-01-11',
        totalFloatDays: 2,
        freeFloatDays: 0,
      },
    })),
  };
  const times: number[] = [];
  let bytes = 0;
  for (let run = 0; run <= RUNS; run++) {
    const started = performance.now();
    bytes = Buffer.byteLength(writeMspdi(exported));
    if (run > 0) times.push(performance.now() - started);
  }
  return { tasks, bytes, writeMs: Number(median(times).toFixed(1)) };
}

const densities: Density[] = ['minimal', 'lean', 'full'];
const result = {
  name: 'import',
  machine: machine(),
  limitBytes: MAX_IMPORT_BYTES,
  read: densities.flatMap((d) => [
    measure(10_000, d),
    measure(20_000, d),
    measure(mostUnderLimit(d), d),
  ]),
  write: [measureWrite(10_000), measureWrite(20_000)],
};
process.stdout.write(JSON.stringify(result) + '\n');

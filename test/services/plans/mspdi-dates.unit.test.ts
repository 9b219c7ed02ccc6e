/**
 * Issue 54, item 2: an imported file's schedule shows MS Project's dates. The fixtures
 * (test/fixtures/mspdi/, written by hand, the arithmetic beside each task) carry the early and
 * late dates and slack MS Project's rules give; below, the same as the flow's days, worked out
 * again in the tables. Each table is checked three ways here: against what the fixture saved
 * (MS Project's moments read as working-day boundaries), and against a plain reference of the
 * scheduling rules run over the plan the reader made of the file (tasks, durations, links and
 * lags, constraints, milestones, calendar, start). The import route's own schedule is checked
 * against the same tables once the engine takes links (phase 2 of the issue).
 */
import { readFileSync } from 'node:fs';
import t from 'tap';
import { readMspdi } from '../../../src/services/plans/mspdi-reader.ts';
import { asDays, LINKS, SUMMARY } from './ms-project-dates.ts';
import { referenceSchedule, savedDays, savedOf, WorkingDays } from './reference-schedule.ts';

for (const [file, table] of [
  ['links.xml', LINKS],
  ['summary.xml', SUMMARY],
] as const) {
  t.test(file, async (t) => {
    const xml = readFileSync(`test/fixtures/mspdi/${file}`, 'utf8');
    const plan = readMspdi(Buffer.from(xml));
    t.strictSame(
      plan.tasks.map((task) => [task.uid, task.name]),
      table.map(([uid, name]) => [uid, name]),
      'the leaf tasks, in order',
    );
    const calendar = plan.calendar;
    if (calendar === null || plan.startDate === null) throw new Error('a calendar and a start');
    const days = new WorkingDays(calendar, plan.startDate);
    const saved = savedOf(xml);
    const reference = referenceSchedule(plan);
    table.forEach((row, i) => {
      const [uid, name] = row;
      const savedTask = saved.get(uid);
      if (savedTask === undefined) throw new Error(`task ${uid} is in the file`);
      t.strictSame(
        savedDays(savedTask, days, 480),
        asDays(row),
        `${name}: MS Project's saved dates`,
      );
      t.strictSame(reference[i], asDays(row), `${name}: the rules over the imported plan`);
    });
  });
}

t.test(
  'the fixtures read as written: calendars, constraints, links through the summary',
  async (t) => {
    const links = readMspdi(readFileSync('test/fixtures/mspdi/links.xml'));
    t.strictSame(links.calendar, {
      workingDays: [1, 2, 3, 4, 5],
      hoursPerDay: 8,
      holidays: [{ date: '2024-01-17', name: 'Company day' }],
    });
    t.equal(links.name, 'Links of every type');
    t.strictSame(links.warnings, []);
    const summary = readMspdi(readFileSync('test/fixtures/mspdi/summary.xml'));
    t.strictSame(summary.calendar?.holidays, [{ date: '2024-03-15' }], 'a 2003 exception: no name');
    t.equal(summary.name, 'summary', "the Name without MS Project's extension");
    const byName = new Map(summary.tasks.map((task, i) => [task.name, { ...task, index: i }]));
    const at = (name: string) => byName.get(name)?.index;
    t.strictSame(
      byName.get('Build')?.links,
      [
        { task: at('Survey'), type: 'FS', lagDays: 0 },
        { task: at('Report'), type: 'FS', lagDays: 0 },
        { task: at('Permit'), type: 'FS', lagDays: 0 },
      ],
      "Phase 1's successor waits on each task beneath it",
    );
    t.strictSame(byName.get('Report')?.links, [
      { task: at('Kick-off'), type: 'FS', lagDays: 0 },
      { task: at('Survey'), type: 'FS', lagDays: 0 },
    ]);
    t.strictSame(byName.get('Permit')?.constraint, {
      type: 'startNoEarlierThan',
      date: '2024-03-13',
    });
    t.strictSame(byName.get('Docs')?.constraint, { type: 'finishNoLaterThan', date: '2024-03-08' });
    t.strictSame(
      summary.warnings.map((w) => [w.code, w.uid]),
      [['SUMMARY_TASK', 2]],
    );
  },
);

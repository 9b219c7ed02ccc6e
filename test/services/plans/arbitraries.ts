/**
 * Random plans for the property tests (fast-check): flows as the exports take them (any link
 * types and lags, milestones, constraints, progress, assignees, calendars with holidays), and
 * documents to feed the readers: MSPDI and CSV made from such plans, then cut, spliced and
 * sprinkled with hostile bytes. The import route's fuzz sweep can take the same generators.
 */
import fc from 'fast-check';
import { writeCsv } from '../../../src/services/plans/csv-writer.ts';
import { writeMspdi } from '../../../src/services/plans/mspdi-writer.ts';
import type {
  ExportPlan,
  ExportTask,
  ImportedPlan,
  LinkType,
  PlanCalendar,
} from '../../../src/services/plans/plan.ts';

const DAY_MS = 86_400_000;
const LINK_TYPES: LinkType[] = ['FS', 'SS', 'FF', 'SF'];

/** A name as a flow holds one: one line, trimmed, not blank; XML's specials and any script. */
export const nameArb = (max = 60) =>
  fc
    .oneof(
      fc.string({ unit: 'grapheme-composite', minLength: 1, maxLength: max }),
      fc.constantFrom(
        'A & B',
        '<Design>',
        '"quoted", with; commas',
        '=SUM(A1)',
        "'=quote",
        '-1 day',
        'R&D 🚀',
        'Ünïcødé',
      ),
    )
    .map((s) => s.replace(/[\u0000-\u001F\u007F\uFFFE\uFFFF]/g, ' ').trim())
    .filter((s) => s !== '');

/** A day from 2020 to 2030. */
export const dateArb = fc
  .integer({ min: 0, max: 4000 })
  .map((n) => new Date(Date.UTC(2020, 0, 1) + n * DAY_MS).toISOString().slice(0, 10));

/** An instant to the second (MSPDI keeps seconds). */
const instantArb = fc
  .integer({ min: 0, max: 4000 * 86_400 })
  .map((s) => new Date(Date.UTC(2020, 0, 1) + s * 1000).toISOString());

/** Hours to two decimals, as an import keeps them. */
const hoursArb = (max: number) => fc.integer({ min: 0, max: max * 100 }).map((n) => n / 100);

export const calendarArb: fc.Arbitrary<PlanCalendar> = fc.record({
  workingDays: fc
    .subarray([1, 2, 3, 4, 5, 6, 7], { minLength: 1 })
    .map((days) => [...days].sort((a, b) => a - b)),
  hoursPerDay: fc.constantFrom(1, 2, 4, 6, 7.5, 8, 10, 12, 16, 24),
  holidays: fc
    .uniqueArray(fc.record({ date: dateArb, name: fc.option(nameArb(30), { nil: undefined }) }), {
      selector: (h) => h.date,
      maxLength: 8,
    })
    .map((holidays) =>
      [...holidays]
        .sort((a, b) => (a.date < b.date ? -1 : 1))
        .map(({ date, name }) => (name === undefined ? { date } : { date, name })),
    ),
});

const scheduleArb = fc.record({
  earliestStart: dateArb,
  earliestFinish: dateArb,
  latestStart: dateArb,
  latestFinish: dateArb,
  totalFloatDays: fc.integer({ min: -20, max: 20 }),
  freeFloatDays: fc.integer({ min: 0, max: 20 }),
});

const people = [
  { name: 'Ann Lee', email: 'ann@example.com' },
  { name: 'Bo', email: 'bo@example.com' },
  { name: 'Çelik, "C"', email: 'c@example.com' },
];

/** One task's own fields (its links are drawn with the whole plan). */
const taskArb = fc
  .record({
    name: nameArb(),
    milestone: fc.boolean(),
    estimateHours: fc.option(hoursArb(200), { nil: null }),
    constraint: fc.option(
      fc.record({
        type: fc.constantFrom('startNoEarlierThan' as const, 'finishNoLaterThan' as const),
        date: dateArb,
      }),
      { nil: null },
    ),
    progress: fc.constantFrom('open' as const, 'started' as const, 'done' as const),
    remainingHours: fc.option(hoursArb(100), { nil: null }),
    startedAt: instantArb,
    completedAt: instantArb,
    assignee: fc.option(fc.constantFrom(...people), { nil: null }),
    schedule: scheduleArb,
  })
  .map((t) => ({
    ...t,
    estimateHours: t.milestone ? null : t.estimateHours,
    remainingHours: t.progress === 'started' ? t.remainingHours : null,
    startedAt: t.progress === 'open' ? null : t.startedAt,
    completedAt: t.progress === 'done' ? t.completedAt : null,
    schedule: t.progress === 'done' ? null : t.schedule,
  }));

export const planArb: fc.Arbitrary<ExportPlan> = fc
  .record({
    name: nameArb(),
    startDate: dateArb,
    calendar: calendarArb,
    tasks: fc.array(taskArb, { maxLength: 25 }),
  })
  .chain((plan) =>
    fc
      .tuple(
        ...plan.tasks.map((_, i) =>
          fc.uniqueArray(
            fc.record({
              task: fc
                .integer({ min: 0, max: Math.max(0, plan.tasks.length - 1) })
                .filter((p) => p !== i),
              type: fc.constantFrom(...LINK_TYPES),
              lagDays: fc.integer({ min: -500, max: 500 }),
            }),
            { selector: (l) => l.task, maxLength: Math.min(4, plan.tasks.length - 1) },
          ),
        ),
      )
      .map((links): ExportPlan => ({
        ...plan,
        tasks: plan.tasks.map((task, i): ExportTask => ({
          id: `tsk_${i}`,
          ...task,
          links: (links[i] ?? []).map((l) => ({
            taskId: `tsk_${l.task}`,
            type: l.type,
            lagDays: l.lagDays,
          })),
        })),
      })),
  );

/** What an import of `plan`'s export should give back, in the reader's terms. */
export function expectedImport(plan: ExportPlan, keepProgress: boolean) {
  const index = new Map(plan.tasks.map((task, i) => [task.id, i]));
  return plan.tasks.map((task) => ({
    name: task.name,
    estimateHours: task.estimateHours,
    milestone: task.milestone,
    constraint: task.constraint && { ...task.constraint },
    progress: keepProgress ? task.progress : 'open',
    remainingHours: keepProgress ? task.remainingHours : null,
    startedAt: keepProgress ? task.startedAt : null,
    completedAt: keepProgress ? task.completedAt : null,
    links: task.links.map((l) => ({ task: index.get(l.taskId), type: l.type, lagDays: l.lagDays })),
    assignee: task.assignee?.email ?? null,
  }));
}

/** An imported plan's tasks in expectedImport's terms. */
export const importedTasks = (plan: ImportedPlan) =>
  plan.tasks.map((task) => ({
    name: task.name,
    estimateHours: task.estimateHours,
    milestone: task.milestone,
    constraint: task.constraint,
    progress: task.progress,
    remainingHours: task.remainingHours,
    startedAt: task.startedAt,
    completedAt: task.completedAt,
    links: task.links,
    assignee: task.resource?.email ?? null,
  }));

/** Hostile bytes to splice into a document. */
const hostile = fc.constantFrom(
  '<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>',
  '&e;',
  '&#0;',
  '<![CDATA[',
  ']]>',
  '</Project>',
  '<Project xmlns="http://schemas.microsoft.com/project">',
  '"',
  '""',
  ',',
  ';',
  '\r\n',
  '\u0000',
  '\uFEFF',
  '\uD800',
  '<Task><UID>1</UID>',
  '<PredecessorLink><PredecessorUID>1</PredecessorUID><Type>9</Type></PredecessorLink>',
  '3FS+2w',
  '999',
  '-1',
);

/** A document made from a plan, then mangled: cut short, spliced with hostile text, or both. */
const mangled = (write: (plan: ExportPlan) => string) =>
  fc
    .tuple(
      planArb,
      fc.array(fc.tuple(fc.nat(), hostile), { maxLength: 4 }),
      fc.option(fc.nat(), { nil: null }),
    )
    .map(([plan, splices, cut]) => {
      let text = write(plan);
      for (const [at, piece] of splices) {
        const p = at % (text.length + 1);
        text = text.slice(0, p) + piece + text.slice(p);
      }
      return cut === null ? text : text.slice(0, cut % (text.length + 1));
    });

/** MSPDI documents from well-formed to mangled. */
export const mspdiDocumentArb = fc.oneof(planArb.map(writeMspdi), mangled(writeMspdi));
/** CSV documents from well-formed to mangled. */
export const csvDocumentArb = fc.oneof(planArb.map(writeCsv), mangled(writeCsv));

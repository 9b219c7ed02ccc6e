/**
 * A plain reference of the flow's schedule over a plan, as the scheduling rules word it, for
 * checking what an imported file's tasks would show: days numbered from the plan's start on its
 * calendar; an open task occupies days S … F−1 (F = S + d, d = max(1, ceil(hours / hoursPerDay)),
 * 0 for a milestone); each pass relaxed to a fixed point (no cleverness, so nothing to get wrong
 * twice). Every task is taken as open. It also turns MS Project's saved dates into the same days
 * (`savedDays`), a moment being a boundary between working days.
 */
import { MSPDI_NAMESPACE } from '../../../src/services/plans/mspdi-format.ts';
import type { ImportedPlan, PlanCalendar } from '../../../src/services/plans/plan.ts';
import { readXml, recordOf, recordsOf } from '../../../src/services/plans/xml.ts';

export interface Days {
  earliestStart: string;
  earliestFinish: string;
  latestStart: string;
  latestFinish: string;
  totalFloatDays: number;
  freeFloatDays: number;
}

const DAY_MS = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The working days of a calendar from `start` (day 0) on, and the one before it (day −1). */
export class WorkingDays {
  private readonly dates: string[] = [];
  private readonly before: string;

  constructor(calendar: PlanCalendar, start: string, count = 400) {
    const holidays = new Set(calendar.holidays.map((h) => h.date));
    const works = (ms: number) => {
      const weekday = ((new Date(ms).getUTCDay() + 6) % 7) + 1;
      return calendar.workingDays.includes(weekday) && !holidays.has(iso(ms));
    };
    let ms = Date.parse(`${start}T00:00:00Z`);
    while (this.dates.length < count) {
      if (works(ms)) this.dates.push(iso(ms));
      ms += DAY_MS;
    }
    ms = Date.parse(`${start}T00:00:00Z`) - DAY_MS;
    while (!works(ms)) ms -= DAY_MS;
    this.before = iso(ms);
  }

  date(day: number): string {
    const date = day === -1 ? this.before : this.dates[day];
    if (date === undefined) throw new RangeError(`day ${day} is beyond the reference's days`);
    return date;
  }

  /** The index of the first working day on or after `date`. */
  onOrAfter(date: string): number {
    const i = this.dates.findIndex((d) => d >= date);
    if (i === -1) throw new RangeError(`${date} is beyond the reference's days`);
    return i;
  }

  /** The index of the last working day on or before `date`. */
  onOrBefore(date: string): number {
    return this.dates.findLastIndex((d) => d <= date);
  }
}

/** A number of a list the reference fills for every task. */
const at = (list: readonly number[], i: number): number => list[i] ?? NaN;

export function referenceSchedule(plan: ImportedPlan): Days[] {
  const calendar = plan.calendar;
  if (calendar === null || plan.startDate === null)
    throw new Error('a plan with a calendar and a start');
  const days = new WorkingDays(calendar, plan.startDate);
  const tasks = plan.tasks;
  const d = tasks.map((t) =>
    t.milestone
      ? 0
      : Math.max(1, Math.ceil((t.estimateHours ?? calendar.hoursPerDay) / calendar.hoursPerDay)),
  );
  const S = tasks.map(() => 0);
  const F = tasks.map((_, i) => at(d, i));
  for (let round = 0; round <= tasks.length; round++)
    tasks.forEach((t, i) => {
      let s = t.constraint?.type === 'startNoEarlierThan' ? days.onOrAfter(t.constraint.date) : 0;
      for (const { task: p, type, lagDays: L } of t.links) {
        if (type === 'FS') s = Math.max(s, at(F, p) + L);
        if (type === 'SS') s = Math.max(s, at(S, p) + L);
        if (type === 'FF') s = Math.max(s, at(F, p) + L - at(d, i));
        if (type === 'SF') s = Math.max(s, at(S, p) + L - at(d, i));
      }
      S[i] = Math.max(0, s);
      F[i] = at(S, i) + at(d, i);
    });
  const E = Math.max(...F);
  const LF = tasks.map(() => E);
  const LS = tasks.map((_, i) => E - at(d, i));
  for (let round = 0; round <= tasks.length; round++)
    tasks.forEach((t, i) => {
      let lf =
        t.constraint?.type === 'finishNoLaterThan' ? 1 + days.onOrBefore(t.constraint.date) : E;
      lf = Math.min(lf, E);
      tasks.forEach((s, j) =>
        s.links.forEach(({ task: p, type, lagDays: L }) => {
          if (p !== i) return;
          if (type === 'FS') lf = Math.min(lf, at(LS, j) - L);
          if (type === 'SS') lf = Math.min(lf, at(LS, j) - L + at(d, i));
          if (type === 'FF') lf = Math.min(lf, at(LF, j) - L);
          if (type === 'SF') lf = Math.min(lf, at(LF, j) - L + at(d, i));
        }),
      );
      LF[i] = lf;
      LS[i] = lf - at(d, i);
    });
  return tasks.map((t, i) => {
    const total = Math.min(at(LS, i) - at(S, i), at(LF, i) - at(F, i));
    let free = E - at(F, i);
    let successors = false;
    tasks.forEach((s, j) =>
      s.links.forEach(({ task: p, type, lagDays: L }) => {
        if (p !== i) return;
        const room =
          type === 'FS'
            ? at(S, j) - L - at(F, i)
            : type === 'SS'
              ? at(S, j) - L - at(S, i)
              : type === 'FF'
                ? at(F, j) - L - at(F, i)
                : at(F, j) - L - at(S, i);
        free = successors ? Math.min(free, room) : room;
        successors = true;
      }),
    );
    const early = t.milestone ? days.date(Math.max(at(S, i) - 1, 0)) : null;
    const late = t.milestone ? days.date(at(LF, i) - 1) : null;
    return {
      earliestStart: early ?? days.date(at(S, i)),
      earliestFinish: early ?? days.date(at(F, i) - 1),
      latestStart: late ?? days.date(at(LS, i)),
      latestFinish: late ?? days.date(at(LF, i) - 1),
      totalFloatDays: total,
      freeFloatDays: Math.max(0, Math.min(free, total)),
    };
  });
}

/** What MS Project saved of a task: its four dates (as written) and slack (tenths of minutes). */
export interface Saved {
  milestone: boolean;
  earlyStart: string;
  earlyFinish: string;
  lateStart: string;
  lateFinish: string;
  totalSlack: number;
  freeSlack: number;
}

/**
 * MS Project's saved dates as the flow's days. A moment is a boundary between working days: one
 * at or past the day's end (17:00) is the next day's start, one at or before its start (08:00)
 * the previous day's end, one on a day off the next working day's start; then a task shows its start boundary's day and the day before its
 * finish boundary, a milestone (at one boundary b) day max(b − 1, 0) early and b − 1 late.
 */
export function savedDays(
  saved: Saved,
  days: WorkingDays,
  minutesPerDay: number,
  dayStart = 480,
  dayEnd = 1020,
): Days {
  const minutes = (moment: string) =>
    Number(moment.slice(11, 13)) * 60 + Number(moment.slice(14, 16));
  // A moment on a day off is where the next working day starts.
  const boundary = (m: string, past: (minutes: number) => boolean) => {
    const day = days.onOrAfter(m.slice(0, 10));
    return day + (days.date(day) === m.slice(0, 10) && past(minutes(m)) ? 1 : 0);
  };
  const startBoundary = (m: string) => boundary(m, (t) => t >= dayEnd);
  const finishBoundary = (m: string) => boundary(m, (t) => t > dayStart);
  const slack = (tenths: number) => tenths / 10 / minutesPerDay;
  if (saved.milestone) {
    const early = days.date(Math.max(finishBoundary(saved.earlyStart) - 1, 0));
    const late = days.date(finishBoundary(saved.lateFinish) - 1);
    return {
      earliestStart: early,
      earliestFinish: early,
      latestStart: late,
      latestFinish: late,
      totalFloatDays: slack(saved.totalSlack),
      freeFloatDays: slack(saved.freeSlack),
    };
  }
  return {
    earliestStart: days.date(startBoundary(saved.earlyStart)),
    earliestFinish: days.date(finishBoundary(saved.earlyFinish) - 1),
    latestStart: days.date(startBoundary(saved.lateStart)),
    latestFinish: days.date(finishBoundary(saved.lateFinish) - 1),
    totalFloatDays: slack(saved.totalSlack),
    freeFloatDays: slack(saved.freeSlack),
  };
}

/** The saved dates and slack of each task a plan imports from `xml`, by UID. */
export function savedOf(xml: string): Map<number, Saved> {
  const project = readXml(xml, {
    root: 'Project',
    namespace: MSPDI_NAMESPACE,
    what: 'MSPDI document',
    shape: {
      records: {
        Tasks: {
          records: {
            Task: {
              fields: [
                'UID',
                'Milestone',
                'EarlyStart',
                'EarlyFinish',
                'LateStart',
                'LateFinish',
                'TotalSlack',
                'FreeSlack',
              ],
            },
          },
        },
      },
    },
  });
  const saved = new Map<number, Saved>();
  for (const task of recordsOf(recordOf(project, 'Tasks'), 'Task')) {
    const f = task.fields;
    saved.set(Number(f.UID), {
      milestone: f.Milestone === '1',
      earlyStart: f.EarlyStart ?? '',
      earlyFinish: f.EarlyFinish ?? '',
      lateStart: f.LateStart ?? '',
      lateFinish: f.LateFinish ?? '',
      totalSlack: Number(f.TotalSlack),
      freeSlack: Number(f.FreeSlack),
    });
  }
  return saved;
}

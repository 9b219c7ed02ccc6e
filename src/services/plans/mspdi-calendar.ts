/**
 * The project calendar in MSPDI: read into a flow's calendar (working weekdays, hours a day,
 * holidays) and written back as MS Project keeps one.
 *
 * Reading: the calendar the project names (CalendarUID), its weekdays taken from it or from the
 * base calendars it derives from (DayType 1 = Sunday … 7 = Saturday), MinutesPerDay / 60 hours a
 * day, and every non-working exception day on a working weekday a holiday, named by the
 * exception that covers it. MS Project 2003 keeps exceptions as WeekDay entries of DayType 0,
 * later versions both there (recurring ones expanded) and as Exceptions; both are read. What a
 * flow's calendar cannot hold is a CALENDAR_SIMPLIFIED warning: a day of other hours than the
 * project's, a working exception, alternative work weeks, a recurring exception saved without
 * its days, holidays past MAX_HOLIDAYS.
 */
import { dateOf, dayNumber, isoWeekday } from './days.ts';
import type { Findings } from './findings.ts';
import { clock, parseBoolean, parseClock, parseDateTime, parseInteger } from './mspdi-values.ts';
import { MAX_HOLIDAYS, type PlanCalendar } from './plan.ts';
import { recordOf, recordsOf, type Shape, type XmlRecord } from './xml.ts';
import type { XmlOut } from './xml-out.ts';

const PERIOD: Shape = { fields: ['FromDate', 'ToDate'] };
const TIMES: Shape = { records: { WorkingTime: { fields: ['FromTime', 'ToTime'] } } };

/** What the reader keeps of Project/Calendars. */
export const CALENDARS_SHAPE: Shape = {
  records: {
    Calendar: {
      fields: ['UID', 'Name', 'BaseCalendarUID'],
      records: {
        WeekDays: {
          records: {
            WeekDay: {
              fields: ['DayType', 'DayWorking'],
              records: { TimePeriod: PERIOD, WorkingTimes: TIMES },
            },
          },
        },
        Exceptions: {
          records: {
            Exception: {
              fields: ['Name', 'Type', 'Period', 'DayWorking'],
              records: { TimePeriod: PERIOD },
            },
          },
        },
        WorkWeeks: { records: { WorkWeek: {} } },
      },
    },
  },
};

/** Monday to Friday: MS Project's weekdays where a calendar says nothing of a day. */
const DEFAULT_WORKING = new Set([1, 2, 3, 4, 5]);
/** The most exception days read, whatever their ranges (a hostile file may name centuries). */
const MAX_EXCEPTION_DAYS = 100_000;
const ISO_DAY_NAMES = [
  '',
  'Monday',
  'Tuesday',
  'Wednesday',
  'Thursday',
  'Friday',
  'Saturday',
  'Sunday',
];

/** ISO weekday (1 = Monday) of MSPDI's DayType (1 = Sunday … 7 = Saturday). */
const isoOfDayType = (dayType: number): number => (dayType === 1 ? 7 : dayType - 1);

/** The calendars of Project/Calendars by UID (the first of a UID). */
export function calendarsByUid(project: XmlRecord): Map<number, XmlRecord> {
  const byUid = new Map<number, XmlRecord>();
  for (const calendar of recordsOf(recordOf(project, 'Calendars'), 'Calendar')) {
    const uid = parseInteger(calendar.fields.UID ?? '');
    if (uid !== null && !byUid.has(uid)) byUid.set(uid, calendar);
  }
  return byUid;
}

/** A calendar and the base calendars it derives from, nearest first (a loop ends the chain). */
function chainOf(calendar: XmlRecord, byUid: Map<number, XmlRecord>): XmlRecord[] {
  const chain = [calendar];
  for (;;) {
    const base = byUid.get(
      parseInteger(chain[chain.length - 1]?.fields.BaseCalendarUID ?? '') ?? NaN,
    );
    if (base === undefined || chain.includes(base)) return chain;
    chain.push(base);
  }
}

/** Whether a calendar has anything of its own: weekdays, exceptions or work weeks. */
export function hasOwnTimes(calendar: XmlRecord): boolean {
  return calendar.records.some((r) => r.records.length > 0);
}

/**
 * The project calendar as a flow's (`byUid`: calendarsByUid's): `minutesPerDay` (the project's
 * MinutesPerDay, already checked) makes its hours a day. Null when the file has no calendar.
 */
export function readCalendar(
  project: XmlRecord,
  byUid: Map<number, XmlRecord>,
  minutesPerDay: number,
  findings: Findings,
): PlanCalendar | null {
  const named = byUid.get(parseInteger(project.fields.CalendarUID ?? '') ?? NaN);
  const calendar = named ?? byUid.values().next().value;
  if (calendar === undefined) return null;
  const chain = chainOf(calendar, byUid);
  const simplified = (message: string) => findings.warn('CALENDAR_SIMPLIFIED', message);

  const workingDays: number[] = [];
  /** The working weekdays of other hours than the project's, by their minutes. */
  const otherHours = new Map<number, string[]>();
  for (let dayType = 1; dayType <= 7; dayType++) {
    const iso = isoOfDayType(dayType);
    const day = chain
      .flatMap((c) => recordsOf(recordOf(c, 'WeekDays'), 'WeekDay'))
      .find((d) => parseInteger(d.fields.DayType ?? '') === dayType);
    const working = day
      ? parseBoolean(day.fields.DayWorking ?? '') === true
      : DEFAULT_WORKING.has(iso);
    if (!working) continue;
    workingDays.push(iso);
    const minutes = day ? workedMinutes(day) : null;
    if (minutes !== null && minutes !== minutesPerDay)
      otherHours.set(minutes, [...(otherHours.get(minutes) ?? []), ISO_DAY_NAMES[iso] ?? '']);
  }
  if (otherHours.size > 0) {
    const days = [...otherHours].map(
      ([minutes, names]) => `${names.join(', ')} ${names.length > 1 ? 'work' : 'works'} ${minutes}`,
    );
    simplified(
      `${days.join('; ')} minutes, not the project's ${minutesPerDay}: every working day here holds ${minutesPerDay / 60} hours`,
    );
  }
  workingDays.sort((a, b) => a - b);
  if (chain.some((c) => recordsOf(recordOf(c, 'WorkWeeks'), 'WorkWeek').length > 0))
    simplified(
      'Work weeks other than the default one are not kept: the default week holds all year',
    );
  return {
    workingDays,
    hoursPerDay: minutesPerDay / 60,
    holidays: holidaysOf(chain, new Set(workingDays), simplified),
  };
}

/** The minutes a weekday's working times add up to; null when it lists none. */
function workedMinutes(day: XmlRecord): number | null {
  const times = recordsOf(recordOf(day, 'WorkingTimes'), 'WorkingTime');
  if (times.length === 0) return null;
  let minutes = 0;
  for (const time of times) {
    const from = parseClock(time.fields.FromTime ?? '') ?? 0;
    const to = parseClock(time.fields.ToTime ?? '') ?? 0;
    // A period ending at 00:00:00 ends at midnight.
    minutes += (to <= from ? to + 1440 : to) - from;
  }
  return minutes;
}

/** A run of exception days, inclusive, and the exception's name. */
interface Run {
  first: number;
  last: number;
  name: string | undefined;
}

/** The run of days a TimePeriod names (a ToDate at 00:00 of a later day ends the day before). */
function runOf(record: XmlRecord, name: string | undefined): Run | null {
  const period = recordOf(record, 'TimePeriod');
  const from = parseDateTime(period?.fields.FromDate ?? '');
  const to = parseDateTime(period?.fields.ToDate ?? '');
  if (from === null || to === null) return null;
  const first = dayNumber(from.date) ?? 0;
  const last = (dayNumber(to.date) ?? 0) - (to.minutes === 0 && to.date > from.date ? 1 : 0);
  return last < first ? null : { first, last, name };
}

function holidaysOf(
  chain: XmlRecord[],
  working: Set<number>,
  simplified: (message: string) => void,
): PlanCalendar['holidays'] {
  const listed = chain.flatMap((c) => recordsOf(recordOf(c, 'WeekDays'), 'WeekDay'));
  const dayExceptions = listed.filter((d) => parseInteger(d.fields.DayType ?? '') === 0);
  const exceptions = chain.flatMap((c) => recordsOf(recordOf(c, 'Exceptions'), 'Exception'));
  // Where MS Project listed the exception days (every version does, recurring ones expanded),
  // they are the days; Exceptions then only name them.
  const expanded = dayExceptions.length > 0;
  const runs: Run[] = [];
  for (const record of expanded ? dayExceptions : exceptions) {
    const run = runOf(record, record.fields.Name || undefined);
    if (run === null) continue;
    const recurring =
      (parseInteger(record.fields.Type ?? '1') ?? 1) !== 1 ||
      (parseInteger(record.fields.Period ?? '1') ?? 1) > 1;
    if (parseBoolean(record.fields.DayWorking ?? '') === true) workingException(run, simplified);
    else if (!recurring) runs.push(run);
    else
      simplified(
        `The recurring exception "${record.fields.Name ?? ''}" is saved without its days: it is not kept`,
      );
  }
  let budget = MAX_EXCEPTION_DAYS;
  /** Calls `each` for the run's days a flow can hold (from 1970-01-01, day 0) on working weekdays. */
  const within = (run: Run, each: (day: number) => void): boolean => {
    for (let day = run.first; day <= run.last; day++) {
      if (--budget < 0) return false;
      if (day >= 0 && working.has(isoWeekday(day))) each(day);
    }
    return true;
  };
  const holidays = new Set<number>();
  const names = new Map<number, string>();
  let read = runs.every((run) => within(run, (day) => holidays.add(day)));
  for (const exception of exceptions) {
    const run = runOf(exception, exception.fields.Name || undefined);
    const name = run?.name;
    if (!read || run === null || name === undefined) continue;
    read = within(run, (day) => {
      if (!names.has(day)) names.set(day, name);
    });
  }
  if (!read) simplified(`Exceptions past ${MAX_EXCEPTION_DAYS} days are not read`);
  const days = [...holidays].sort((a, b) => a - b);
  if (days.length > MAX_HOLIDAYS)
    simplified(
      `The calendar has ${days.length} holidays; the first ${MAX_HOLIDAYS} are kept (${dateOf(days[MAX_HOLIDAYS - 1] ?? 0)} the last)`,
    );
  return days.slice(0, MAX_HOLIDAYS).map((day) => {
    const name = names.get(day);
    return name === undefined ? { date: dateOf(day) } : { date: dateOf(day), name };
  });
}

function workingException(run: Run, simplified: (message: string) => void): void {
  simplified(
    `Working time on ${dateOf(run.first)}${run.last > run.first ? ` to ${dateOf(run.last)}` : ''} is not kept: those days keep their weekday's hours`,
  );
}

/**
 * The working times of a day of `hoursPerDay`, as MS Project's standard calendar lays them: from
 * 08:00 with an hour's lunch at 12:00, or from midnight for days longer than 15 hours.
 */
export function workingPeriods(hoursPerDay: number): [number, number][] {
  const minutes = Math.round(hoursPerDay * 60);
  if (minutes <= 240) return [[480, 480 + minutes]];
  if (minutes <= 900)
    return [
      [480, 720],
      [780, 780 + minutes - 240],
    ];
  return [[0, minutes]];
}

/** The project calendar, UID 1, as MS Project writes a base calendar. */
export function writeCalendar(out: XmlOut, calendar: PlanCalendar): void {
  const periods = workingPeriods(calendar.hoursPerDay);
  out.open('Calendars').open('Calendar').leaf('UID', 1).leaf('Name', 'Standard');
  out.leaf('IsBaseCalendar', true).open('WeekDays');
  for (let dayType = 1; dayType <= 7; dayType++) {
    const working = calendar.workingDays.includes(isoOfDayType(dayType));
    out.open('WeekDay').leaf('DayType', dayType).leaf('DayWorking', working);
    if (working) {
      out.open('WorkingTimes');
      for (const [from, to] of periods)
        out
          .open('WorkingTime')
          .leaf('FromTime', clock(from))
          .leaf('ToTime', clock(to))
          .close('WorkingTime');
      out.close('WorkingTimes');
    }
    out.close('WeekDay');
  }
  // MS Project 2003 reads exceptions here; later versions read the Exceptions below (with names).
  for (const { date } of calendar.holidays) {
    out.open('WeekDay').leaf('DayType', 0).leaf('DayWorking', false);
    timePeriod(out, date).close('WeekDay');
  }
  out.close('WeekDays');
  if (calendar.holidays.length > 0) {
    out.open('Exceptions');
    for (const { date, name } of calendar.holidays) {
      out.open('Exception').leaf('EnteredByOccurrences', false);
      timePeriod(out, date).leaf('Occurrences', 1).leaf('Name', name).leaf('Type', 1);
      out.leaf('DayWorking', false).close('Exception');
    }
    out.close('Exceptions');
  }
  out.close('Calendar').close('Calendars');
}

function timePeriod(out: XmlOut, date: string): XmlOut {
  return out
    .open('TimePeriod')
    .leaf('FromDate', `${date}T00:00:00`)
    .leaf('ToDate', `${date}T23:59:00`)
    .close('TimePeriod');
}

/**
 * Working-day calendars: UTC dates, a set of ISO weekdays worked, hours in a working day, and
 * holidays. The engine works in integer working-day indexes from a schedule's start; these turn
 * dates into indexes and back by arithmetic over whole weeks and a binary search over the
 * holidays (never a walk day by day), for any date from 0001-01-01 to LAST_DAY.
 */
import { LAST_DAY } from '../contract/vocabulary.ts';

const DAY_MS = 86_400_000;
export const HOURS_PER_DAY = 8;
const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;
/** The first and last day a YYYY-MM-DD can name, as days since 1970-01-01. */
const FIRST_EPOCH_DAY = -719_162; // 0001-01-01
const LAST_EPOCH_DAY = Date.parse(`${LAST_DAY}T00:00:00Z`) / DAY_MS;
const FIRST_DAY_NAME = '0001-01-01';
/** Monday 1969-12-29, where the calendar's weeks are counted from (negative before it). */
const ORIGIN = -3;

/** A calendar as a flow or workspace sets it; `holidays` are YYYY-MM-DD dates, in any order. */
export interface CalendarSpec {
  /** ISO weekdays worked: 1 = Monday … 7 = Sunday, at least one. */
  readonly workingDays: readonly number[];
  /** Hours in a working day. */
  readonly hoursPerDay: number;
  readonly holidays: readonly string[];
}

/** Monday to Friday, 8 hours a day, no holidays: the calendar when none is set. */
export const DEFAULT_CALENDAR: CalendarSpec = Object.freeze({
  workingDays: Object.freeze([1, 2, 3, 4, 5]),
  hoursPerDay: HOURS_PER_DAY,
  holidays: Object.freeze([]),
});

/**
 * Working days a task lasts: max(1, ceil(hours / hoursPerDay)), 8 hours a day unless told
 * otherwise (a calendar's or a person's hours); unknown (null) or nonsense counts as 1.
 */
export function durationDays(hours: number | null, hoursPerDay = HOURS_PER_DAY): number {
  if (hours === null || !Number.isFinite(hours)) return 1;
  return Math.max(1, Math.ceil(hours / hoursPerDay));
}

/**
 * A calendar made ready for arithmetic. Working days are numbered from ORIGIN: a date's number
 * is the count of working days before it (from ORIGIN, negative before), so a working day's
 * number is its place in the sequence of working days, and the number of any date is that of
 * the first working day on or after it.
 */
export class WorkCalendar {
  readonly hoursPerDay: number;
  /** Working weekdays a week. */
  private readonly perWeek: number;
  /** before[r]: working weekdays among the first r days of a week (Monday first). */
  private readonly before = new Int32Array(8);
  /** The weekday (0 = Monday) of each working weekday of a week, in order. */
  private readonly weekday: Int32Array;
  /** Holidays on working weekdays, ascending and distinct: days since 1970-01-01. */
  private readonly holidays: Int32Array;
  /** The same holidays as their places among the working weekdays (weekdayCount). */
  private readonly holidayPlaces: Float64Array;

  constructor(spec: CalendarSpec) {
    const days = new Set(spec.workingDays);
    if (days.size === 0 || [...days].some((d) => !Number.isInteger(d) || d < 1 || d > 7))
      throw new RangeError(`workingDays must be ISO weekdays 1–7, at least one`);
    if (!(spec.hoursPerDay > 0 && Number.isFinite(spec.hoursPerDay)))
      throw new RangeError(`hoursPerDay must be a positive number, got ${spec.hoursPerDay}`);
    this.hoursPerDay = spec.hoursPerDay;
    const weekday: number[] = [];
    for (let r = 0; r < 7; r++) {
      if (days.has(r + 1)) weekday.push(r);
      this.before[r + 1] = weekday.length;
    }
    this.weekday = Int32Array.from(weekday);
    this.perWeek = weekday.length;
    const worked = [...new Set(spec.holidays.map(epochDay))]
      .filter((e) => days.has(weekdayOf(e) + 1))
      .sort((a, b) => a - b);
    this.holidays = Int32Array.from(worked);
    this.holidayPlaces = Float64Array.from(worked, (e) => this.weekdayCount(e));
  }

  /** Working days a task of `hours` lasts on this calendar (see durationDays). */
  durationDays(hours: number | null): number {
    return durationDays(hours, this.hoursPerDay);
  }

  isWorkingDay(date: string): boolean {
    const e = epochDay(date);
    return this.number(e + 1) > this.number(e);
  }

  /** The numbering of working days from a schedule that starts on `date`. */
  days(date: string): ScheduleDays {
    return new ScheduleDays(this, this.number(epochDay(date)));
  }

  /** Working weekdays (holidays counted in) from ORIGIN to the day before `e`. */
  private weekdayCount(e: number): number {
    const d = e - ORIGIN;
    const week = Math.floor(d / 7);
    return week * this.perWeek + (this.before[d - week * 7] ?? 0);
  }

  /** Working days from ORIGIN to the day before `e` (days since 1970-01-01). */
  number(e: number): number {
    // Holidays before e: the first at or after it is at this place.
    let lo = 0;
    let hi = this.holidays.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.holidays[mid] ?? 0) < e) lo = mid + 1;
      else hi = mid;
    }
    return this.weekdayCount(e) - lo;
  }

  /** The working day numbered `k` (days since 1970-01-01): `number`'s inverse on working days. */
  dayOf(k: number): number {
    // It is the working weekday at place k + j, j the holidays before it: the least j whose
    // holiday lies past place k + j (holidayPlaces[j] − j never falls as j rises).
    let lo = 0;
    let hi = this.holidays.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.holidayPlaces[mid] ?? 0) > k + mid) hi = mid;
      else lo = mid + 1;
    }
    const place = k + lo;
    const week = Math.floor(place / this.perWeek);
    return ORIGIN + week * 7 + (this.weekday[place - week * this.perWeek] ?? 0);
  }
}

/**
 * Working days numbered from a schedule's start: day 0 is the first working day on or after
 * the start date, day −1 the working day before it. Every answer is arithmetic and a binary
 * search; a date's name is made once per index asked for.
 */
export class ScheduleDays {
  private readonly names = new Map<number, string>();

  constructor(
    private readonly calendar: WorkCalendar,
    /** Day 0's number in the calendar. */
    private readonly zero: number,
  ) {}

  /** Day 0's date. */
  get start(): string {
    return this.date(0);
  }

  /** The index of the first working day on or after `date` (a start-no-earlier-than's least start). */
  onOrAfter(date: string): number {
    return this.calendar.number(epochDay(date)) - this.zero;
  }

  /** The index of the last working day on or before `date` (a finish-no-later-than's last day). */
  onOrBefore(date: string): number {
    return this.calendar.number(epochDay(date) + 1) - 1 - this.zero;
  }

  /** The date of working day `index`; one before 0001-01-01 or past LAST_DAY reads that day. */
  date(index: number): string {
    let name = this.names.get(index);
    if (name === undefined) {
      const e = this.calendar.dayOf(this.zero + index);
      name =
        e > LAST_EPOCH_DAY ? LAST_DAY : e < FIRST_EPOCH_DAY ? FIRST_DAY_NAME : dateOfEpochDay(e);
      this.names.set(index, name);
    }
    return name;
  }

  /** Whether working day `index` falls from 0001-01-01 to LAST_DAY. */
  fits(index: number): boolean {
    const e = this.calendar.dayOf(this.zero + index);
    return e >= FIRST_EPOCH_DAY && e <= LAST_EPOCH_DAY;
  }

  /**
   * The working days from `from` to `to` (dates, both included) as the indexes of the first and
   * the last, or null when none of those days is worked: a person's time off as taken days.
   */
  span(from: string, to: string): [first: number, last: number] | null {
    const first = this.onOrAfter(from);
    const last = this.onOrBefore(to);
    return first <= last ? [first, last] : null;
  }
}

/** Monday to Friday without holidays: the calendar of the functions below. */
const MONDAY_TO_FRIDAY = new WorkCalendar(DEFAULT_CALENDAR);

/** The date itself, or the following Monday when it falls on a weekend. */
export function startOfSchedule(date: string): string {
  return MONDAY_TO_FRIDAY.days(date).start;
}

/**
 * The working day `offset` working days after `start` (a working day); 0 gives start. A day
 * past LAST_DAY reads LAST_DAY (`fitsCalendar` tells whether it would).
 */
export function addWorkingDays(start: string, offset: number): string {
  return weekdaysFrom(start).date(checkedOffset(offset));
}

/**
 * addWorkingDays from one start, each day's date made once: laying thousands of tasks on the
 * calendar names far fewer distinct days, and making a date string is most of the cost.
 */
export function workingDayNames(start: string): (offset: number) => string {
  const days = weekdaysFrom(start);
  return (offset) => days.date(checkedOffset(offset));
}

/** Whether the working day `offset` after `start` is on or before LAST_DAY. */
export function fitsCalendar(start: string, offset: number): boolean {
  return weekdaysFrom(start).fits(checkedOffset(offset));
}

function checkedOffset(offset: number): number {
  if (!Number.isInteger(offset) || offset < 0)
    throw new RangeError(`Offset must be a non-negative integer, got ${offset}`);
  return offset;
}

/** Monday-to-Friday days numbered from `start`, which must be one. */
function weekdaysFrom(start: string): ScheduleDays {
  return MONDAY_TO_FRIDAY.days(workingDay(start));
}

/**
 * Working days from one working day to another (negative when `to` is earlier): the inverse
 * of addWorkingDays, so `workingDaysBetween(a, addWorkingDays(a, n))` is n.
 */
export function workingDaysBetween(from: string, to: string): number {
  return weekdaysFrom(from).onOrAfter(workingDay(to));
}

/** `date`, refused unless it is a Monday-to-Friday day. */
function workingDay(date: string): string {
  if (!MONDAY_TO_FRIDAY.isWorkingDay(date)) throw new RangeError(`${date} is not a working day`);
  return date;
}

export function isoDate(d: Date): string {
  return d.toISOString().slice(0, 10);
}

/** The weekday of a day since 1970-01-01, 0 = Monday … 6 = Sunday. */
function weekdayOf(e: number): number {
  return (((e - ORIGIN) % 7) + 7) % 7;
}

function dateOfEpochDay(e: number): string {
  return isoDate(new Date(e * DAY_MS));
}

/** Days since 1970-01-01 of a strict YYYY-MM-DD date (rejects 2024-02-30). */
function epochDay(date: string): number {
  const m = DATE_RE.exec(date);
  if (m === null) throw new RangeError(`Not a YYYY-MM-DD date: ${date}`);
  // Not Date.UTC(y, …): it reads years 0–99 as 1900–1999.
  const ms = new Date(0).setUTCFullYear(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  if (isoDate(new Date(ms)) !== date) throw new RangeError(`Not a valid date: ${date}`);
  return Math.round(ms / DAY_MS);
}

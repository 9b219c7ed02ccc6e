/**
 * Working-day calendar: UTC dates, Monday–Friday working, no holidays. CPM works in
 * integer working-day offsets; these turn offsets into YYYY-MM-DD dates in O(1).
 */
import { LAST_DAY } from '../contract/vocabulary.ts';

const DAY_MS = 86_400_000;
export const HOURS_PER_DAY = 8;
const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;
const LAST_MS = Date.parse(`${LAST_DAY}T00:00:00Z`);

/**
 * Working days a task lasts: max(1, ceil(hours / hoursPerDay)), 8 hours a day unless its
 * person works others (levelling, CONTRACT §5); unknown (null) or nonsense counts as 1.
 */
export function durationDays(hours: number | null, hoursPerDay = HOURS_PER_DAY): number {
  if (hours === null || !Number.isFinite(hours)) return 1;
  return Math.max(1, Math.ceil(hours / hoursPerDay));
}

/** The date itself, or the following Monday when it falls on a weekend. */
export function startOfSchedule(date: string): string {
  const ms = parseDate(date);
  const dow = new Date(ms).getUTCDay();
  const shift = dow === 6 ? 2 : dow === 0 ? 1 : 0;
  return isoDate(new Date(ms + shift * DAY_MS));
}

/**
 * The working day `offset` working days after `start` (a working day); 0 gives start. A day
 * past LAST_DAY reads LAST_DAY (`fitsCalendar` tells whether it would).
 */
export function addWorkingDays(start: string, offset: number): string {
  const ms = workingDayMs(start, offset);
  return ms > LAST_MS ? LAST_DAY : isoDate(new Date(ms));
}

/**
 * addWorkingDays from one start, each day's date made once: laying thousands of tasks on the
 * calendar names far fewer distinct days, and making a date string is most of the cost.
 */
export function workingDayNames(start: string): (offset: number) => string {
  const names = new Map<number, string>();
  return (offset) => {
    let name = names.get(offset);
    if (name === undefined) names.set(offset, (name = addWorkingDays(start, offset)));
    return name;
  };
}

/** Whether the working day `offset` after `start` is on or before LAST_DAY. */
export function fitsCalendar(start: string, offset: number): boolean {
  return workingDayMs(start, offset) <= LAST_MS;
}

function workingDayMs(start: string, offset: number): number {
  if (!Number.isInteger(offset) || offset < 0)
    throw new RangeError(`Offset must be a non-negative integer, got ${offset}`);
  const ms = parseDate(start);
  const weekday = (new Date(ms).getUTCDay() + 6) % 7; // Monday = 0 … Sunday = 6
  if (weekday > 4) throw new RangeError(`${start} is not a working day`);
  const rest = offset % 5;
  // Whole weeks are 7 calendar days; the remainder crosses one weekend if it passes Friday.
  const days = Math.floor(offset / 5) * 7 + rest + (weekday + rest > 4 ? 2 : 0);
  return ms + days * DAY_MS;
}

/**
 * Working days from one working day to another (negative when `to` is earlier): the inverse
 * of addWorkingDays, so `workingDaysBetween(a, addWorkingDays(a, n))` is n.
 */
export function workingDaysBetween(from: string, to: string): number {
  return workingDayNumber(to) - workingDayNumber(from);
}

/** A working day's count of working days since Monday 1969-12-29 (negative before it). */
function workingDayNumber(date: string): number {
  // 1970-01-01, day 0, was a Thursday: three days after that Monday.
  const days = Math.round(parseDate(date) / DAY_MS) + 3;
  const week = Math.floor(days / 7);
  const weekday = days - week * 7;
  if (weekday > 4) throw new RangeError(`${date} is not a working day`);
  return week * 5 + weekday;
}

export function isoDate(d: Date): string {
  return d.toISOString().slice(0, 10);
}

/** Milliseconds of UTC midnight of a strict YYYY-MM-DD date (rejects 2024-02-30). */
function parseDate(date: string): number {
  const m = DATE_RE.exec(date);
  if (m === null) throw new RangeError(`Not a YYYY-MM-DD date: ${date}`);
  // Not Date.UTC(y, …): it reads years 0–99 as 1900–1999.
  const ms = new Date(0).setUTCFullYear(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  if (isoDate(new Date(ms)) !== date) throw new RangeError(`Not a valid date: ${date}`);
  return ms;
}

/**
 * Calendar days as the formats name them: YYYY-MM-DD in UTC, counted as days since 1970-01-01
 * for arithmetic (a file's date-times carry no zone: they are read as UTC).
 */

const DAY_MS = 86_400_000;
const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;
/** The days an imported date may name, as a flow's dates do. */
const FIRST_DATE = '1970-01-01';
const LAST_DATE = '9999-12-31';

/** The day number of a real YYYY-MM-DD date (2024-02-30 is not one), or null. */
export function dayNumber(date: string): number | null {
  const m = DATE_RE.exec(date);
  if (m === null) return null;
  // Not Date.UTC(y, …): it reads years 0–99 as 1900–1999.
  const ms = new Date(0).setUTCFullYear(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  return dateOf(ms / DAY_MS) === date ? ms / DAY_MS : null;
}

/** The YYYY-MM-DD of a day number. */
export function dateOf(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10);
}

/** ISO weekday of a day number: 1 = Monday … 7 = Sunday (1970-01-01 was a Thursday). */
export function isoWeekday(day: number): number {
  return ((((day + 3) % 7) + 7) % 7) + 1;
}

/** Whether a YYYY-MM-DD is a real date a flow may hold (FIRST_DATE … LAST_DATE). */
export function isFlowDate(date: string): boolean {
  return dayNumber(date) !== null && date >= FIRST_DATE && date <= LAST_DATE;
}

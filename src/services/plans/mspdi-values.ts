/**
 * MSPDI's value formats: xsd:boolean, integers, xsd:dateTime without a zone (MS Project writes
 * local times; they are read and written here as UTC) and xsd:duration in working time
 * ("PT16H0M0S", hours, minutes and seconds; a `D` counts as a working day). Each reader gives
 * null for text that is not of its format, and the MSPDI reader refuses it with its line.
 */
import { dateOf, dayNumber } from './days.ts';

/** xsd:boolean: 1/true or 0/false; null for anything else. */
export function parseBoolean(text: string): boolean | null {
  if (text === '1' || text === 'true') return true;
  if (text === '0' || text === 'false') return false;
  return null;
}

export function parseInteger(text: string): number | null {
  return /^[+-]?\d{1,15}$/.test(text) ? Number(text) : null;
}

/** A non-negative number (a percentage, hours): digits with an optional fraction. */
export function parseDecimal(text: string): number | null {
  return /^\d{1,15}(?:\.\d{1,15})?$/.test(text) ? Number(text) : null;
}

/** A date-time as a file writes it: the day and minute it names, and that instant in UTC. */
export interface Moment {
  /** YYYY-MM-DD as written. */
  readonly date: string;
  /** Minutes into that day, as written (08:00 is 480). */
  readonly minutes: number;
  /** The instant as an ISO 8601 date-time in UTC (a time without a zone read as UTC). */
  readonly iso: string;
}

const DATE_TIME_RE =
  /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(Z|[+-]\d{2}:\d{2})?$/;

export function parseDateTime(text: string): Moment | null {
  const m = DATE_TIME_RE.exec(text);
  if (m === null) return null;
  const date = m[1] ?? '';
  const [hours, minutes, seconds] = [m[2], m[3], m[4]].map((n) => Number(n ?? 0)) as [
    number,
    number,
    number,
  ];
  if (dayNumber(date) === null || hours > 23 || minutes > 59 || seconds > 59) return null;
  const at = `${date}T${m[2]}:${m[3]}:${m[4] ?? '00'}${m[5] ?? 'Z'}`;
  const ms = Date.parse(at);
  return { date, minutes: hours * 60 + minutes, iso: new Date(ms).toISOString() };
}

/** An instant (ISO 8601) as MSPDI writes it: its UTC time to the second, without a zone. */
export function dateTimeText(iso: string): string {
  return new Date(iso).toISOString().slice(0, 19);
}

/** A day at a time of day (minutes, 0–1440) as MSPDI writes it: 1440 is the next day's 00:00. */
export function momentText(date: string, minutes: number): string {
  return minutes < 1440
    ? `${date}T${clock(minutes)}`
    : `${dateOf((dayNumber(date) ?? 0) + 1)}T00:00:00`;
}

/** Minutes into a day as xsd:time, HH:MM:SS (1440, the day's end, as 00:00:00). */
export function clock(minutes: number): string {
  const m = minutes % 1440;
  return `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}:00`;
}

/** xsd:time (HH:MM or HH:MM:SS) as minutes into the day; null for anything else. */
export function parseClock(text: string): number | null {
  const m = /^(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?$/.exec(text);
  if (m === null || Number(m[1]) > 24 || Number(m[2]) > 59) return null;
  return Number(m[1]) * 60 + Number(m[2]);
}

const NUMBER = '(\\d{1,9}(?:\\.\\d{1,9})?)';
const DURATION_RE = new RegExp(
  `^P(?:${NUMBER}D)?(?:T(?:${NUMBER}H)?(?:${NUMBER}M)?(?:${NUMBER}S)?)?$`,
);

/**
 * An xsd:duration of working time, as minutes; a day (`D`) is `minutesPerDay`. Null for text
 * that is no such duration (negative ones, years and months, an empty "P" or "PT").
 */
export function parseDuration(text: string, minutesPerDay: number): number | null {
  const m = DURATION_RE.exec(text);
  if (m === null || text === 'P' || text.endsWith('T')) return null;
  const [days, hours, minutes, seconds] = [m[1], m[2], m[3], m[4]].map((n) => Number(n ?? 0)) as [
    number,
    number,
    number,
    number,
  ];
  return days * minutesPerDay + hours * 60 + minutes + seconds / 60;
}

/** Minutes as MS Project writes a duration: "PT16H0M0S" (to the second). */
export function durationText(minutes: number): string {
  const total = Math.round(minutes * 60);
  return `PT${Math.floor(total / 3600)}H${Math.floor((total % 3600) / 60)}M${total % 60}S`;
}

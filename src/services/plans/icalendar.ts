/**
 * A flow's schedule as an iCalendar feed (RFC 5545) a calendar app subscribes to: one all-day
 * event per open task over its scheduled working days (a milestone its one day), summary = the
 * task's name and nothing of people. DTSTART;VALUE=DATE is the first day, DTEND the calendar day
 * after the last (exclusive), so an event spans the weekends within it. Each event's UID comes
 * from its task's id and stays across changes; SEQUENCE and LAST-MODIFIED (DTSTAMP the same, as
 * RFC 5545 has it for a feed without METHOD) let a client update the event it has rather than
 * add another. The same input writes the same bytes, so a feed's ETag holds until the flow moves.
 *
 * Written here rather than with ical-generator: its latest versions need Node 22, and it takes
 * dates as Date objects laid out through a time zone, where an all-day event is a calendar date.
 */
import { dateOf, dayNumber } from './days.ts';

export interface FeedEvent {
  readonly taskId: string;
  readonly name: string;
  /** The first and last working day the task is scheduled on (YYYY-MM-DD, inclusive). */
  readonly first: string;
  readonly last: string;
  /** Steps up whenever the event may have changed (a flow's version does). */
  readonly sequence: number;
  /** ISO 8601 date-time of that change. */
  readonly lastModified: string;
}

export interface Feed {
  /** The calendar's name, as apps show it (X-WR-CALNAME). */
  readonly name: string;
  readonly events: readonly FeedEvent[];
}

/** How often a client should fetch the feed again (RFC 7986's REFRESH-INTERVAL). */
const REFRESH = 'PT1H';

export function writeICalendar(feed: Feed): string {
  const lines = [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//flowplan//flowplan//EN',
    'CALSCALE:GREGORIAN',
    `X-WR-CALNAME:${escapeText(feed.name)}`,
    `REFRESH-INTERVAL;VALUE=DURATION:${REFRESH}`,
    `X-PUBLISHED-TTL:${REFRESH}`,
  ];
  for (const event of feed.events) {
    const stamp = utcStamp(event.lastModified);
    lines.push(
      'BEGIN:VEVENT',
      `UID:${event.taskId}@flowplan`,
      `DTSTAMP:${stamp}`,
      `LAST-MODIFIED:${stamp}`,
      `SEQUENCE:${event.sequence}`,
      `DTSTART;VALUE=DATE:${compact(event.first)}`,
      `DTEND;VALUE=DATE:${compact(dateOf((dayNumber(event.last) ?? 0) + 1))}`,
      `SUMMARY:${escapeText(event.name)}`,
      // A plan's days are not busy time: the events do not block anyone's free/busy.
      'TRANSP:TRANSPARENT',
      'END:VEVENT',
    );
  }
  lines.push('END:VCALENDAR');
  return lines.map((line) => `${fold(line)}\r\n`).join('');
}

/** TEXT as RFC 5545 §3.3.11 escapes it; other control characters (not allowed) become spaces. */
export function escapeText(text: string): string {
  return text
    .replace(/[\\;,]/g, (c) => `\\${c}`)
    .replace(/\r\n|\r|\n/g, '\\n')
    .replace(/[\u0000-\u0008\u000A-\u001F\u007F]/g, ' ');
}

const compact = (date: string) => date.replace(/-/g, '');
const utcStamp = (iso: string) =>
  new Date(iso)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');

/**
 * A content line folded at 75 octets (RFC 5545 §3.1): each continuation starts with a space, and
 * no UTF-8 character is split between lines.
 */
export function fold(line: string): string {
  if (Buffer.byteLength(line) <= 75) return line;
  const parts: string[] = [];
  let part = '';
  let octets = 0;
  for (const char of line) {
    const size = Buffer.byteLength(char);
    // The first line holds 75 octets; each after it a space and 74.
    if (octets + size > (parts.length === 0 ? 75 : 74)) {
      parts.push(part);
      part = '';
      octets = 0;
    }
    part += char;
    octets += size;
  }
  parts.push(part);
  return parts.join('\r\n ');
}

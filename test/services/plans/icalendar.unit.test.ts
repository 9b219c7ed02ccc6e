/**
 * Issue 54, item 6: the calendar feed, parsed by a real iCalendar parser (ical.js), never by
 * matching strings: one all-day event per task over its days (DTSTART;VALUE=DATE the first,
 * DTEND the day after the last), UIDs from task ids that stay as the flow changes, SEQUENCE and
 * LAST-MODIFIED, TEXT escaped, lines folded at 75 octets without splitting a UTF-8 character,
 * CRLF line ends, nothing of people, and the same bytes for the same flow.
 */
import ICAL from 'ical.js';
import fc from 'fast-check';
import assert from 'node:assert/strict';
import t from 'tap';
import {
  escapeText,
  fold,
  writeICalendar,
  type Feed,
  type FeedEvent,
} from '../../../src/services/plans/icalendar.ts';
import { nameArb } from './arbitraries.ts';

const event = (more: Partial<FeedEvent> = {}): FeedEvent => ({
  taskId: 'tsk_1',
  name: 'Design',
  first: '2024-01-08',
  last: '2024-01-10',
  sequence: 3,
  lastModified: '2024-01-05T10:20:30.456Z',
  ...more,
});

// An X- property's value is TEXT unless it says otherwise (RFC 5545 §3.8.8.2); ical.js reads
// one it does not know as unknown, unescaped: told so here, it reads X-WR-CALNAME as apps do.
(ICAL.design.icalendar.property as Record<string, { defaultType: string }>)['x-wr-calname'] = {
  defaultType: 'text',
};

/** The feed as ical.js reads it. */
function parsed(feed: Feed) {
  const calendar = new ICAL.Component(ICAL.parse(writeICalendar(feed)));
  return {
    calendar,
    events: calendar.getAllSubcomponents('vevent').map((component) => {
      const e = new ICAL.Event(component);
      return {
        uid: e.uid,
        summary: e.summary,
        start: e.startDate.toString(),
        startIsDate: e.startDate.isDate,
        end: e.endDate.toString(),
        sequence: e.sequence,
        lastModified: String(component.getFirstPropertyValue('last-modified')),
        stamp: String(component.getFirstPropertyValue('dtstamp')),
        transparency: component.getFirstPropertyValue('transp'),
        properties: component.getAllProperties().map((p) => p.name),
      };
    }),
  };
}

t.test(
  'all-day events over each task’s days, the end exclusive, spanning the weekend within',
  async (t) => {
    const feed: Feed = {
      name: 'Launch, phase 1; "beta"',
      events: [
        event(),
        // Thursday to Tuesday: the event spans the weekend between.
        event({
          taskId: 'tsk_2',
          name: 'Build',
          first: '2024-01-11',
          last: '2024-01-16',
          sequence: 0,
        }),
        // A milestone: its one day.
        event({ taskId: 'tsk_3', name: 'Ship', first: '2024-01-31', last: '2024-01-31' }),
        event({ taskId: 'tsk_4', name: 'New year', first: '2024-12-30', last: '2024-12-31' }),
      ],
    };
    const { calendar, events } = parsed(feed);
    t.equal(calendar.getFirstPropertyValue('version'), '2.0');
    t.equal(calendar.getFirstPropertyValue('prodid'), '-//flowplan//flowplan//EN');
    t.equal(calendar.getFirstPropertyValue('x-wr-calname'), 'Launch, phase 1; "beta"');
    t.equal(String(calendar.getFirstPropertyValue('refresh-interval')), 'PT1H');
    t.strictSame(
      events.map((e) => [e.uid, e.summary, e.start, e.end, e.startIsDate, e.sequence]),
      [
        ['tsk_1@flowplan', 'Design', '2024-01-08', '2024-01-11', true, 3],
        ['tsk_2@flowplan', 'Build', '2024-01-11', '2024-01-17', true, 0],
        ['tsk_3@flowplan', 'Ship', '2024-01-31', '2024-02-01', true, 3],
        ['tsk_4@flowplan', 'New year', '2024-12-30', '2025-01-01', true, 3],
      ],
    );
    t.strictSame(
      [events[0]?.lastModified, events[0]?.stamp, events[0]?.transparency],
      ['2024-01-05T10:20:30Z', '2024-01-05T10:20:30Z', 'TRANSPARENT'],
      'LAST-MODIFIED and DTSTAMP the change’s time, in UTC',
    );
    t.strictSame(
      events[0]?.properties,
      ['uid', 'dtstamp', 'last-modified', 'sequence', 'dtstart', 'dtend', 'summary', 'transp'],
      'nothing of people: no organizer, attendee, contact or description',
    );
    t.strictSame(
      parsed({ name: 'Empty', events: [] }).events,
      [],
      'no open task: a calendar of no event',
    );
  },
);

t.test(
  'a task keeps its UID as the flow changes; its SEQUENCE rises; the same flow writes the same bytes',
  async (t) => {
    const before = writeICalendar({ name: 'F', events: [event(), event({ taskId: 'tsk_2' })] });
    t.equal(
      writeICalendar({ name: 'F', events: [event(), event({ taskId: 'tsk_2' })] }),
      before,
      'the same bytes',
    );
    const after = parsed({
      name: 'F',
      events: [
        event({ taskId: 'tsk_2', first: '2024-02-01', last: '2024-02-02', sequence: 4 }),
        event({ sequence: 4 }),
      ],
    }).events;
    t.strictSame(
      after.map((e) => [e.uid, e.sequence, e.start]),
      [
        ['tsk_2@flowplan', 4, '2024-02-01'],
        ['tsk_1@flowplan', 4, '2024-01-08'],
      ],
    );
  },
);

t.test('TEXT is escaped and lines are folded, CRLF throughout', async (t) => {
  const name = 'Review; sign-off, \\ legal\nand "finance"\r\n\u0001done';
  t.equal(escapeText(name), 'Review\\; sign-off\\, \\\\ legal\\nand "finance"\\n done');
  const long = `${'Ü'.repeat(30)} ${'🚀'.repeat(30)} ${'x'.repeat(100)}`;
  const text = writeICalendar({ name: 'F', events: [event({ name }), event({ name: long })] });
  t.ok(text.endsWith('END:VCALENDAR\r\n'));
  t.notOk(/[^\r]\n/.test(text), 'every line ends in CRLF');
  for (const line of text.split('\r\n'))
    t.ok(Buffer.byteLength(line) <= 75, `≤ 75 octets: ${line.slice(0, 20)}`);
  t.notOk(text.includes('\uFFFD'));
  const { events } = parsed({ name: 'F', events: [event({ name }), event({ name: long })] });
  t.equal(
    events[0]?.summary,
    'Review; sign-off, \\ legal\nand "finance"\n done',
    'read back as written',
  );
  t.equal(events[1]?.summary, long, 'folded lines unfold to the name');
});

t.test(
  'folding: at 75 octets, continuations of 74 after their space, never inside a character',
  async (t) => {
    t.equal(fold('x'.repeat(75)), 'x'.repeat(75), '75 octets fit');
    t.equal(fold('x'.repeat(76)), `${'x'.repeat(75)}\r\n x`);
    t.equal(fold('x'.repeat(75 + 74 + 1)), `${'x'.repeat(75)}\r\n ${'x'.repeat(74)}\r\n x`);
    // 'é' is two octets: 37 of them are 74, the 38th would make 76.
    t.equal(fold(`${'é'.repeat(38)}`), `${'é'.repeat(37)}\r\n é`);
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 300 }), (text) => {
        const folded = fold(text);
        const lines = folded.split('\r\n');
        assert.equal(lines.map((l, i) => (i === 0 ? l : l.slice(1))).join(''), text);
        assert.ok(
          lines.every((l, i) => Buffer.byteLength(l) <= 75 && (i === 0 || l.startsWith(' '))),
        );
        assert.ok(!lines.join('').includes('\uFFFD') || text.includes('\uFFFD'));
      }),
    );
    fc.assert(
      fc.property(nameArb(200), (name) => {
        const [e] = parsed({ name: 'F', events: [event({ name })] }).events;
        assert.equal(e?.summary, name);
      }),
      { numRuns: 100 },
    );
    t.pass('any text folds and unfolds; any name reads back through ical.js');
  },
);

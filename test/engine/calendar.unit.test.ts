import t from 'tap';
import fc from 'fast-check';
import assert from 'node:assert/strict';
import {
  addWorkingDays,
  durationDays,
  isoDate,
  startOfSchedule,
  workingDayNames,
  workingDaysBetween,
} from '../../src/engine/calendar.ts';

// Naive counterparts: walk the calendar one day at a time.
const DAY = 86_400_000;
const isWeekend = (ms: number): boolean => [0, 6].includes(new Date(ms).getUTCDay());
const dayArb = fc
  .integer({ min: Date.UTC(1990, 0, 1) / DAY, max: Date.UTC(2100, 0, 1) / DAY })
  .map((d) => d * DAY);

t.test('startOfSchedule is the first working day on or after the date', async (t) => {
  fc.assert(
    fc.property(dayArb, (ms) => {
      let d = ms;
      while (isWeekend(d)) d += DAY;
      assert.equal(startOfSchedule(isoDate(new Date(ms))), isoDate(new Date(d)));
    }),
    { numRuns: 300 },
  );
  t.equal(startOfSchedule('2024-06-08'), '2024-06-10', 'Saturday -> Monday');
  t.equal(startOfSchedule('2024-06-09'), '2024-06-10', 'Sunday -> Monday');
  t.equal(startOfSchedule('2024-06-11'), '2024-06-11', 'Tuesday stays');
});

t.test('addWorkingDays equals stepping over weekends day by day', async (t) => {
  fc.assert(
    fc.property(dayArb, fc.nat(400), (ms, offset) => {
      let d = ms;
      while (isWeekend(d)) d += DAY;
      const start = isoDate(new Date(d));
      for (let left = offset; left > 0;) {
        d += DAY;
        if (!isWeekend(d)) left--;
      }
      assert.equal(addWorkingDays(start, offset), isoDate(new Date(d)));
    }),
    { numRuns: 300 },
  );
  t.equal(addWorkingDays('2024-06-07', 1), '2024-06-10', 'Friday + 1 -> Monday');
  t.equal(addWorkingDays('2024-02-28', 2), '2024-03-01', 'leap day counted');
  t.throws(() => addWorkingDays('2024-06-08', 0), RangeError, 'start on a weekend');
  t.throws(() => addWorkingDays('2024-06-10', -1), RangeError);
  t.throws(() => addWorkingDays('2024-02-30', 0), RangeError, 'impossible date');
});

t.test('workingDaysBetween undoes addWorkingDays, either way round', async (t) => {
  fc.assert(
    fc.property(dayArb, fc.nat(400), (ms, offset) => {
      const start = startOfSchedule(isoDate(new Date(ms)));
      const end = addWorkingDays(start, offset);
      assert.equal(workingDaysBetween(start, end), offset);
      assert.equal(workingDaysBetween(end, start), 0 - offset);
    }),
    { numRuns: 300 },
  );
  t.equal(workingDaysBetween('2024-06-07', '2024-06-10'), 1, 'Friday to Monday');
  t.equal(workingDaysBetween('1969-12-26', '1970-01-05'), 6, 'across day 0');
  t.equal(workingDaysBetween('0001-01-08', '0001-01-08'), 0, 'year 1');
  t.throws(() => workingDaysBetween('2024-06-08', '2024-06-10'), RangeError, 'from a weekend');
});

t.test('durationDays: whole 8-hour days, at least one', async (t) => {
  fc.assert(
    fc.property(fc.option(fc.double({ min: 0, max: 1000, noNaN: true })), (hours) => {
      let days = 1;
      if (hours !== null) while (days * 8 < hours) days++;
      assert.equal(durationDays(hours), days);
    }),
    { numRuns: 300 },
  );
  t.equal(durationDays(null), 1);
  t.equal(durationDays(8), 1);
  t.equal(durationDays(8.5), 2);
  t.equal(durationDays(0), 1);
});

t.test("durationDays at a person's hours a day: whole days of them, at least one", async (t) => {
  const quarterHours = fc.integer({ min: 1, max: 96 }).map((q) => q / 4);
  fc.assert(
    fc.property(fc.double({ min: 0, max: 1000, noNaN: true }), quarterHours, (hours, perDay) => {
      let days = 1;
      while (days * perDay < hours) days++;
      assert.equal(durationDays(hours, perDay), days);
    }),
    { numRuns: 300 },
  );
  t.equal(durationDays(16, 4), 4, '4 hours a day doubles an 8-hour day');
  t.equal(durationDays(15, 7.5), 2);
  t.equal(durationDays(null, 4), 1, 'no estimate: one day whatever the hours');
});

t.test('workingDayNames names each day as addWorkingDays does', async (t) => {
  fc.assert(
    fc.property(dayArb, fc.array(fc.nat(400), { maxLength: 30 }), (ms, offsets) => {
      const start = startOfSchedule(isoDate(new Date(ms)));
      const day = workingDayNames(start);
      for (const offset of [...offsets, ...offsets])
        assert.equal(day(offset), addWorkingDays(start, offset));
    }),
    { numRuns: 200 },
  );
  t.pass('asked twice, the same name');
});

t.test(
  'years 0–99 are those years, not 1900–1999; days past 9999-12-31 read 9999-12-31 (issue 29, item 3)',
  async (t) => {
    t.equal(
      startOfSchedule('0093-01-28'),
      '0093-01-28',
      'a Wednesday of year 93 (Date.UTC would read 1993, a Thursday, and throw)',
    );
    t.equal(startOfSchedule('0001-01-06'), '0001-01-08', 'a Saturday of year 1 moves to Monday');
    t.equal(addWorkingDays('0099-12-31', 1), '0100-01-01', 'across the year 99/100 boundary');
    t.equal(addWorkingDays('9999-12-30', 1), '9999-12-31');
    t.equal(
      addWorkingDays('9999-12-31', 1),
      '9999-12-31',
      'past the last day a YYYY-MM-DD can name: the last day',
    );
    t.equal(addWorkingDays('2026-01-05', 1e9), '9999-12-31', 'even far past it');
  },
);

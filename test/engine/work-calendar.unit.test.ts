/**
 * Working-day calendars with any working weekdays and holidays, against a walk one day at a time:
 * a date's index from a schedule's start, either way round, an index's date, spans of time off;
 * the first and last days a date can name; durations by the calendar's hours.
 */
import t from 'tap';
import fc from 'fast-check';
import assert from 'node:assert/strict';
import {
  DEFAULT_CALENDAR,
  fitsCalendar,
  isoDate,
  WorkCalendar,
  type CalendarSpec,
} from '../../src/engine/calendar.ts';

const DAY = 86_400_000;
const dateOf = (ms: number) => isoDate(new Date(ms));
/** ISO weekday (1 = Monday … 7 = Sunday) of a UTC midnight. */
const isoWeekday = (ms: number) => ((new Date(ms).getUTCDay() + 6) % 7) + 1;

/** The walk: whether a day is worked, and indexes counted one day at a time from the start. */
function walker(spec: CalendarSpec, startMs: number) {
  const holidays = new Set(spec.holidays);
  const worked = (ms: number) =>
    spec.workingDays.includes(isoWeekday(ms)) && !holidays.has(dateOf(ms));
  let zero = startMs;
  while (!worked(zero)) zero += DAY;
  /** Working days in [zero, ms) (negative: in [ms, zero)): the first working day on or after ms's index. */
  const onOrAfter = (ms: number) => {
    let count = 0;
    if (ms >= zero) for (let d = zero; d < ms; d += DAY) count += worked(d) ? 1 : 0;
    else for (let d = ms; d < zero; d += DAY) count -= worked(d) ? 1 : 0;
    return count;
  };
  const date = (index: number) => {
    let d = zero;
    for (let left = index; left > 0;) {
      d += DAY;
      if (worked(d)) left--;
    }
    for (let left = index; left < 0;) {
      d -= DAY;
      if (worked(d)) left++;
    }
    return dateOf(d);
  };
  return { worked, zero, onOrAfter, onOrBefore: (ms: number) => onOrAfter(ms + DAY) - 1, date };
}

const base = Date.UTC(2024, 0, 1);
const within = (days: number) => fc.integer({ min: -days, max: days }).map((d) => base + d * DAY);
const calendarArb: fc.Arbitrary<CalendarSpec> = fc.record({
  workingDays: fc.uniqueArray(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 7 }),
  hoursPerDay: fc.integer({ min: 1, max: 24 }),
  holidays: fc.uniqueArray(within(400).map(dateOf), { maxLength: 60 }),
});

t.test('indexes and dates equal a walk one day at a time', async (t) => {
  fc.assert(
    fc.property(
      calendarArb,
      within(300),
      fc.array(within(500), { maxLength: 8 }),
      fc.array(fc.integer({ min: -200, max: 200 }), { maxLength: 8 }),
      (spec, startMs, dates, indexes) => {
        const walk = walker(spec, startMs);
        const days = new WorkCalendar(spec).days(dateOf(startMs));
        assert.equal(
          days.start,
          dateOf(walk.zero),
          'day 0: the first working day on or after the start',
        );
        for (const ms of dates) {
          const date = dateOf(ms);
          assert.equal(days.onOrAfter(date), walk.onOrAfter(ms), `onOrAfter ${date}`);
          assert.equal(days.onOrBefore(date), walk.onOrBefore(ms), `onOrBefore ${date}`);
          assert.equal(new WorkCalendar(spec).isWorkingDay(date), walk.worked(ms));
        }
        for (const index of indexes) {
          const date = days.date(index);
          assert.equal(date, walk.date(index), `date of ${index}`);
          assert.equal(days.onOrAfter(date), index, 'and back, from after');
          assert.equal(days.onOrBefore(date), index, 'and back, from before');
          assert.ok(days.fits(index));
        }
      },
    ),
    { numRuns: 400 },
  );
  t.pass('400 calendars');
});

t.test('time off as taken days: the working days of a period, or none', async (t) => {
  const spec: CalendarSpec = {
    workingDays: [1, 2, 3, 4, 5],
    hoursPerDay: 8,
    holidays: ['2024-06-12'],
  };
  const days = new WorkCalendar(spec).days('2024-06-10'); // Monday: day 0
  // Mon 10 = 0, Tue 11 = 1, Wed 12 a holiday, Thu 13 = 2, Fri 14 = 3; Mon 17 = 4.
  t.strictSame(
    days.span('2024-06-11', '2024-06-14'),
    [1, 3],
    'Tuesday to Friday: days 1–3, the holiday skipped',
  );
  t.strictSame(days.span('2024-06-14', '2024-06-17'), [3, 4], 'over a weekend: Friday and Monday');
  t.equal(days.span('2024-06-15', '2024-06-16'), null, 'a weekend: nothing taken');
  t.equal(days.span('2024-06-12', '2024-06-12'), null, 'the holiday alone: nothing taken');
  t.strictSame(days.span('2024-06-03', '2024-06-07'), [-5, -1], 'the week before: days −5 to −1');
});

t.test('a Saturday-working calendar and a Sunday-only one', async (t) => {
  const six = new WorkCalendar({ workingDays: [1, 2, 3, 4, 5, 6], hoursPerDay: 8, holidays: [] });
  const days = six.days('2024-06-08'); // a Saturday, worked: day 0
  t.equal(days.start, '2024-06-08');
  t.equal(days.date(1), '2024-06-10', 'Sunday is not worked: day 1 is Monday');
  t.equal(days.date(6), '2024-06-15', 'six days a week: the next Saturday is day 6');
  t.equal(days.date(-1), '2024-06-07', 'day −1: the Friday before');
  const sunday = new WorkCalendar({ workingDays: [7], hoursPerDay: 10, holidays: ['2024-06-16'] });
  const sundays = sunday.days('2024-06-10');
  t.equal(sundays.start, '2024-06-23', 'from Monday the 10th: the 16th is a holiday, so the 23rd');
  t.equal(sundays.date(-1), '2024-06-09');
  t.equal(sunday.durationDays(25), 3, '25 hours of 10-hour days: 3 days');
  t.equal(sunday.durationDays(null), 1);
});

t.test('the first and last days a date can name, and the year 0093', async (t) => {
  const plain = new WorkCalendar(DEFAULT_CALENDAR);
  const ninety = plain.days('0093-01-28'); // a Wednesday of the year 93
  t.equal(ninety.start, '0093-01-28');
  t.equal(
    ninety.date(3),
    '0093-02-02',
    'Thu, Fri, (weekend), Mon, Tue: the 3rd working day after is Tuesday',
  );
  t.equal(ninety.onOrBefore('0093-01-31'), 2, 'a Sunday: the Friday before is day 2');
  const first = plain.days('0001-01-01'); // a Monday
  t.equal(first.start, '0001-01-01');
  t.equal(first.date(-1), '0001-01-01', 'before 0001-01-01: that day');
  t.notOk(first.fits(-1));
  t.ok(first.fits(0));
  // Whole weeks from 0001-01-01 (a Monday) to 9999-12-31 (a Friday): 3,652,059 days, 521,722
  // weeks and 5 days, so 521,722 × 5 + 5 working days, the last one's index one less.
  t.equal(first.onOrBefore('9999-12-31'), 521_722 * 5 + 4);
  t.equal(first.date(521_722 * 5 + 4), '9999-12-31');
  t.equal(first.date(521_722 * 5 + 5), '9999-12-31', 'past the last day: the last day');
  t.notOk(first.fits(521_722 * 5 + 5));
  t.ok(fitsCalendar('9999-12-30', 1), 'Thursday + 1: Friday 9999-12-31');
  t.notOk(fitsCalendar('9999-12-31', 1), 'Friday 9999-12-31 + 1: past the last day');
  t.throws(() => fitsCalendar('9999-12-31', -1), RangeError);
  // 2,000 holidays, every working day of eight years from 2030: indexes across them in one step.
  const holidays: string[] = [];
  for (let ms = Date.UTC(2030, 0, 1); holidays.length < 2000; ms += DAY)
    if (isoWeekday(ms) <= 5) holidays.push(dateOf(ms));
  const busy = new WorkCalendar({ ...DEFAULT_CALENDAR, holidays }).days('2029-12-31');
  // 2,000 weekdays from Tuesday 2030-01-01 are 400 whole weeks: the last holiday is a Monday.
  t.equal(holidays.at(-1), dateOf(Date.UTC(2030, 0, 1) + (400 * 7 - 1) * DAY));
  t.equal(
    busy.date(1),
    dateOf(Date.UTC(2030, 0, 1) + 400 * 7 * DAY),
    'day 1: the Tuesday after it',
  );
  t.equal(busy.onOrAfter('2030-01-01'), 1, 'every holiday reads as day 1');
});

t.test('bad calendars and dates are refused', async (t) => {
  t.throws(() => new WorkCalendar({ ...DEFAULT_CALENDAR, workingDays: [] }), RangeError);
  t.throws(() => new WorkCalendar({ ...DEFAULT_CALENDAR, workingDays: [0] }), RangeError);
  t.throws(() => new WorkCalendar({ ...DEFAULT_CALENDAR, workingDays: [1.5] }), RangeError);
  t.throws(() => new WorkCalendar({ ...DEFAULT_CALENDAR, hoursPerDay: 0 }), RangeError);
  t.throws(() => new WorkCalendar({ ...DEFAULT_CALENDAR, holidays: ['2024-02-30'] }), RangeError);
  t.throws(() => new WorkCalendar(DEFAULT_CALENDAR).days('2024-6-1'), RangeError);
});

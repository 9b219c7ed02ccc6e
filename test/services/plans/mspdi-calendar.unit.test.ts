/**
 * The project calendar of an MSPDI file as a flow's, and as the writer lays one out: weekdays by
 * DayType (1 = Sunday … 7 = Saturday) through base calendars, MinutesPerDay / 60 hours a day,
 * non-working exceptions on working weekdays as holidays (MS Project 2003's WeekDay entries and
 * later versions' Exceptions, named by them), and a CALENDAR_SIMPLIFIED warning for whatever a
 * flow's calendar cannot hold.
 */
import t from 'tap';
import { workingPeriods } from '../../../src/services/plans/mspdi-calendar.ts';
import { readMspdi } from '../../../src/services/plans/mspdi-reader.ts';
import { MAX_HOLIDAYS, type ImportedPlan } from '../../../src/services/plans/plan.ts';
import {
  bytes,
  calendar,
  exceptionDay,
  mspdi,
  refusal,
  STANDARD_DAYS,
  weekDay,
  type DocumentSpec,
} from './mspdi-document.ts';

const read = (spec: DocumentSpec): ImportedPlan => readMspdi(bytes(mspdi(spec)));
const messages = (plan: ImportedPlan) => plan.warnings.map((w) => `${w.code}: ${w.message}`);

const exception = (name: string, from: string, to: string, more = '') =>
  `<Exception><TimePeriod><FromDate>${from}T00:00:00</FromDate><ToDate>${to}T23:59:00</ToDate></TimePeriod><Name>${name}</Name>${more}</Exception>`;

t.test(
  'weekdays by DayType, from the project calendar and the bases it derives from',
  async (t) => {
    // DayType 1 is Sunday: a Sunday-to-Thursday week.
    const week = [1, 2, 3, 4, 5, 6, 7].map((d) => weekDay(d, d <= 5)).join('');
    t.strictSame(read({ calendars: [calendar(1, week)] }).calendar?.workingDays, [1, 2, 3, 4, 7]);
    const base = calendar(1, STANDARD_DAYS);
    const derived = calendar(3, weekDay(7, true), '<BaseCalendarUID>1</BaseCalendarUID>');
    t.strictSame(
      read({ project: { CalendarUID: 3 }, calendars: [base, derived] }).calendar?.workingDays,
      [1, 2, 3, 4, 5, 6],
      'Saturday its own, the rest its base’s',
    );
    const loop = [
      calendar(4, '', '<BaseCalendarUID>5</BaseCalendarUID>'),
      calendar(5, '', '<BaseCalendarUID>4</BaseCalendarUID>'),
    ];
    t.strictSame(
      read({ project: { CalendarUID: 4 }, calendars: loop }).calendar?.workingDays,
      [1, 2, 3, 4, 5],
      'bases in a loop end there; days none of them names are MS Project’s default',
    );
    t.strictSame(
      read({ project: { CalendarUID: 9 }, calendars: [calendar(2, weekDay(1, true))] }).calendar
        ?.workingDays,
      [1, 2, 3, 4, 5, 7],
      'a CalendarUID naming none: the first calendar',
    );
    t.equal(read({ calendars: [] }).calendar, null, 'no calendar at all');
    const none = [1, 2, 3, 4, 5, 6, 7].map((d) => weekDay(d, false)).join('');
    t.match(
      refusal(() => read({ calendars: [calendar(1, none)] })).message,
      /the project calendar has no working day/,
    );
  },
);

t.test(
  'hours a day are MinutesPerDay / 60; days of other hours and odd MinutesPerDay warn',
  async (t) => {
    const half =
      '<WorkingTimes><WorkingTime><FromTime>08:00:00</FromTime><ToTime>12:00:00</ToTime></WorkingTime></WorkingTimes>';
    const friday = [1, 2, 3, 4, 5, 6, 7]
      .map((d) => (d === 6 ? weekDay(6, true, half) : weekDay(d, d >= 2 && d <= 6)))
      .join('');
    const plan = read({ calendars: [calendar(1, friday)] });
    t.equal(plan.calendar?.hoursPerDay, 8);
    t.strictSame(messages(plan), [
      "CALENDAR_SIMPLIFIED: Friday works 240 minutes, not the project's 480: every working day here holds 8 hours",
    ]);
    t.strictSame(
      messages(read({ project: { MinutesPerDay: 450 }, calendars: [calendar(1, friday)] })),
      [
        "CALENDAR_SIMPLIFIED: Monday, Tuesday, Wednesday, Thursday work 480; Friday works 240 minutes, not the project's 450: every working day here holds 7.5 hours",
      ],
    );
    const long = read({ project: { MinutesPerDay: 450 } });
    t.equal(long.calendar?.hoursPerDay, 7.5);
    t.strictSame(messages(long), [
      "CALENDAR_SIMPLIFIED: Monday, Tuesday, Wednesday, Thursday, Friday work 480 minutes, not the project's 450: every working day here holds 7.5 hours",
    ]);
    const allDay =
      '<WorkingTimes><WorkingTime><FromTime>00:00:00</FromTime><ToTime>00:00:00</ToTime></WorkingTime></WorkingTimes>';
    const around = read({
      project: { MinutesPerDay: 1440 },
      calendars: [calendar(1, [1, 2, 3, 4, 5, 6, 7].map((d) => weekDay(d, true, allDay)).join(''))],
    });
    t.strictSame(
      [around.calendar?.hoursPerDay, around.warnings],
      [24, []],
      'a period ending at 00:00 ends at midnight',
    );
    for (const [minutes, held] of [
      [30, 60],
      [2000, 1440],
    ] as const) {
      const plan = read({ project: { MinutesPerDay: minutes }, calendars: [calendar(1, '')] });
      t.equal(plan.calendar?.hoursPerDay, held / 60);
      t.strictSame(messages(plan), [
        `CALENDAR_SIMPLIFIED: MinutesPerDay ${minutes} is outside a flow's 1 to 24 hours a day: it is read as ${held}`,
      ]);
    }
  },
);

t.test(
  'exception days on working weekdays are holidays, named by the Exceptions covering them',
  async (t) => {
    const days = [
      STANDARD_DAYS,
      // Friday to Monday: the weekend between changes nothing.
      exceptionDay('2024-03-29', '2024-04-01'),
      exceptionDay('2024-05-04'),
      // A ToDate at 00:00 of a later day ends the day before; one before its FromDate is no period.
      `<WeekDay><DayType>0</DayType><DayWorking>0</DayWorking><TimePeriod><FromDate>2024-05-08T00:00:00</FromDate><ToDate>2024-05-10T00:00:00</ToDate></TimePeriod></WeekDay>`,
      `<WeekDay><DayType>0</DayType><DayWorking>0</DayWorking><TimePeriod><FromDate>2024-06-03T00:00:00</FromDate><ToDate>2024-06-01T00:00:00</ToDate></TimePeriod></WeekDay>`,
      `<WeekDay><DayType>0</DayType><DayWorking>0</DayWorking><TimePeriod><FromDate>soon</FromDate></TimePeriod></WeekDay>`,
      // Before 1970 a flow holds no date.
      exceptionDay('1969-12-31'),
      // Working time on a Saturday: not kept.
      exceptionDay('2024-06-08', '2024-06-08', true),
    ].join('');
    const names = [
      exception('Easter', '2024-03-29', '2024-04-01'),
      exception('Easter again', '2024-03-29', '2024-03-29'),
      exception('Summer', '2024-07-01', '2024-07-31', '<Type>6</Type><Period>1</Period>'),
    ].join('');
    const plan = read({
      calendars: [
        calendar(1, days, '').replace(
          '</WeekDays>',
          `</WeekDays><Exceptions>${names}</Exceptions>`,
        ),
      ],
    });
    t.strictSame(plan.calendar?.holidays, [
      { date: '2024-03-29', name: 'Easter' },
      { date: '2024-04-01', name: 'Easter' },
      { date: '2024-05-08' },
      { date: '2024-05-09' },
    ]);
    t.strictSame(messages(plan), [
      "CALENDAR_SIMPLIFIED: Working time on 2024-06-08 is not kept: those days keep their weekday's hours",
    ]);
    const derived = read({
      project: { CalendarUID: 2 },
      calendars: [
        calendar(1, STANDARD_DAYS + exceptionDay('2024-12-25')),
        calendar(2, exceptionDay('2024-12-26'), '<BaseCalendarUID>1</BaseCalendarUID>'),
      ],
    });
    t.strictSame(
      derived.calendar?.holidays,
      [{ date: '2024-12-25' }, { date: '2024-12-26' }],
      'a base calendar’s exceptions hold too',
    );
  },
);

t.test(
  'Exceptions alone (no WeekDay entries of them): plain ones read; recurring and working ones warn',
  async (t) => {
    const exceptions = [
      exception('Retreat', '2024-09-02', '2024-09-04', '<Type>1</Type><DayWorking>0</DayWorking>'),
      exception(
        'Weekly',
        '2024-10-01',
        '2024-10-31',
        '<Type>6</Type><Period>1</Period><DaysOfWeek>2</DaysOfWeek><DayWorking>0</DayWorking>',
      ),
      exception('Every other day', '2024-11-01', '2024-11-09', '<Type>1</Type><Period>2</Period>'),
      exception('Saturday shift', '2024-09-07', '2024-09-08', '<DayWorking>1</DayWorking>'),
    ].join('');
    const plan = read({
      calendars: [
        `<Calendar><UID>1</UID><WeekDays>${STANDARD_DAYS}</WeekDays><Exceptions>${exceptions}</Exceptions><WorkWeeks><WorkWeek><Name>Summer hours</Name></WorkWeek></WorkWeeks></Calendar>`,
      ],
    });
    t.strictSame(plan.calendar?.holidays, [
      { date: '2024-09-02', name: 'Retreat' },
      { date: '2024-09-03', name: 'Retreat' },
      { date: '2024-09-04', name: 'Retreat' },
    ]);
    t.strictSame(messages(plan), [
      'CALENDAR_SIMPLIFIED: Work weeks other than the default one are not kept: the default week holds all year',
      'CALENDAR_SIMPLIFIED: The recurring exception "Weekly" is saved without its days: it is not kept',
      'CALENDAR_SIMPLIFIED: The recurring exception "Every other day" is saved without its days: it is not kept',
      "CALENDAR_SIMPLIFIED: Working time on 2024-09-07 to 2024-09-08 is not kept: those days keep their weekday's hours",
    ]);
  },
);

t.test(
  'holidays past the limit, and exceptions spanning centuries, are held with a warning',
  async (t) => {
    // 2001-01-01 to 2012-12-31 holds 3,131 weekdays: the first 2,000 are kept.
    const many = read({
      calendars: [calendar(1, STANDARD_DAYS + exceptionDay('2001-01-01', '2012-12-31'))],
    });
    t.equal(many.calendar?.holidays.length, MAX_HOLIDAYS);
    t.strictSame(many.calendar?.holidays[0], { date: '2001-01-01' });
    t.strictSame(messages(many), [
      'CALENDAR_SIMPLIFIED: The calendar has 3131 holidays; the first 2000 are kept (2008-08-29 the last)',
    ]);
    // Two ranges of 1984–2149 (60,630 days each): reading stops at 100,000 days, once.
    const centuries = exceptionDay('1984-01-01', '2149-12-31');
    const huge = read({
      calendars: [
        `<Calendar><UID>1</UID><WeekDays>${STANDARD_DAYS}${centuries}${centuries}</WeekDays><Exceptions>${exception('Long', '1984-01-01', '2149-12-31')}</Exceptions></Calendar>`,
      ],
    });
    t.equal(huge.calendar?.holidays.length, MAX_HOLIDAYS);
    t.strictSame(
      huge.warnings.map((w) => w.message.replace(/\d{4,}/g, 'N')),
      [
        'Exceptions past N days are not read',
        'The calendar has N holidays; the first N are kept (N-08-30 the last)',
      ],
    );
    const named = read({
      calendars: [
        `<Calendar><UID>1</UID><WeekDays>${STANDARD_DAYS}${exceptionDay('2024-01-01', '2024-01-02')}</WeekDays><Exceptions>${exception('A', '1984-01-01', '2149-12-31')}${exception('B', '1984-01-01', '2149-12-31')}</Exceptions></Calendar>`,
      ],
    });
    t.strictSame(
      messages(named),
      ['CALENDAR_SIMPLIFIED: Exceptions past 100000 days are not read'],
      'naming counts against the same days',
    );
    t.strictSame(named.calendar?.holidays, [
      { date: '2024-01-01', name: 'A' },
      { date: '2024-01-02', name: 'A' },
    ]);
  },
);

t.test(
  'the writer’s working times: from 08:00 with lunch, or from midnight for long days',
  async (t) => {
    t.strictSame(workingPeriods(2), [[480, 600]]);
    t.strictSame(workingPeriods(4), [[480, 720]]);
    t.strictSame(workingPeriods(8), [
      [480, 720],
      [780, 1020],
    ]);
    t.strictSame(workingPeriods(7.5), [
      [480, 720],
      [780, 990],
    ]);
    t.strictSame(workingPeriods(15), [
      [480, 720],
      [780, 1440],
    ]);
    t.strictSame(workingPeriods(16), [[0, 960]]);
    t.strictSame(workingPeriods(24), [[0, 1440]]);
  },
);

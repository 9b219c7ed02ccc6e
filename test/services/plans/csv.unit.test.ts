/**
 * Issue 54, item 3: CSV plans. MS Project's predecessor notation (`3`, `3FS+2d`, `5SS;7FF-1d`,
 * any case), RFC 4180 quoting, a header in any column order, a byte order mark; a bad row, a bad
 * predecessor or an unknown one refuses the document naming the line. The CSV export reads back
 * as the same tasks and links (a property over random flows), a formula-like cell included.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import t from 'tap';
import { readCsv } from '../../../src/services/plans/csv-reader.ts';
import { writeCsv } from '../../../src/services/plans/csv-writer.ts';
import { MAX_IMPORT_TASKS, type ExportPlan } from '../../../src/services/plans/plan.ts';
import { parsePredecessors, predecessorsText } from '../../../src/services/plans/predecessors.ts';
import { expectedImport, importedTasks, planArb } from './arbitraries.ts';
import { bytes, refusal } from './mspdi-document.ts';

const read = (text: string) => readCsv(bytes(text));
const refused = (text: string) => refusal(() => read(text));

t.test('predecessor notation: ids, types, lags in days, either separator, any case', async (t) => {
  t.strictSame(parsePredecessors(''), []);
  t.strictSame(parsePredecessors('3'), [{ id: 3, type: 'FS', lagDays: 0 }]);
  t.strictSame(parsePredecessors('3FS+2d'), [{ id: 3, type: 'FS', lagDays: 2 }]);
  t.strictSame(parsePredecessors('5SS;7FF-1d'), [
    { id: 5, type: 'SS', lagDays: 0 },
    { id: 7, type: 'FF', lagDays: -1 },
  ]);
  t.strictSame(parsePredecessors(' 4 sf + 3 Days , 9ff-0d; '), [
    { id: 4, type: 'SF', lagDays: 3 },
    { id: 9, type: 'FF', lagDays: 0 },
  ]);
  t.strictSame(
    parsePredecessors('2+1day'),
    [{ id: 2, type: 'FS', lagDays: 1 }],
    'the type left out: FS',
  );
  const errors: [string, RegExp][] = [
    ['3FS+2w', /lag in "w": a lag is in working days \(d\)/],
    ['3FS+2', /lag in no unit/],
    ['3FS+1.5d', /a whole number of working days, at most 500/],
    ['3SS+501d', /at most 500/],
    ['3XY', /is not ID\[FS\|SS\|FF\|SF\]\[±Nd\]/],
    ['three', /is not ID/],
    ['3FS+', /is not ID/],
  ];
  for (const [cell, pattern] of errors) {
    const parsed = parsePredecessors(cell);
    t.ok('error' in parsed && pattern.test(parsed.error), cell);
  }
  t.equal(
    predecessorsText([
      { id: 3, type: 'FS', lagDays: 0 },
      { id: 4, type: 'SS', lagDays: 0 },
      { id: 5, type: 'FS', lagDays: 2 },
      { id: 6, type: 'FF', lagDays: -1 },
    ]),
    '3;4SS;5FS+2d;6FF-1d',
  );
});

t.test('a CSV plan: header in any order and case, quoting, BOM, optional columns', async (t) => {
  const text = [
    '\uFEFFPredecessors,Name,ID,estimatehours,Assignee,Milestone,startNoEarlierThan,finishNoLaterThan,Notes',
    '"",Design,1,16,ann@example.com,,2024-02-05,,x',
    '"1FS+2d;3ss",Build,2,40.5,,no,,2024-03-29,',
    ',"Launch, ""v1""",3,,,TRUE,,,',
    '1,"Two',
    'lines",4,8,,,,,',
    '',
    `2,'=HYPERLINK(x),5,0,,0,,,`,
  ].join('\r\n');
  const plan = read(text);
  t.strictSame([plan.name, plan.startDate, plan.calendar], [null, null, null]);
  t.strictSame(
    plan.tasks.map((x) => [x.uid, x.name, x.estimateHours, x.milestone, x.constraint, x.resource]),
    [
      [
        1,
        'Design',
        16,
        false,
        { type: 'startNoEarlierThan', date: '2024-02-05' },
        { uid: null, name: null, email: 'ann@example.com' },
      ],
      [2, 'Build', 40.5, false, { type: 'finishNoLaterThan', date: '2024-03-29' }, null],
      [3, 'Launch, "v1"', null, true, null, null],
      [4, 'Two lines', 8, false, null, null],
      [5, '=HYPERLINK(x)', 0, false, null, null],
    ],
  );
  t.strictSame(
    plan.tasks.map((x) => x.links),
    [
      [],
      [
        { task: 0, type: 'FS', lagDays: 2 },
        { task: 2, type: 'SS', lagDays: 0 },
      ],
      [],
      [{ task: 0, type: 'FS', lagDays: 0 }],
      [{ task: 1, type: 'FS', lagDays: 0 }],
    ],
  );
  t.ok(plan.tasks.every((x) => x.progress === 'open' && x.startedAt === null));
  t.strictSame(
    plan.warnings.map((w) => [w.code, w.message]),
    [['COLUMN_IGNORED', 'Column "Notes" is not read']],
  );
  const milestone = read(
    'id,name,estimateHours,predecessors,milestone\n1,Gate,8,,yes\n2,Blank,,,\n',
  );
  t.strictSame(
    milestone.tasks.map((x) => [x.milestone, x.estimateHours, x.name]),
    [
      [true, null, 'Gate'],
      [false, null, 'Blank'],
    ],
  );
  t.strictSame(
    milestone.warnings.map((w) => [w.code, w.uid]),
    [['MILESTONE_DURATION_DROPPED', 1]],
  );
  t.strictSame(read('id,name,estimateHours,predecessors\n').tasks, [], 'a header alone: no tasks');
  t.strictSame(
    read('id,name,estimateHours,predecessors\n7,  ,1,\n').tasks.map((x) => x.name),
    ['Task 7'],
    'a blank name: named by its id',
  );
});

t.test('a row that cannot be read refuses the document, naming its line', async (t) => {
  const header =
    'id,name,estimateHours,predecessors,milestone,startNoEarlierThan,finishNoLaterThan';
  const cases: [string, number, RegExp][] = [
    ['0,A,1,,,,', 2, /id "0" is not a positive whole number/],
    ['x,A,1,,,,', 2, /id "x" is not a positive whole number/],
    ['1,A,lots,,,,', 2, /estimateHours "lots" is not a number of hours from 0 to 100000/],
    ['1,A,100001,,,,', 2, /estimateHours "100001"/],
    ['1,A,-1,,,,', 2, /estimateHours "-1"/],
    ['1,A,1,,maybe,,', 2, /milestone "maybe" is not true or false/],
    ['1,A,1,,,2024-02-30,', 2, /startNoEarlierThan "2024-02-30" is not a date/],
    ['1,A,1,,,,1969-12-31', 2, /finishNoLaterThan "1969-12-31" is not a date/],
    [
      '1,A,1,,,2024-01-01,2024-02-01',
      2,
      /one constraint: startNoEarlierThan or finishNoLaterThan, not both/,
    ],
    ['1,A,1,2FS+1w,,,', 2, /lag in "w"/],
    ['1,A,1,2,,,', 2, /predecessor 2 is the id of no row/],
    ['1,A,1,1,,,', 2, /task 1 cannot wait on itself/],
    ['1,A,1,,,,\n2,B,1,1;1SS,,,', 3, /predecessor 1 is named twice/],
    ['1,A,1,,,,\n1,B,1,,,,', 3, /id 1 is on an earlier row too/],
  ];
  for (const [rows, line, pattern] of cases) {
    const { code, errors } = refused(`${header}\n${rows}\n`);
    t.equal(code, 'VALIDATION_FAILED', rows);
    t.ok(
      errors.some((e) => e.line === line && pattern.test(e.message)),
      `${rows}: line ${line}`,
    );
  }
  const spanning = refused(`${header}\r\n1,"Two\r\nlines",1,,,,\r\n\r\n2,B,1,9,,,\r\n`);
  t.strictSame(
    spanning.errors.map((e) => [e.line, e.message]),
    [[5, 'line 5: predecessor 9 is the id of no row']],
    'after a row of two lines and an empty line',
  );
  const several = refused(`${header}\n1,A,x,,,,\n2,B,y,,,,\n`);
  t.strictSame(
    several.errors.map((e) => e.line),
    [2, 3],
    'every problem, each with its line',
  );
  t.match(several.message, /^The document cannot be imported: line 2: .* \(and 1 more\)$/);
});

t.test(
  'what is not a CSV plan: no header, missing columns, bad quoting, uneven rows, not UTF-8',
  async (t) => {
    const cases: [string | Buffer, number, RegExp][] = [
      ['', 1, /has no header row/],
      ['\n\n', 1, /has no header row/],
      ['id,name\n1,A\n', 1, /the header row has no column estimateHours, predecessors/],
      ['id,name,Name,estimateHours,predecessors\n', 1, /the header names column name twice/],
      ['id,name,estimateHours,predecessors\n1,"A,1,\n', 2, /not RFC 4180 CSV: Quote Not Closed/],
      [
        'id,name,estimateHours,predecessors\n1,"A"x,1,\n',
        2,
        /not RFC 4180 CSV: Invalid Closing Quote/,
      ],
      ['id,name,estimateHours,predecessors\n1,A,1\n', 2, /not RFC 4180 CSV: Invalid Record Length/],
      [
        'id,name,estimateHours,predecessors\r\n1,"x\r\ny",1,\r\n\r\n2,"q"z,1,\r\n',
        5,
        /Invalid Closing Quote/,
      ],
      [
        Buffer.concat([
          bytes('id,name,estimateHours,predecessors\n1,'),
          Buffer.from([0xff]),
          bytes(',1,\n'),
        ]),
        2,
        /not UTF-8/,
      ],
    ];
    for (const [text, line, pattern] of cases) {
      const { errors } = refusal(() => readCsv(typeof text === 'string' ? bytes(text) : text));
      t.ok(
        errors[0]?.line === line && pattern.test(errors[0].message),
        `${String(text).slice(0, 40)}: ${errors[0]?.message}`,
      );
    }
    const rows = Array.from({ length: MAX_IMPORT_TASKS + 1 }, (_, i) => `${i + 1},T,1,`).join('\n');
    const { message, errors } = refused(`id,name,estimateHours,predecessors\n${rows}\n`);
    t.match(message, /more than 20000 rows/);
    t.equal(errors[0]?.line, MAX_IMPORT_TASKS + 2);
    const problems = Array.from({ length: 60 }, (_, i) => `${i + 1},T,x,`).join('\n');
    t.equal(
      refused(`id,name,estimateHours,predecessors\n${problems}\n`).errors.length,
      50,
      'at most 50 problems listed',
    );
  },
);

t.test('the CSV export: the columns, quoting, a byte order mark, formulas defused', async (t) => {
  const plan: ExportPlan = {
    name: 'Flow',
    startDate: '2024-01-08',
    calendar: { workingDays: [1, 2, 3, 4, 5], hoursPerDay: 8, holidays: [] },
    tasks: [
      {
        id: 'tsk_a',
        name: 'Design, "first"',
        estimateHours: 12.5,
        milestone: false,
        constraint: { type: 'startNoEarlierThan', date: '2024-02-01' },
        progress: 'done',
        remainingHours: null,
        startedAt: null,
        completedAt: null,
        links: [],
        assignee: { name: 'Ann', email: 'ann@example.com' },
        schedule: null,
      },
      {
        id: 'tsk_b',
        name: '=1+1',
        estimateHours: null,
        milestone: true,
        constraint: { type: 'finishNoLaterThan', date: '2024-03-01' },
        progress: 'open',
        remainingHours: null,
        startedAt: null,
        completedAt: null,
        links: [
          { taskId: 'tsk_a', type: 'SS', lagDays: -2 },
          { taskId: 'tsk_a', type: 'FS', lagDays: 0 },
        ],
        assignee: null,
        schedule: null,
      },
    ],
  };
  t.equal(
    writeCsv(plan),
    '\uFEFFid,name,estimateHours,predecessors,assignee,milestone,startNoEarlierThan,finishNoLaterThan\r\n' +
      '1,"Design, ""first""",12.5,,ann@example.com,false,2024-02-01,\r\n' +
      "2,'=1+1,,1SS-2d;1,,true,,2024-03-01\r\n",
  );
});

t.test('read(export(flow)) gives back its tasks and links', async (t) => {
  fc.assert(
    fc.property(planArb, (plan) => {
      const back = readCsv(bytes(writeCsv(plan)));
      assert.deepStrictEqual(importedTasks(back), expectedImport(plan, false));
      assert.deepStrictEqual(back.warnings, []);
    }),
    { numRuns: 150 },
  );
  t.pass('150 random flows read back as written');
});

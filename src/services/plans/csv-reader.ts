/**
 * A CSV plan (UTF-8, an optional byte order mark, RFC 4180 quoting, parsed by csv-parse): a header
 * row naming its columns in any order and case, then one task a row. Columns `id` (a positive
 * integer, unique), `name`, `estimateHours` and `predecessors` (predecessors.ts) are required;
 * `assignee` (a member's email), `milestone`, `startNoEarlierThan` and `finishNoLaterThan` may
 * be there; any other column is a warning and is not read. A row that cannot be read, or that
 * names a predecessor no row has, refuses the document, naming the row's line.
 */
import { CsvError, parse } from 'csv-parse/sync';
import { isFlowDate } from './days.ts';
import { documentText, Findings, unreadableAt } from './findings.ts';
import {
  MAX_ESTIMATE_HOURS,
  MAX_IMPORT_TASKS,
  type ImportedLink,
  type ImportedPlan,
  type ImportedTask,
  type PlanConstraint,
} from './plan.ts';
import { parsePredecessors, type PredecessorRef } from './predecessors.ts';

export const CSV_COLUMNS = [
  'id',
  'name',
  'estimateHours',
  'predecessors',
  'assignee',
  'milestone',
  'startNoEarlierThan',
  'finishNoLaterThan',
] as const;
type Column = (typeof CSV_COLUMNS)[number];
const REQUIRED: readonly Column[] = ['id', 'name', 'estimateHours', 'predecessors'];

/**
 * A cell a spreadsheet would run as a formula starts with one of these: the writer puts a `'`
 * before it, as spreadsheets do themselves, and the reader takes one off again (a cell already
 * starting with `'`s before one gets another, so that what is read back is what was written).
 */
export const FORMULA_START = /^'*[=+\-@\t\r]/;

interface Row {
  readonly line: number;
  readonly cells: readonly string[];
}

export function readCsv(body: Uint8Array): ImportedPlan {
  const text = documentText(body, 'CSV document');
  const rows = csvRows(text);
  const header = rows[0];
  if (header === undefined) throw unreadableAt(1, 'the CSV document has no header row');
  const findings = new Findings();
  const columns = headerColumns(header.cells, header.line, findings);
  if (rows.length - 1 > MAX_IMPORT_TASKS)
    throw unreadableAt(
      rows[MAX_IMPORT_TASKS + 1]?.line ?? 0,
      `the CSV document has more than ${MAX_IMPORT_TASKS} rows, the most one import creates`,
    );
  const tasks: (Omit<ImportedTask, 'links'> & { links: ImportedLink[] })[] = [];
  const waits: { line: number; refs: PredecessorRef[] }[] = [];
  const index = new Map<number, number>();
  for (const { line, cells: raw } of rows.slice(1)) {
    const cell = (column: Column) => {
      const at = columns.get(column);
      return at === undefined ? '' : unformula((raw[at] ?? '').trim());
    };
    const fail = (message: string) => findings.fail(line, message);
    const idText = cell('id');
    const id = /^\d{1,9}$/.test(idText) ? Number(idText) : 0;
    if (id === 0) {
      fail(`id "${idText}" is not a positive whole number`);
      continue;
    }
    if (index.has(id)) {
      fail(`id ${id} is on an earlier row too`);
      continue;
    }
    index.set(id, tasks.length);
    const milestone = booleanCell(cell('milestone'));
    if (milestone === null) fail(`milestone "${cell('milestone')}" is not true or false`);
    let estimateHours = numberCell(cell('estimateHours'));
    if (estimateHours === undefined)
      fail(
        `estimateHours "${cell('estimateHours')}" is not a number of hours from 0 to ${MAX_ESTIMATE_HOURS}`,
      );
    if (milestone === true && estimateHours) {
      findings.warn(
        'MILESTONE_DURATION_DROPPED',
        `Task ${id} is a milestone of ${estimateHours} hours: imported as a milestone, without them`,
        id,
      );
      estimateHours = null;
    }
    const predecessors = parsePredecessors(cell('predecessors'));
    if ('error' in predecessors) fail(predecessors.error);
    waits.push({ line, refs: 'error' in predecessors ? [] : predecessors });
    const email = cell('assignee');
    tasks.push({
      uid: id,
      name: findings.taskName(cell('name'), id),
      estimateHours: estimateHours ?? null,
      milestone: milestone === true,
      constraint: constraintCells(cell('startNoEarlierThan'), cell('finishNoLaterThan'), fail),
      progress: 'open',
      remainingHours: null,
      startedAt: null,
      completedAt: null,
      links: [],
      resource: email === '' ? null : { uid: null, name: null, email },
    });
  }
  waits.forEach(({ line, refs }, i) => {
    const task = tasks[i];
    const seen = new Set<number>();
    for (const { id, type, lagDays } of refs) {
      const at = index.get(id);
      if (at === undefined) findings.fail(line, `predecessor ${id} is the id of no row`);
      else if (id === task?.uid) findings.fail(line, `task ${id} cannot wait on itself`);
      else if (seen.has(id))
        findings.fail(line, `predecessor ${id} is named twice: two tasks are joined by one link`);
      else {
        seen.add(id);
        task?.links.push({ task: at, type, lagDays });
      }
    }
  });
  findings.check();
  return { name: null, startDate: null, calendar: null, tasks, warnings: findings.warnings };
}

/**
 * The rows with the line each starts on (a quoted line break makes a row span lines). CRLF and
 * CR become LF first: csv-parse counts a CRLF within quotes as two lines, and a name keeps no
 * line break anyway.
 */
function csvRows(text: string): Row[] {
  try {
    const records = parse(text.replace(/\r\n?/g, '\n'), {
      raw: true,
      info: true,
      skip_empty_lines: true,
    }) as unknown as { record: string[]; raw: string; info: { lines: number } }[];
    // `lines` counts to the row's end (its line break too): back over the breaks within it (the
    // raw text of a row starts with the empty lines skipped before it).
    return records.map(({ record, raw, info }) => ({
      line: info.lines - (raw.replace(/^\n+|\n$/g, '').match(/\n/g)?.length ?? 0),
      cells: record,
    }));
  } catch (error) {
    throw error instanceof CsvError ? csvRefusal(error) : error;
  }
}

/** csv-parse's refusal (an unclosed quote, a row of other length) at its line. */
const csvRefusal = (error: CsvError) =>
  unreadableAt(
    (error as CsvError & { lines: number }).lines,
    `the CSV document is not RFC 4180 CSV: ${error.message}`,
  );

/** Each known column's position, from the header's names (any order, any case). */
function headerColumns(
  cells: readonly string[],
  line: number,
  findings: Findings,
): Map<Column, number> {
  const columns = new Map<Column, number>();
  cells.forEach((cell, at) => {
    const name = cell.trim();
    const known = CSV_COLUMNS.find((c) => c.toLowerCase() === name.toLowerCase());
    if (known === undefined) findings.warn('COLUMN_IGNORED', `Column "${name}" is not read`);
    else if (columns.has(known)) findings.fail(line, `the header names column ${known} twice`);
    else columns.set(known, at);
  });
  const missing = REQUIRED.filter((c) => !columns.has(c));
  if (missing.length > 0)
    throw unreadableAt(line, `the header row has no column ${missing.join(', ')}`);
  return columns;
}

const unformula = (cell: string) =>
  cell.startsWith("'") && FORMULA_START.test(cell.slice(1)) ? cell.slice(1) : cell;

function booleanCell(text: string): boolean | null {
  const value = text.toLowerCase();
  if (value === '' || value === 'false' || value === 'no' || value === '0') return false;
  if (value === 'true' || value === 'yes' || value === '1') return true;
  return null;
}

/** Hours: null for an empty cell, undefined for one that is not 0 … MAX_ESTIMATE_HOURS. */
function numberCell(text: string): number | null | undefined {
  if (text === '') return null;
  const hours = /^\d{1,9}(?:\.\d{1,9})?$/.test(text) ? Number(text) : NaN;
  return hours <= MAX_ESTIMATE_HOURS ? hours : undefined;
}

function constraintCells(
  start: string,
  finish: string,
  fail: (message: string) => void,
): PlanConstraint | null {
  if (start !== '' && finish !== '') {
    fail('a task has one constraint: startNoEarlierThan or finishNoLaterThan, not both');
    return null;
  }
  const [type, date] =
    start !== ''
      ? (['startNoEarlierThan', start] as const)
      : (['finishNoLaterThan', finish] as const);
  if (date === '') return null;
  if (isFlowDate(date)) return { type, date };
  fail(`${type} "${date}" is not a date (YYYY-MM-DD) from 1970 to 9999`);
  return null;
}

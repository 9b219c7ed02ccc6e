/**
 * A flow as the CSV the reader takes (csv-reader.ts's columns): one row a task in the flow's
 * order, `id` its place from 1, `predecessors` in MS Project's notation. UTF-8 with a byte order
 * mark (so spreadsheets read it as UTF-8), CRLF line ends and RFC 4180 quoting; a text cell a
 * spreadsheet would run as a formula is written after a `'`, which the reader takes off.
 */
import { CSV_COLUMNS, FORMULA_START } from './csv-reader.ts';
import type { ExportPlan } from './plan.ts';
import { predecessorsText } from './predecessors.ts';

const quoted = (cell: string) => (/[",\r\n]/.test(cell) ? `"${cell.replace(/"/g, '""')}"` : cell);
const text = (cell: string) => quoted(FORMULA_START.test(cell) ? `'${cell}` : cell);

export function writeCsv(plan: ExportPlan): string {
  const ids = new Map(plan.tasks.map((task, i) => [task.id, i + 1]));
  const rows = plan.tasks.map((task, i) =>
    [
      String(i + 1),
      text(task.name),
      task.estimateHours === null ? '' : String(task.estimateHours),
      quoted(
        predecessorsText(
          task.links.map((link) => ({
            id: ids.get(link.taskId) ?? 0,
            type: link.type,
            lagDays: link.lagDays,
          })),
        ),
      ),
      text(task.assignee?.email ?? ''),
      String(task.milestone),
      task.constraint?.type === 'startNoEarlierThan' ? task.constraint.date : '',
      task.constraint?.type === 'finishNoLaterThan' ? task.constraint.date : '',
    ].join(','),
  );
  return `\uFEFF${[CSV_COLUMNS.join(','), ...rows].map((row) => `${row}\r\n`).join('')}`;
}

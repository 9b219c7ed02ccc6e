/** Aligned plain-text tables for the list commands (people read these; scripts use --json). */
import { escapeControls } from './terminal.ts';

export type Column<T> = [header: string, cell: (row: T) => string];

/** Cells are escaped (terminal.ts), and aligned as escaped. */
export function table<T>(rows: T[], columns: Column<T>[], empty: string): string {
  if (rows.length === 0) return empty;
  const cells = [
    columns.map(([header]) => header),
    ...rows.map((row) => columns.map(([, cell]) => escapeControls(cell(row)))),
  ];
  const widths = columns.map((_, i) => Math.max(...cells.map((line) => line[i]!.length)));
  return cells
    .map((line) =>
      line
        .map((cell, i) => (i === line.length - 1 ? cell : cell.padEnd(widths[i]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

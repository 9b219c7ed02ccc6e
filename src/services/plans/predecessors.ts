/**
 * MS Project's predecessor notation, as a CSV's `predecessors` column writes links: each the
 * `id` of the task waited on, its type (FS when left out) and its lag in working days, `3`,
 * `3FS+2d`, `5SS;7FF-1d`, case-insensitive, separated by `;` or `,` ("days" as MS Project's own
 * columns spell the unit is read too). Any other unit is refused: a flow's lags are working days.
 */
import { MAX_LAG_DAYS, type LinkType } from './plan.ts';

export interface PredecessorRef {
  readonly id: number;
  readonly type: LinkType;
  readonly lagDays: number;
}

const ITEM_RE = /^(\d{1,10})\s*(FS|SS|FF|SF)?\s*(?:([+-])\s*(\d+(?:\.\d*)?)\s*([a-z]*))?$/i;
const DAYS = new Set(['d', 'day', 'days']);

/** The links a cell names, or what is wrong with it. */
export function parsePredecessors(cell: string): PredecessorRef[] | { error: string } {
  const refs: PredecessorRef[] = [];
  for (const item of cell.split(/[;,]/).map((s) => s.trim())) {
    if (item === '') continue;
    const m = ITEM_RE.exec(item);
    if (m === null)
      return { error: `predecessor "${item}" is not ID[FS|SS|FF|SF][±Nd] (as 3, 3FS+2d, 5SS-1d)` };
    const [, id = '', type = 'FS', sign, amount, unit = ''] = m;
    let lagDays = 0;
    if (amount !== undefined) {
      if (!DAYS.has(unit.toLowerCase()))
        return {
          error: `predecessor "${item}" has a lag in ${unit === '' ? 'no unit' : `"${unit}"`}: a lag is in working days (d)`,
        };
      lagDays = Number(amount) * (sign === '-' ? -1 : 1);
      if (!Number.isInteger(lagDays) || Math.abs(lagDays) > MAX_LAG_DAYS)
        return {
          error: `predecessor "${item}" has a lag of ${amount} days: a whole number of working days, at most ${MAX_LAG_DAYS}`,
        };
    }
    refs.push({ id: Number(id), type: type.toUpperCase() as LinkType, lagDays: lagDays || 0 });
  }
  return refs;
}

/** Links as the notation writes them: `3`, `3SS`, `3FS+2d`, `5FF-1d`, separated by `;`. */
export function predecessorsText(refs: readonly PredecessorRef[]): string {
  return refs
    .map(({ id, type, lagDays }) => {
      if (lagDays !== 0) return `${id}${type}${lagDays > 0 ? '+' : ''}${lagDays}d`;
      return type === 'FS' ? String(id) : `${id}${type}`;
    })
    .join(';');
}

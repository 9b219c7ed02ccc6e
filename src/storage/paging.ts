/**
 * Every paged list of the API in one shape: a page of items and the count of the whole list.
 * The rows carry the count (a window count over the filtered rows, taken before LIMIT and
 * OFFSET), so a page costs one statement; a page past the end of a list has no row to carry
 * it, and only then does the count run on its own.
 */
import type postgres from 'postgres';
import type { Page, PageRequest } from '../platform/paging.ts';
import type { Db } from './db.ts';

export interface ListQuery {
  /** The item's columns. */
  columns: postgres.Fragment;
  /** `from … where …`: the whole list. */
  source: postgres.Fragment;
  /** A total order (ties broken by id), so that pages never overlap. */
  order: postgres.Fragment;
}

interface Counted {
  pageTotal: number;
}

export async function pageOf<T extends object>(
  sql: Db,
  { columns, source, order }: ListQuery,
  page: PageRequest,
): Promise<Page<Omit<T & Counted, 'pageTotal'>>> {
  const rows = await sql<
    (T & Counted)[]
  >`select ${columns}, count(*) over ()::int as page_total ${source}
    order by ${order} limit ${page.size} offset ${page.from}`;
  if (rows.length === 0) {
    if (page.from === 0) return { total: 0, items: [] };
    const [row] = await sql<{ n: number }[]>`select count(*)::int as n ${source}`;
    return { total: row?.n ?? 0, items: [] };
  }
  return { total: rows[0]!.pageTotal, items: rows.map(({ pageTotal: _count, ...item }) => item) };
}

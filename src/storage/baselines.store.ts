/**
 * Baselines of flows (sql/0020_baselines.sql): a snapshot of a flow's schedule as parallel
 * arrays. Every query names the workspace and the flow, so another's id finds nothing.
 */
import type { Page, PageRequest } from '../platform/paging.ts';
import type { Db } from './db.ts';
import { pageOf } from './paging.ts';

export interface BaselineRow {
  id: string;
  name: string;
  /** YYYY-MM-DD: the working day the offsets count from. */
  startDate: string;
  /** The projected finish's offset; -1 when nothing was open. */
  finish: number;
  createdAt: Date;
}

/** Per objective, in flow order: its id and its start and finish offsets (-1: done). */
export interface BaselineTasks {
  taskIds: string[];
  starts: number[];
  finishes: number[];
}

export interface NewBaseline extends Omit<BaselineRow, 'createdAt'>, BaselineTasks {
  workspaceId: string;
  flowId: string;
}

// The date as YYYY-MM-DD text, whatever the session's DateStyle: no time zone enters.
const COLUMNS = (sql: Db) =>
  sql`id, name, to_char(start_date, 'YYYY-MM-DD') as start_date, finish, created_at`;

export async function insertBaseline(sql: Db, baseline: NewBaseline): Promise<BaselineRow> {
  // An insert … returning answers its one row.
  const [row] = await sql<[BaselineRow]>`insert into baselines
      (id, workspace_id, flow_id, name, start_date, finish, task_ids, starts, finishes)
    values (${baseline.id}, ${baseline.workspaceId}, ${baseline.flowId}, ${baseline.name},
      ${baseline.startDate}, ${baseline.finish}, ${baseline.taskIds}::text[],
      ${baseline.starts}::int[], ${baseline.finishes}::int[])
    returning ${COLUMNS(sql)}`;
  return row;
}

/** A flow's baselines, newest first, without their snapshots. */
export async function pageBaselines(
  sql: Db,
  workspaceId: string,
  flowId: string,
  page: PageRequest,
): Promise<Page<BaselineRow>> {
  return pageOf<BaselineRow>(
    sql,
    {
      columns: COLUMNS(sql),
      source: sql`from baselines where workspace_id = ${workspaceId} and flow_id = ${flowId}`,
      order: sql`created_at desc, id desc`,
    },
    page,
  );
}

/** One baseline of the flow with its snapshot; null when the flow holds none by that id. */
export async function loadBaseline(
  sql: Db,
  workspaceId: string,
  flowId: string,
  baselineId: string,
): Promise<(BaselineRow & BaselineTasks) | null> {
  const [row] = await sql<(BaselineRow & BaselineTasks)[]>`
    select ${COLUMNS(sql)}, task_ids, starts, finishes from baselines
    where id = ${baselineId} and workspace_id = ${workspaceId} and flow_id = ${flowId}`;
  return row ?? null;
}

/** The outbox drain and job statistics (pg-boss's own tables are read here, never written). */
import { tryTransactionLock, type Db, type Tx } from './db.ts';
import { EVENTS_CHANNEL } from './event-log.store.ts';

/** Transaction-scoped: one drainer at a time across every process (see jobs/outbox.ts). */
const DRAIN_LOCK = 7_046_231_907;

export interface OutboxRow {
  id: string;
  workspaceId: string;
  flowId: string | null;
  type: string;
  data: Record<string, unknown>;
  actorId: string | null;
  createdAt: Date;
}

export function tryDrainLock(tx: Tx): Promise<boolean> {
  return tryTransactionLock(tx, DRAIN_LOCK);
}

export function nextOutboxBatch(tx: Tx, limit: number): Promise<OutboxRow[]> {
  return tx<
    OutboxRow[]
  >`select id, workspace_id, flow_id, type, data, actor_id, created_at from outbox
    where processed_at is null order by id limit ${limit}`;
}

/**
 * Marks drained events processed and numbers them, in id order: `position` after the last one
 * given in the installation (the drain's own order: the drain's lock is held, no other drain
 * gives positions meanwhile) and `seq` after the last one given in the event's workspace (its
 * feed position; the workspace's event_sequences row stays locked until this commits), and
 * wakes the feed's readers at commit. Returns the last position given.
 */
export async function markOutboxProcessed(
  tx: Tx,
  events: readonly Pick<OutboxRow, 'id' | 'createdAt'>[],
  error: string | null = null,
): Promise<string | null> {
  // The events' times name the partitions to update: by id alone every day's partition (a week
  // ahead is made) was opened and searched, the drain's costliest statement. A Date holds
  // milliseconds and the column microseconds: the range ends a millisecond past the last.
  const times = events.map((e) => e.createdAt.getTime());
  const first = new Date(Math.min(...times));
  const end = new Date(Math.max(...times) + 1);
  const rows = await tx<{ position: string }[]>`with last as (
      select greatest((select max(position) from outbox where position is not null), (select max(dropped_position) from event_log_dropped), 0) as p
    ), batch as (
      select id, created_at, workspace_id, row_number() over (order by id) as n,
        row_number() over (partition by workspace_id order by id) as k
      from outbox where id = any(${events.map((e) => e.id)}::bigint[]) and position is null
        and created_at >= ${first} and created_at < ${end}
    ), counts as (
      select workspace_id, count(*) as c from batch group by workspace_id
    ), taken as (
      insert into event_sequences as s (workspace_id, last) select workspace_id, c from counts
      on conflict (workspace_id) do update set last = s.last + excluded.last
      returning s.workspace_id, s.last
    )
    update outbox o set processed_at = now(), drain_error = ${error}, position = last.p + batch.n,
      seq = taken.last - counts.c + batch.k
    from last, batch join counts using (workspace_id) join taken using (workspace_id)
    where o.id = batch.id and o.created_at = batch.created_at
    returning o.position::text as position`;
  if (rows.length === 0) return null;
  const position = rows.reduce(
    (max, r) => (BigInt(r.position) > BigInt(max) ? r.position : max),
    rows[0]!.position,
  );
  await tx`select pg_notify(${EVENTS_CHANNEL}, ${position})`;
  return position;
}

/** Counts a failed drain of these rows; returns the rows' attempts so far. */
export async function countDrainFailure(sql: Db, ids: readonly string[]): Promise<number> {
  const rows = await sql<
    { attempts: number }[]
  >`update outbox set drain_attempts = drain_attempts + 1
    where id = any(${ids as string[]}::bigint[]) returning drain_attempts as attempts`;
  return Math.max(0, ...rows.map((r) => r.attempts));
}

export async function outboxBacklog(sql: Db): Promise<number> {
  const [row] = await sql<
    { n: number }[]
  >`select count(*)::int as n from outbox where processed_at is null`;
  return row!.n;
}

export async function jobCounts(
  sql: Db,
): Promise<{ queue: string; state: string; count: number }[]> {
  return sql<
    { queue: string; state: string; count: number }[]
  >`select name as queue, state::text as state, count(*)::int as count
    from pgboss.job group by name, state order by name, state`;
}

export interface QueueSummary {
  name: string;
  created: number;
  retry: number;
  active: number;
  completed: number;
  failed: number;
  cancelled: number;
}

export async function queueSummaries(sql: Db): Promise<QueueSummary[]> {
  return sql<QueueSummary[]>`select q.name,
      count(*) filter (where j.state = 'created')::int as created,
      count(*) filter (where j.state = 'retry')::int as retry,
      count(*) filter (where j.state = 'active')::int as active,
      count(*) filter (where j.state = 'completed')::int as completed,
      count(*) filter (where j.state = 'failed')::int as failed,
      count(*) filter (where j.state = 'cancelled')::int as cancelled
    from pgboss.queue q left join pgboss.job j on j.name = q.name
    where q.name not like '\_\_pgboss\_\_%'
    group by q.name order by q.name`;
}

export interface FailedJob {
  id: string;
  queue: string;
  data: unknown;
  output: unknown;
  retryCount: number;
  createdOn: Date;
  completedOn: Date | null;
}

export async function failedJobs(sql: Db, limit: number): Promise<FailedJob[]> {
  return sql<
    FailedJob[]
  >`select id, name as queue, data, output, retry_count, created_on, completed_on
    from pgboss.job where state = 'failed' order by completed_on desc nulls last limit ${limit}`;
}

/** False until a server (or `flowplan migrate`) has started pg-boss once on this database. */
export async function jobsInstalled(sql: Db): Promise<boolean> {
  const [row] = await sql<
    { present: boolean }[]
  >`select to_regclass('pgboss.job') is not null as present`;
  return row!.present;
}

export async function setAsideOutboxEvents(
  sql: Db,
  limit: number,
): Promise<{ id: string; type: string; flowId: string | null; error: string; createdAt: Date }[]> {
  return sql`select id, type, flow_id, drain_error as error, created_at from outbox
    where drain_error is not null order by id desc limit ${limit}`;
}

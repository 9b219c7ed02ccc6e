/**
 * The event log (sql/0016_event_log.sql): the outbox, read by position. Positions are given
 * by the outbox drain (jobs.store.ts markOutboxProcessed) after commit; readers see stamped
 * events only: `position` in the drain's order, which the live fan-out follows, and `seq`,
 * the feed position numbered per workspace that cursors hold (sql/0029). Retention is whole
 * partitions of one UTC day.
 */
import type { Db, Sql } from './db.ts';

/** Drained events committed: the payload is the last position given (NOTIFY is sent at commit). */
export const EVENTS_CHANNEL = 'flowplan_events';

export interface LoggedEvent {
  /** The drain's order, which the live fan-out follows. */
  position: string;
  /** The feed position: numbered per workspace. */
  seq: string;
  id: string;
  workspaceId: string;
  flowId: string | null;
  type: string;
  data: Record<string, unknown>;
  createdAt: Date;
}

/** Whose events a reader may see: one workspace's, and (for a person) the flows other workspaces share with them. */
export interface EventAudience {
  workspaceId: string;
  sharedFlowIds: readonly string[];
}

export interface EventFilter {
  types: readonly string[];
  flowId: string | null;
}

/**
 * Where a reader stands: the last feed position (`seq`) it was given of its own workspace and
 * of each other workspace it reads. `from` stands for every workspace not listed: a cursor
 * handed out before positions were numbered per workspace held one position of the
 * installation's order, which every workspace's numbering went on from, so it reads on
 * everywhere from there; a person's cursor lists each workspace it read, and one that shared
 * a flow with them since starts from its first event kept.
 */
export interface Marks {
  own: string;
  others: ReadonlyMap<string, string>;
  from: string;
}

const COLUMNS = 'position, seq, id, workspace_id, flow_id, type, data, created_at';

/** The newest drain position given (or, everything dropped, the last one dropped): where the fan-out goes on from. */
export async function latestPosition(sql: Db): Promise<string> {
  const [row] = await sql<{ position: string }[]>`select greatest(
      (select max(position) from outbox where position is not null),
      (select max(dropped_position) from event_log_dropped), 0)::text as position`;
  return row!.position;
}

/**
 * The marks of the newest events this audience may see (of its own workspace, or its dropped
 * ones, and of each workspace sharing flows with it), as of drain position `through` (null:
 * now): its cursor of that moment. Never a workspace's own newest where the reader sees only
 * shared flows of it, which would tell of that workspace's other activity.
 */
export async function latestMarks(
  sql: Db,
  audience: EventAudience,
  through: string | null = null,
): Promise<Marks> {
  const upTo = through === null ? sql`` : sql`and position <= ${through}::bigint`;
  const [own] = await sql<{ seq: string }[]>`select greatest(
      (select max(seq) from outbox where workspace_id = ${audience.workspaceId} and seq is not null ${upTo}),
      (select dropped_through from event_log_dropped where workspace_id = ${audience.workspaceId}), 0)::text as seq`;
  const others =
    audience.sharedFlowIds.length === 0
      ? []
      : await sql<{ workspaceId: string; seq: string }[]>`select workspace_id, max(seq)::text as seq
          from outbox where flow_id = any(${audience.sharedFlowIds as string[]}) and workspace_id <> ${audience.workspaceId}
            and seq is not null ${upTo}
          group by workspace_id`;
  return {
    own: own!.seq,
    others: new Map(others.map((r) => [r.workspaceId, r.seq])),
    from: '0',
  };
}

/** Per workspace named, the last feed position of its events that retention dropped (absent: none). */
export async function droppedThrough(
  sql: Db,
  workspaceIds: readonly string[],
): Promise<Map<string, string>> {
  const rows = await sql<
    { workspaceId: string; seq: string }[]
  >`select workspace_id, dropped_through::text as seq from event_log_dropped
    where workspace_id = any(${workspaceIds as string[]})`;
  return new Map(rows.map((r) => [r.workspaceId, r.seq]));
}

/**
 * Up to `limit` events after `marks`, that the audience may see and the filter keeps, in drain
 * order (within a workspace, the order of its feed positions: each workspace's part of a page
 * is the next of its events); `through` bounds the read by drain position (a stream catching
 * up to where the live feed is).
 */
export function readEvents(
  sql: Db,
  marks: Marks,
  limit: number,
  audience: EventAudience,
  filter: EventFilter,
  through: string | null = null,
): Promise<LoggedEvent[]> {
  const { workspaceId, sharedFlowIds } = audience;
  const flowClause = filter.flowId === null ? sql`` : sql`and flow_id = ${filter.flowId}`;
  const throughClause = through === null ? sql`` : sql`and position <= ${through}::bigint`;
  const own = sql`select ${sql.unsafe(COLUMNS)} from outbox
    where workspace_id = ${workspaceId} and seq > ${marks.own}::bigint ${throughClause}
      and type = any(${filter.types as string[]}) ${flowClause}`;
  if (sharedFlowIds.length === 0) return sql<LoggedEvent[]>`${own} order by seq limit ${limit}`;
  const others = [...marks.others];
  return sql<LoggedEvent[]>`select * from (
      (${own} order by seq limit ${limit})
      union all
      (select ${sql.unsafe(COLUMNS)} from outbox o
        where flow_id = any(${sharedFlowIds as string[]}) and workspace_id <> ${workspaceId}
          and seq > coalesce((select m.seq from unnest(${others.map(([w]) => w)}::text[], ${others.map(([, seq]) => seq)}::bigint[]) as m(workspace_id, seq)
            where m.workspace_id = o.workspace_id), ${marks.from}::bigint)
          ${throughClause} and type = any(${filter.types as string[]}) ${flowClause}
        order by position limit ${limit})
    ) e order by position limit ${limit}`;
}

/** Every event given a drain position after `after`, for the live fan-out (one read per process). */
export function eventsAfter(sql: Db, after: string, limit: number): Promise<LoggedEvent[]> {
  return sql<LoggedEvent[]>`select ${sql.unsafe(COLUMNS)} from outbox
    where position > ${after}::bigint order by position limit ${limit}`;
}

/** The flows of other workspaces shared with this person now (a revoked share is gone at once). */
export async function sharedFlowIds(
  sql: Db,
  userId: string,
  ownWorkspaceId: string,
): Promise<string[]> {
  const rows = await sql<{ flowId: string }[]>`select f.id as flow_id from shares s
      join users u on lower(u.email) = lower(s.email) join flows f on f.id = s.flow_id
    where u.id = ${userId} and f.workspace_id <> ${ownWorkspaceId}`;
  return rows.map((r) => r.flowId);
}

/**
 * Open streams' person tokens, checked again in one query: whether each is still valid (not
 * revoked, the person still a member where it acts) and the flows of other workspaces shared
 * with its person now. A token not found is absent from the answer.
 */
export async function personStreamStates(
  sql: Db,
  tokenIds: readonly string[],
): Promise<Map<string, { live: boolean; sharedFlowIds: string[] }>> {
  const rows = await sql<{ tokenId: string; live: boolean; sharedFlowIds: string[] }[]>`
    select t.id as token_id, (t.revoked_at is null and c.revoked_at is null and m.role is not null) as live,
      coalesce((select array_agg(f.id order by f.id) from shares s
          join users u on lower(u.email) = lower(s.email) join flows f on f.id = s.flow_id
        where u.id = t.user_id and f.workspace_id <> t.workspace_id), '{}') as shared_flow_ids
    from access_tokens t
      join credentials c on c.id = t.credential_id
      left join memberships m on m.workspace_id = t.workspace_id and m.user_id = t.user_id
    where t.id = any(${tokenIds as string[]})`;
  return new Map(rows.map((r) => [r.tokenId, { live: r.live, sharedFlowIds: r.sharedFlowIds }]));
}

/**
 * A secret of the server's (sql/0019_server_secrets.sql): the one stored under `name`, or
 * `candidate` stored now when there is none yet; every process gets the same.
 */
export async function serverSecret(sql: Db, name: string, candidate: Buffer): Promise<Buffer> {
  await sql`insert into server_secrets (name, value) values (${name}, ${candidate}) on conflict (name) do nothing`;
  const [row] = await sql<
    { value: Buffer }[]
  >`select value from server_secrets where name = ${name}`;
  return row!.value;
}

// ── retention ────────────────────────────────────────────────────────────────────────

const DAY_MS = 86_400_000;

function partitionName(day: Date): string {
  return `outbox_${day.toISOString().slice(0, 10).replaceAll('-', '')}`;
}

function utcDay(at: Date): Date {
  return new Date(Math.floor(at.getTime() / DAY_MS) * DAY_MS);
}

/** Creates the day partitions from today (UTC) through `daysAhead` days on that do not exist yet; returns their names. */
export async function ensureEventPartitions(
  sql: Sql,
  daysAhead: number,
  now = new Date(),
): Promise<string[]> {
  const today = utcDay(now);
  const wanted = Array.from(
    { length: daysAhead + 1 },
    (_, i) => new Date(today.getTime() + i * DAY_MS),
  );
  const existing = new Set((await partitions(sql)).map((p) => p.name));
  const created: string[] = [];
  for (const day of wanted) {
    const name = partitionName(day);
    if (existing.has(name)) continue;
    const from = day.toISOString();
    const to = new Date(day.getTime() + DAY_MS).toISOString();
    await sql.unsafe(
      `create table if not exists ${name} partition of outbox for values from ('${from}') to ('${to}')`,
    );
    created.push(name);
  }
  return created;
}

interface Partition {
  name: string;
  /** The partition's day (UTC midnight), from its name. */
  day: Date;
}

async function partitions(sql: Db): Promise<Partition[]> {
  const rows = await sql<{ name: string }[]>`select c.relname as name from pg_inherits i
      join pg_class c on c.oid = i.inhrelid join pg_class p on p.oid = i.inhparent
    where p.relname = 'outbox' and p.relnamespace = current_schema()::regnamespace order by c.relname`;
  return rows.flatMap(({ name }) => {
    const m = /^outbox_(\d{4})(\d{2})(\d{2})$/.exec(name);
    return m ? [{ name, day: new Date(`${m[1]}-${m[2]}-${m[3]}T00:00:00Z`) }] : [];
  });
}

/**
 * Drops the day partitions that ended more than `retentionDays` days ago, oldest first, and
 * records, per workspace, the last position of its events they held. A partition with an event not yet drained is kept (and
 * so is every later one): an event is never lost before it had its position.
 */
export async function dropExpiredPartitions(
  sql: Sql,
  retentionDays: number,
  now = new Date(),
): Promise<{ dropped: string[]; keptUndrained: string | null }> {
  const cutoff = utcDay(now).getTime() - retentionDays * DAY_MS;
  const dropped: string[] = [];
  for (const partition of await partitions(sql)) {
    if (partition.day.getTime() + DAY_MS > cutoff) break;
    const kept = await sql.begin(async (tx) => {
      const [row] = await tx.unsafe<{ undrained: number }[]>(
        `select count(*) filter (where position is null)::int as undrained from ${partition.name}`,
      );
      if (row!.undrained > 0) return true;
      await tx.unsafe(`insert into event_log_dropped (workspace_id, dropped_through, dropped_position)
        select workspace_id, max(seq), max(position) from ${partition.name} group by workspace_id
        on conflict (workspace_id) do update set dropped_through = greatest(event_log_dropped.dropped_through, excluded.dropped_through),
          dropped_position = greatest(event_log_dropped.dropped_position, excluded.dropped_position)`);
      await tx.unsafe(`drop table ${partition.name}`);
      return false;
    });
    if (kept) return { dropped, keptUndrained: partition.name };
    dropped.push(partition.name);
  }
  return { dropped, keptUndrained: null };
}

/** Notification preferences, pending batch events, deliveries and unsubscribe links. */
import type { Db, Tx } from './db.ts';
import type { Page, PageRequest } from '../platform/paging.ts';
import { pageOf } from './paging.ts';

export interface SettingsRow {
  email: boolean;
  assigned: boolean;
  unlocked: boolean;
  digest: boolean;
  timezone: string;
  digestHour: number;
}

export const DEFAULT_SETTINGS: SettingsRow = {
  email: true,
  assigned: true,
  unlocked: true,
  digest: true,
  timezone: 'UTC',
  digestHour: 8,
};

export async function memberEmail(
  sql: Db,
  workspaceId: string,
  memberId: string,
): Promise<{ email: string; name: string } | null> {
  const [row] = await sql<
    { email: string; name: string }[]
  >`select u.email, u.name from memberships m join users u on u.id = m.user_id
    where m.workspace_id = ${workspaceId} and m.user_id = ${memberId}`;
  return row ?? null;
}

export async function flowInWorkspace(
  sql: Db,
  workspaceId: string,
  flowId: string,
): Promise<boolean> {
  const [row] =
    await sql`select 1 from flows where id = ${flowId} and workspace_id = ${workspaceId}`;
  return row !== undefined;
}

export async function loadSettings(
  sql: Db,
  workspaceId: string,
  memberId: string,
): Promise<SettingsRow> {
  const [row] = await sql<
    SettingsRow[]
  >`select email, assigned, unlocked, digest, timezone, digest_hour from notification_settings
    where workspace_id = ${workspaceId} and member_id = ${memberId}`;
  return row ?? DEFAULT_SETTINGS;
}

export async function saveSettings(
  sql: Db,
  workspaceId: string,
  memberId: string,
  s: SettingsRow,
): Promise<void> {
  await sql`insert into notification_settings (workspace_id, member_id, email, assigned, unlocked, digest, timezone, digest_hour)
    values (${workspaceId}, ${memberId}, ${s.email}, ${s.assigned}, ${s.unlocked}, ${s.digest}, ${s.timezone}, ${s.digestHour})
    on conflict (workspace_id, member_id) do update set email = excluded.email, assigned = excluded.assigned,
      unlocked = excluded.unlocked, digest = excluded.digest, timezone = excluded.timezone,
      digest_hour = excluded.digest_hour, updated_at = now()`;
}

/** Locks the member's settings row (created with defaults if missing) so read-modify-write is safe. */
export async function lockSettings(
  tx: Tx,
  workspaceId: string,
  memberId: string,
): Promise<SettingsRow> {
  await tx`insert into notification_settings (workspace_id, member_id) values (${workspaceId}, ${memberId}) on conflict do nothing`;
  const [row] = await tx<
    SettingsRow[]
  >`select email, assigned, unlocked, digest, timezone, digest_hour from notification_settings
    where workspace_id = ${workspaceId} and member_id = ${memberId} for update`;
  return row!;
}

export async function flowMuted(
  sql: Db,
  workspaceId: string,
  memberId: string,
  flowId: string,
): Promise<boolean | null> {
  const [row] = await sql<{ muted: boolean }[]>`select muted from notification_flow_settings
    where workspace_id = ${workspaceId} and member_id = ${memberId} and flow_id = ${flowId}`;
  return row?.muted ?? null;
}

export async function mutedFlows(
  sql: Db,
  workspaceId: string,
  memberId: string,
): Promise<Set<string>> {
  const rows = await sql<{ flowId: string }[]>`select flow_id from notification_flow_settings
    where workspace_id = ${workspaceId} and member_id = ${memberId} and muted`;
  return new Set(rows.map((r) => r.flowId));
}

/** The live flows of a workspace a member may mute, by name (at most `limit`). */
export function liveFlowNames(
  sql: Db,
  workspaceId: string,
  limit: number,
): Promise<{ id: string; name: string }[]> {
  return sql<
    { id: string; name: string }[]
  >`select id, name from flows where workspace_id = ${workspaceId} and not archived order by lower(name), id limit ${limit}`;
}

export async function setFlowMuted(
  sql: Db,
  workspaceId: string,
  memberId: string,
  flowId: string,
  muted: boolean,
): Promise<void> {
  await sql`insert into notification_flow_settings (workspace_id, member_id, flow_id, muted) values (${workspaceId}, ${memberId}, ${flowId}, ${muted})
    on conflict (workspace_id, member_id, flow_id) do update set muted = excluded.muted, updated_at = now()`;
}

// Batch events

export interface PendingRow {
  id: string;
  kind: 'assigned' | 'unlocked';
  flowId: string;
  taskId: string;
  createdAt: Date;
}

export async function currentAssignees(
  sql: Db,
  taskIds: readonly string[],
): Promise<Map<string, string | null>> {
  if (taskIds.length === 0) return new Map();
  const rows = await sql<
    { id: string; assigneeId: string | null }[]
  >`select id, assignee_id from tasks where id in ${sql([...new Set(taskIds)])}`;
  return new Map(rows.map((r) => [r.id, r.assigneeId]));
}

export async function addPending(
  tx: Tx,
  rows: readonly {
    workspaceId: string;
    memberId: string;
    kind: string;
    flowId: string;
    taskId: string;
  }[],
): Promise<void> {
  if (rows.length === 0) return;
  await tx`insert into notification_pending ${tx(rows.map((r) => ({ workspace_id: r.workspaceId, member_id: r.memberId, kind: r.kind, flow_id: r.flowId, task_id: r.taskId })))}`;
}

/** Drops a task's waiting events for one member (unassigned) or everyone (deleted). */
export async function dropPendingForTask(
  tx: Tx,
  taskId: string,
  memberId: string | null,
): Promise<void> {
  await tx`delete from notification_pending where task_id = ${taskId} ${memberId ? tx`and member_id = ${memberId}` : tx``}`;
}

/** Opens or extends the member's batch window; returns when it is due. */
export async function extendBatchWindow(
  tx: Tx,
  workspaceId: string,
  memberId: string,
  quietSeconds: number,
  maxWaitSeconds: number,
): Promise<Date> {
  const [row] = await tx<
    { dueAt: Date }[]
  >`insert into notification_batches (workspace_id, member_id, first_event_at, due_at)
    values (${workspaceId}, ${memberId}, now(), now() + make_interval(secs => ${quietSeconds}))
    on conflict (workspace_id, member_id) do update set
      due_at = least(now() + make_interval(secs => ${quietSeconds}), notification_batches.first_event_at + make_interval(secs => ${maxWaitSeconds}))
    returning due_at`;
  return row!.dueAt;
}

/** Closes a due window and takes its events; null while the window is still open (or gone). */
export async function takeDueBatch(
  tx: Tx,
  workspaceId: string,
  memberId: string,
): Promise<PendingRow[] | null> {
  const [window] = await tx<
    { due: boolean }[]
  >`select due_at <= now() as due from notification_batches
    where workspace_id = ${workspaceId} and member_id = ${memberId} for update`;
  if (!window?.due) return null;
  await tx`delete from notification_batches where workspace_id = ${workspaceId} and member_id = ${memberId}`;
  return tx<
    PendingRow[]
  >`delete from notification_pending where workspace_id = ${workspaceId} and member_id = ${memberId}
    returning id, kind, flow_id, task_id, created_at`;
}

export interface TaskFacts {
  id: string;
  name: string;
  flowId: string;
  flowName: string;
  assigneeId: string | null;
  archived: boolean;
  estimateHours: number | null;
}

export async function taskFacts(
  sql: Db,
  taskIds: readonly string[],
): Promise<Map<string, TaskFacts>> {
  if (taskIds.length === 0) return new Map();
  const rows = await sql<
    TaskFacts[]
  >`select t.id, t.name, t.flow_id, f.name as flow_name, t.assignee_id, f.archived, t.estimate_hours
    from tasks t join flows f on f.id = t.flow_id where t.id in ${sql([...new Set(taskIds)])}`;
  return new Map(rows.map((r) => [r.id, r]));
}

// Deliveries

export type DeliveryStatus = 'claimed' | 'sent' | 'failed' | 'skipped' | 'skipped-empty';

export interface StoredMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
  headers: Record<string, string>;
}

export interface DeliveryRow {
  id: string;
  workspaceId: string;
  memberId: string;
  kind: 'batch' | 'digest';
  status: DeliveryStatus;
  reason: string | null;
  recipient: string | null;
  subject: string | null;
  itemCount: number;
  flowIds: string[];
  suppressed: number;
  messageId: string | null;
  transport: string | null;
  message: StoredMessage | null;
  attempt: number;
  retryOf: string | null;
  digestDate: string | null;
  createdAt: Date;
  finishedAt: Date | null;
}

export interface NewDelivery {
  id: string;
  workspaceId: string;
  memberId: string;
  kind: 'batch' | 'digest';
  status: DeliveryStatus;
  reason?: string | null;
  recipient?: string | null;
  subject?: string | null;
  itemCount?: number;
  flowIds?: string[];
  suppressed?: number;
  messageId?: string | null;
  message?: StoredMessage | null;
  attempt?: number;
  retryOf?: string | null;
  digestDate?: string | null;
}

const DELIVERY_COLUMNS =
  'id, workspace_id, member_id, kind, status, reason, recipient, subject, item_count, flow_ids, suppressed, message_id, transport, message, attempt, retry_of, digest_date::text as digest_date, created_at, finished_at';

/**
 * Inserts a delivery; a second digest for the same member and local day, or a second retry of
 * one attempt, inserts nothing and answers null (the unique keys make both at most once).
 */
export async function insertDelivery(sql: Db, d: NewDelivery): Promise<DeliveryRow | null> {
  const [row] = await sql<
    DeliveryRow[]
  >`insert into notification_deliveries (id, workspace_id, member_id, kind, status, reason, recipient, subject,
      item_count, flow_ids, suppressed, message_id, message, attempt, retry_of, digest_date, finished_at)
    values (${d.id}, ${d.workspaceId}, ${d.memberId}, ${d.kind}, ${d.status}, ${d.reason ?? null}, ${d.recipient ?? null}, ${d.subject ?? null},
      ${d.itemCount ?? 0}, ${d.flowIds ?? []}, ${d.suppressed ?? 0}, ${d.messageId ?? null}, ${d.message ? sql.json(d.message as never) : null},
      ${d.attempt ?? 1}, ${d.retryOf ?? null}, ${d.digestDate ?? null}, ${d.status === 'claimed' ? null : sql`now()`})
    on conflict do nothing
    returning ${sql.unsafe(DELIVERY_COLUMNS)}`;
  return row ?? null;
}

export async function finishDelivery(
  sql: Db,
  id: string,
  outcome: { status: 'sent'; transport: string } | { status: 'failed'; reason: string },
): Promise<boolean> {
  const result = await sql`update notification_deliveries set status = ${outcome.status},
      transport = ${outcome.status === 'sent' ? outcome.transport : null}, reason = ${outcome.status === 'failed' ? outcome.reason : null},
      finished_at = now()
    where id = ${id} and status = 'claimed'`;
  return result.count === 1;
}

export async function lockDelivery(tx: Tx, id: string): Promise<DeliveryRow | null> {
  const [row] = await tx<
    DeliveryRow[]
  >`select ${tx.unsafe(DELIVERY_COLUMNS)} from notification_deliveries where id = ${id} for update`;
  return row ?? null;
}

/**
 * Claims that outlived any send (the process died between claim and send, or mid-send) become
 * failed, never retried: whether the mail left is unknown, and a second copy is worse than none.
 */
export async function failStaleClaims(sql: Db, olderThanSeconds: number): Promise<number> {
  const result =
    await sql`update notification_deliveries set status = 'failed', finished_at = now(),
      reason = 'interrupted: the process stopped during the send; not retried, so it is never sent twice'
    where status = 'claimed' and created_at < now() - make_interval(secs => ${olderThanSeconds})`;
  return result.count;
}

export async function pageDeliveries(
  sql: Db,
  workspaceId: string,
  memberId: string,
  page: PageRequest,
): Promise<Page<DeliveryRow>> {
  return pageOf<DeliveryRow>(
    sql,
    {
      columns: sql.unsafe(DELIVERY_COLUMNS),
      source: sql`from notification_deliveries where workspace_id = ${workspaceId} and member_id = ${memberId}`,
      order: sql`created_at desc, id desc`,
    },
    page,
  );
}

// Digest scheduling

export interface DigestCandidate {
  workspaceId: string;
  memberId: string;
  digestHour: number;
  /** The member's wall clock at the tick, and its date. */
  localNow: string;
  localDate: string;
}

/** A digest goes out within this many hours after the digest hour (a restart catches up; a day-long outage skips a day). */
export const DIGEST_CATCH_UP_HOURS = 3;

/**
 * Members whose local time at `at` is past their digest hour today (by less than the
 * catch-up window), who were members before that hour began (someone who joins later gets
 * their first digest the next day), and who have no digest row for that local day yet.
 * Postgres converts with its tz database, so DST is exact.
 */
export async function digestCandidates(sql: Db, at: Date): Promise<DigestCandidate[]> {
  return sql<DigestCandidate[]>`with members as (
      select m.workspace_id, m.user_id as member_id, m.created_at as joined_at,
        coalesce(s.timezone, 'UTC') as timezone, coalesce(s.digest_hour, 8) as digest_hour
      from memberships m left join notification_settings s on s.workspace_id = m.workspace_id and s.member_id = m.user_id
      where coalesce(s.digest, true) and coalesce(s.email, true)
    ), local as (
      select workspace_id, member_id, joined_at, timezone, digest_hour, (${at}::timestamptz at time zone timezone) as local_now from members
    ), due as (
      select *, local_now::date + make_interval(hours => digest_hour) as local_hour_start from local
    )
    select l.workspace_id, l.member_id, l.digest_hour, to_char(l.local_now, 'YYYY-MM-DD"T"HH24:MI:SS') as local_now,
      l.local_now::date::text as local_date
    from due l
    where l.local_now >= l.local_hour_start
      and l.local_now < l.local_hour_start + make_interval(hours => ${DIGEST_CATCH_UP_HOURS})
      and l.joined_at < (l.local_hour_start at time zone l.timezone)
      and not exists (select 1 from notification_deliveries d where d.workspace_id = l.workspace_id and d.member_id = l.member_id
        and d.kind = 'digest' and d.attempt = 1 and d.digest_date = l.local_now::date)`;
}

// Digest content

export interface VisibleFlow {
  workspaceId: string;
  flowId: string;
}

/** Live flows of the workspace, and live flows shared with the person's address from other workspaces. */
export async function visibleFlows(
  sql: Db,
  workspaceId: string,
  memberId: string,
): Promise<VisibleFlow[]> {
  return sql<
    VisibleFlow[]
  >`select workspace_id, id as flow_id from flows where workspace_id = ${workspaceId} and not archived
    union
    select f.workspace_id, f.id from shares s join users u on lower(u.email) = lower(s.email) join flows f on f.id = s.flow_id
    where u.id = ${memberId} and not f.archived and f.workspace_id <> ${workspaceId}
    order by 1, 2`;
}

export async function completedSince(
  sql: Db,
  flowIds: readonly string[],
  since: Date,
): Promise<{ id: string; flowId: string; completedAt: Date }[]> {
  if (flowIds.length === 0) return [];
  return sql`select id, flow_id, completed_at from tasks where flow_id in ${sql([...flowIds])} and parent_id is null
    and progress = 2 and completed_at >= ${since} order by completed_at desc, id`;
}

// Unsubscribe links

export async function unsubscribeToken(
  sql: Db,
  workspaceId: string,
  memberId: string,
  kind: 'batch' | 'digest',
  fresh: string,
): Promise<string> {
  const [row] = await sql<
    { token: string }[]
  >`insert into notification_unsubscribe (token, workspace_id, member_id, kind)
    values (${fresh}, ${workspaceId}, ${memberId}, ${kind})
    on conflict (workspace_id, member_id, kind) do update set kind = excluded.kind
    returning token`;
  return row!.token;
}

export async function findUnsubscribe(
  sql: Db,
  token: string,
): Promise<{
  workspaceId: string;
  memberId: string;
  kind: 'batch' | 'digest';
  email: string;
} | null> {
  const [row] = await sql<
    { workspaceId: string; memberId: string; kind: 'batch' | 'digest'; email: string }[]
  >`select n.workspace_id, n.member_id, n.kind, u.email
    from notification_unsubscribe n join users u on u.id = n.member_id where n.token = ${token}`;
  return row ?? null;
}

/** Whether Postgres's tz database knows the zone (the digest schedule converts with it). */
export async function postgresKnowsZone(sql: Db, zone: string): Promise<boolean> {
  try {
    await sql`select now() at time zone ${zone}`;
    return true;
  } catch {
    return false;
  }
}

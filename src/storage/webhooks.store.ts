/** Webhook endpoints, their deliveries (one per endpoint and event) and each attempt. */
import { tryTransactionLock, type Db, type Tx } from './db.ts';
import type { OutboxRow } from './jobs.store.ts';
import type { Page, PageRequest } from '../platform/paging.ts';
import { pageOf } from './paging.ts';

export interface WebhookRow {
  id: string;
  workspaceId: string;
  url: string;
  events: string[];
  description: string | null;
  enabled: boolean;
  /** Why the service switched it off (a 410 Gone); null when enabled or switched off by its owner. */
  disabledReason: 'gone' | null;
  secret: string;
  previousSecret: string | null;
  previousSecretExpiresAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export type DeliveryStatus = 'pending' | 'queued' | 'sending' | 'delivered' | 'failed' | 'skipped';

export interface DeliveryRow {
  id: string;
  webhookId: string;
  workspaceId: string;
  eventId: string;
  flowKey: string;
  type: string;
  body: string;
  status: DeliveryStatus;
  attempts: number;
  attemptLimit: number;
  manual: boolean;
  nextAttemptAt: Date | null;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: Date;
  finishedAt: Date | null;
}

export interface AttemptRow {
  deliveryId: string;
  attempt: number;
  manual: boolean;
  startedAt: Date;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  retryAfter: number | null;
}

export interface Lane {
  webhookId: string;
  flowKey: string;
}

/** Lane locks live in their own advisory-lock space (two-int keys), apart from the single-key ones. */
const LANE_LOCK_CLASS = 8008;
/** One collector at a time (like the outbox drain, for the same reason: a flow's events in commit order). */
const COLLECT_LOCK = 7_046_231_908;
const UNFINISHED = ['pending', 'queued', 'sending'];

export async function insertWebhook(sql: Db, row: Pick<WebhookRow, 'id' | 'workspaceId' | 'url' | 'events' | 'description' | 'secret'>): Promise<WebhookRow> {
  const [created] = await sql<WebhookRow[]>`insert into webhooks (id, workspace_id, url, events, description, secret)
    values (${row.id}, ${row.workspaceId}, ${row.url}, ${row.events}, ${row.description}, ${row.secret}) returning *`;
  return created!;
}

export async function countWebhooks(sql: Db, workspaceId: string): Promise<number> {
  const [row] = await sql<{ n: number }[]>`select count(*)::int as n from webhooks where workspace_id = ${workspaceId}`;
  return row!.n;
}

export async function pageWebhooks(sql: Db, workspaceId: string, page: PageRequest): Promise<Page<WebhookRow>> {
  return pageOf<WebhookRow>(sql, { columns: sql`*`, source: sql`from webhooks where workspace_id = ${workspaceId}`, order: sql`created_at desc, id desc` }, page);
}

export async function getWebhook(sql: Db, workspaceId: string, id: string): Promise<WebhookRow | null> {
  const [row] = await sql<WebhookRow[]>`select * from webhooks where id = ${id} and workspace_id = ${workspaceId}`;
  return row ?? null;
}

export async function updateWebhook(
  sql: Db, workspaceId: string, id: string,
  patch: { url?: string; events?: string[]; description?: string | null; enabled?: boolean },
): Promise<WebhookRow | null> {
  const [row] = await sql<WebhookRow[]>`update webhooks set
      url = coalesce(${patch.url ?? null}, url),
      events = coalesce(${patch.events ?? null}::text[], events),
      description = case when ${patch.description !== undefined} then ${patch.description ?? null} else description end,
      enabled = coalesce(${patch.enabled ?? null}::boolean, enabled),
      -- Switching it on or off by hand clears the reason the service gave.
      disabled_reason = case when ${patch.enabled ?? null}::boolean is null then disabled_reason end,
      updated_at = now()
    where id = ${id} and workspace_id = ${workspaceId} returning *`;
  return row ?? null;
}

/** The new secret signs from now on; the one it replaces keeps signing for `overlapSeconds`. */
export async function rotateWebhookSecret(sql: Db, workspaceId: string, id: string, secret: string, overlapSeconds: number): Promise<WebhookRow | null> {
  const [row] = await sql<WebhookRow[]>`update webhooks set previous_secret = secret,
      previous_secret_expires_at = now() + make_interval(secs => ${overlapSeconds}), secret = ${secret}, updated_at = now()
    where id = ${id} and workspace_id = ${workspaceId} returning *`;
  return row ?? null;
}

export async function deleteWebhook(sql: Db, workspaceId: string, id: string): Promise<boolean> {
  const result = await sql`delete from webhooks where id = ${id} and workspace_id = ${workspaceId}`;
  return result.count > 0;
}

/** Enabled endpoints of these workspaces, for the outbox drain. */
export function enabledWebhooks(sql: Db, workspaceIds: readonly string[]): Promise<Pick<WebhookRow, 'id' | 'workspaceId' | 'events' | 'createdAt'>[]> {
  return sql`select id, workspace_id, events, created_at from webhooks where enabled and workspace_id = any(${workspaceIds as string[]})`;
}

/**
 * Takes the collector's lock for this transaction, or says another process holds it. Within a
 * flow, commits are serialised by the flow's version, so collecting in id order by one
 * collector at a time keeps each flow's events in commit order.
 */
export function tryCollectLock(tx: Tx): Promise<boolean> {
  return tryTransactionLock(tx, COLLECT_LOCK);
}

/** Domain events whose webhook deliveries are not written yet, oldest first. */
export function uncollectedEvents(tx: Tx, limit: number): Promise<OutboxRow[]> {
  return tx<OutboxRow[]>`select id, workspace_id, flow_id, type, data, actor_id, created_at from outbox
    where webhooks_at is null order by id limit ${limit}`;
}

export async function markCollected(tx: Tx, ids: readonly string[]): Promise<void> {
  await tx`update outbox set webhooks_at = now() where id = any(${ids as string[]}::bigint[])`;
}

export async function insertDeliveries(
  tx: Tx,
  rows: readonly { id: string; webhookId: string; workspaceId: string; eventId: string; flowKey: string; type: string; body: string; attemptLimit: number }[],
): Promise<void> {
  for (let i = 0; i < rows.length; i += 2000) {
    const chunk = rows.slice(i, i + 2000).map((r) => ({
      id: r.id, webhook_id: r.webhookId, workspace_id: r.workspaceId, event_id: r.eventId, flow_key: r.flowKey,
      type: r.type, body: r.body, status: 'pending', attempt_limit: r.attemptLimit,
    }));
    await tx`insert into webhook_deliveries ${tx(chunk)} on conflict (webhook_id, event_id) do nothing`;
  }
}

/** Serialises every change to these lanes until the transaction ends (sorted: no deadlock between holders of several). */
export async function lockLanes(tx: Tx, lanes: readonly Lane[]): Promise<void> {
  const keys = [...new Set(lanes.map((l) => `${l.webhookId}:${l.flowKey}`))].sort();
  if (keys.length === 0) return;
  await tx`select pg_advisory_xact_lock(${LANE_LOCK_CLASS}, hashtext(k)) from unnest(${keys}::text[]) with ordinality as u(k, n) order by n`;
}

/** A delivery taken for one attempt: what the sender needs. */
export interface ClaimedDelivery {
  id: string;
  webhookId: string;
  flowKey: string;
  body: string;
  /** This attempt's number. */
  attempts: number;
  attemptLimit: number;
  manual: boolean;
}

const CLAIMED_COLUMNS = 'd.id, d.webhook_id, d.flow_key, d.body, d.attempts, d.attempt_limit, d.manual';

/**
 * Each lane's earliest unfinished delivery becomes its head if it is still waiting (`pending`
 * → `queued`, due now or at the back-off time it already had). Up to `claim` of the heads due
 * now (these, or queued ones nobody has claimed) are claimed at once (`sending`, with a lease)
 * and returned in `claimed`, for the caller to send after commit; `queued` are the heads left
 * waiting (with their due times, for a wake-up).
 */
export async function promoteLaneHeads(
  tx: Tx, lanes: readonly Lane[], claim: number, leaseSeconds: number,
): Promise<{ claimed: ClaimedDelivery[]; queued: { id: string; nextAttemptAt: Date; due: boolean }[] }> {
  if (lanes.length === 0) return { claimed: [], queued: [] };
  const rows = await tx<(ClaimedDelivery & { status: DeliveryStatus; nextAttemptAt: Date; due: boolean })[]>`
    with lanes as (select * from unnest(${lanes.map((l) => l.webhookId)}::text[], ${lanes.map((l) => l.flowKey)}::text[]) as l(webhook_id, flow_key)),
    heads as (
      select h.id, h.due, h.due and row_number() over (order by h.due desc, h.event_id) <= ${claim} as take
      from lanes l cross join lateral (
        select d.id, d.status, d.event_id, coalesce(d.next_attempt_at <= now(), true) as due from webhook_deliveries d
        where d.webhook_id = l.webhook_id and d.flow_key = l.flow_key and d.status in ${tx(UNFINISHED)}
        order by d.event_id limit 1
      ) h
      where h.status = 'pending' or (h.status = 'queued' and h.due)
    )
    update webhook_deliveries d set
      status = case when heads.take then 'sending' else 'queued' end,
      attempts = d.attempts + case when heads.take then 1 else 0 end,
      next_attempt_at = case when heads.take then now() + make_interval(secs => ${leaseSeconds})
        else greatest(now(), coalesce(d.next_attempt_at, now())) end
    -- Rechecked on a row another process claimed meanwhile: that claim stands.
    from heads where d.id = heads.id and d.status in ('pending', 'queued')
    returning ${tx.unsafe(CLAIMED_COLUMNS)}, d.status, d.next_attempt_at, heads.due`;
  const claimed: ClaimedDelivery[] = [];
  const queued: { id: string; nextAttemptAt: Date; due: boolean }[] = [];
  for (const { status, nextAttemptAt, due, ...delivery } of rows) {
    if (status === 'sending') claimed.push(delivery);
    else queued.push({ id: delivery.id, nextAttemptAt, due });
  }
  return { claimed, queued };
}

/**
 * Claims up to `limit` due lane heads for one attempt each (`sending`, attempts + 1, a lease
 * that outlives any attempt: its end is the claim's `next_attempt_at`, so a claim whose
 * process died is due again once it lapses). Rows another process is claiming are skipped, not
 * waited for; a queued delivery with an earlier unfinished one in its lane (a manual retry's
 * lane) waits.
 */
export function claimDue(sql: Db, limit: number, leaseSeconds: number): Promise<ClaimedDelivery[]> {
  return sql<ClaimedDelivery[]>`update webhook_deliveries d set status = 'sending', attempts = d.attempts + 1,
      next_attempt_at = now() + make_interval(secs => ${leaseSeconds})
    from (
      select c.id from webhook_deliveries c
      where c.status in ('queued', 'sending') and c.next_attempt_at <= now()
        and not exists (select 1 from webhook_deliveries e where e.webhook_id = c.webhook_id and e.flow_key = c.flow_key
          and e.event_id < c.event_id and e.status in ${sql(UNFINISHED)})
      order by c.next_attempt_at limit ${limit}
      for update skip locked
    ) picked
    where d.id = picked.id
    returning ${sql.unsafe(CLAIMED_COLUMNS)}`;
}

/** How an attempt ended: `retry` keeps the delivery queued for another try after `delaySeconds`. */
export interface Outcome {
  id: string;
  status: 'delivered' | 'failed' | 'skipped' | 'retry';
  delaySeconds: number;
  statusCode: number | null;
  error: string | null;
  /** The attempt's row; none when it was skipped before anything was sent. */
  attempt: AttemptRow | null;
}

/** Writes a batch of outcomes (each delivery's state and its attempt row); returns when each retry is due. */
export async function recordOutcomes(tx: Tx, outcomes: readonly Outcome[]): Promise<Date[]> {
  const attempts = outcomes.flatMap((o) => (o.attempt ? [o.attempt] : []));
  if (attempts.length > 0) {
    await tx`insert into webhook_attempts ${tx(attempts.map((a) => ({
      delivery_id: a.deliveryId, attempt: a.attempt, manual: a.manual, started_at: a.startedAt, duration_ms: a.durationMs,
      status_code: a.statusCode, error: a.error, retry_after: a.retryAfter,
    })))}`;
  }
  const rows = await tx<{ nextAttemptAt: Date | null }[]>`update webhook_deliveries d set
      status = case when u.status = 'retry' then 'queued' else u.status end,
      -- A skip sent nothing: the claim's attempt is given back.
      attempts = d.attempts - case when u.status = 'skipped' then 1 else 0 end,
      last_status_code = u.code, last_error = u.error,
      next_attempt_at = case when u.status = 'retry' then now() + make_interval(secs => u.delay) end,
      finished_at = case when u.status = 'retry' then null else now() end,
      manual = false
    from unnest(${outcomes.map((o) => o.id)}::text[], ${outcomes.map((o) => o.status)}::text[], ${outcomes.map((o) => o.statusCode) as number[]}::int[],
      ${outcomes.map((o) => o.error) as string[]}::text[], ${outcomes.map((o) => o.delaySeconds)}::float8[]) as u(id, status, code, error, delay)
    where d.id = u.id
    returning d.next_attempt_at`;
  return rows.flatMap((r) => (r.nextAttemptAt ? [r.nextAttemptAt] : []));
}

/** The endpoints of a batch of claimed deliveries. */
export function webhooksByIds(sql: Db, ids: readonly string[]): Promise<WebhookRow[]> {
  return sql<WebhookRow[]>`select * from webhooks where id = any(${ids as string[]})`;
}

/** Endpoints that answered 410 Gone: disabled, with that reason. */
export async function disableWebhooks(sql: Db, ids: readonly string[], reason: string): Promise<void> {
  await sql`update webhooks set enabled = false, disabled_reason = ${reason}, updated_at = now() where id = any(${ids as string[]})`;
}

/** A manual retry: one more attempt, as soon as its lane lets it. */
export async function reopenDelivery(tx: Tx, id: string): Promise<void> {
  await tx`update webhook_deliveries set status = 'pending', attempt_limit = attempts + 1, manual = true,
    next_attempt_at = null, finished_at = null where id = ${id}`;
}

export async function getDelivery(sql: Db, webhookId: string, id: string): Promise<DeliveryRow | null> {
  const [row] = await sql<DeliveryRow[]>`select * from webhook_deliveries where id = ${id} and webhook_id = ${webhookId}`;
  return row ?? null;
}

export async function pageDeliveries(sql: Db, webhookId: string, page: PageRequest): Promise<Page<DeliveryRow>> {
  return pageOf<DeliveryRow>(sql, { columns: sql`*`, source: sql`from webhook_deliveries where webhook_id = ${webhookId}`, order: sql`event_id desc` }, page);
}

/** The latest attempts of these deliveries, oldest first per delivery. */
export function attemptsOf(sql: Db, deliveryIds: readonly string[], perDelivery: number): Promise<AttemptRow[]> {
  return sql<AttemptRow[]>`select delivery_id, attempt, manual, started_at, duration_ms, status_code, error, retry_after from (
      select *, row_number() over (partition by delivery_id order by id desc) as n from webhook_attempts
      where delivery_id = any(${deliveryIds as string[]})
    ) a where n <= ${perDelivery} order by delivery_id, id`;
}

/** For the sweep: claims whose lease lapsed (their process died) and queued deliveries due now. */
export async function dueCounts(sql: Db): Promise<{ lapsed: number; due: number }> {
  const [row] = await sql<{ lapsed: number; due: number }[]>`select
      count(*) filter (where status = 'sending')::int as lapsed, count(*) filter (where status = 'queued')::int as due
    from webhook_deliveries where status in ('queued', 'sending') and next_attempt_at <= now()`;
  return row!;
}

/** Delivery work committed: wakes the webhook workers of every process (NOTIFY is sent at commit). */
export const WEBHOOKS_CHANNEL = 'flowplan_webhooks';

export async function announceWebhookWork(tx: Db): Promise<void> {
  await tx`select pg_notify(${WEBHOOKS_CHANNEL}, '')`;
}

export interface WebhookBacklog {
  /** Domain events not collected into deliveries yet. */
  collecting: number;
  pending: number;
  queued: number;
  sending: number;
  failedLastDay: number;
}

/**
 * Events not collected yet, unfinished webhook deliveries by state (`pending` wait behind
 * their lane's head), and failures of the last day.
 */
export async function webhookBacklog(sql: Db): Promise<WebhookBacklog> {
  const [row] = await sql<WebhookBacklog[]>`select
      (select count(*)::int from outbox where webhooks_at is null) as collecting,
      count(*) filter (where status = 'pending')::int as pending,
      count(*) filter (where status = 'queued')::int as queued,
      count(*) filter (where status = 'sending')::int as sending,
      (select count(*)::int from webhook_deliveries where status = 'failed' and finished_at > now() - interval '1 day') as failed_last_day
    from webhook_deliveries where status in ('pending', 'queued', 'sending')`;
  return row!;
}

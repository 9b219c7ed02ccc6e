/** Webhook endpoints, their deliveries (one per endpoint and event) and each attempt. */
import type { Db, Tx } from './db.ts';

export interface WebhookRow {
  id: string;
  workspaceId: string;
  url: string;
  events: string[];
  description: string | null;
  enabled: boolean;
  disabledReason: string | null;
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
  leaseUntil: Date | null;
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

export async function pageWebhooks(sql: Db, workspaceId: string, size: number, from: number): Promise<{ total: number; items: WebhookRow[] }> {
  const items = await sql<WebhookRow[]>`select * from webhooks where workspace_id = ${workspaceId}
    order by created_at desc, id desc limit ${size} offset ${from}`;
  return { total: await countWebhooks(sql, workspaceId), items };
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

/** The endpoint a delivery goes to, whatever the workspace (jobs run for every workspace). */
export async function webhookById(sql: Db, id: string): Promise<WebhookRow | null> {
  const [row] = await sql<WebhookRow[]>`select * from webhooks where id = ${id}`;
  return row ?? null;
}

export async function disableWebhook(sql: Db, id: string, reason: string): Promise<void> {
  await sql`update webhooks set enabled = false, disabled_reason = ${reason}, updated_at = now() where id = ${id}`;
}

/** Enabled endpoints of these workspaces, for the outbox drain. */
export function enabledWebhooks(sql: Db, workspaceIds: readonly string[]): Promise<Pick<WebhookRow, 'id' | 'workspaceId' | 'events' | 'createdAt'>[]> {
  return sql`select id, workspace_id, events, created_at from webhooks where enabled and workspace_id = any(${workspaceIds as string[]})`;
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

/**
 * For each lane, its earliest unfinished delivery gets a job if it has none (`pending` →
 * `queued`, due now or at the back-off time it already had). Returns those, to enqueue.
 */
export async function queueLaneHeads(tx: Tx, lanes: readonly Lane[]): Promise<{ id: string; nextAttemptAt: Date; due: boolean }[]> {
  if (lanes.length === 0) return [];
  return tx<{ id: string; nextAttemptAt: Date; due: boolean }[]>`
    with lanes as (select * from unnest(${lanes.map((l) => l.webhookId)}::text[], ${lanes.map((l) => l.flowKey)}::text[]) as l(webhook_id, flow_key)),
    heads as (
      select distinct on (d.webhook_id, d.flow_key) d.id, d.status from webhook_deliveries d
      join lanes l on l.webhook_id = d.webhook_id and l.flow_key = d.flow_key
      where d.status in ${tx(UNFINISHED)}
      order by d.webhook_id, d.flow_key, d.event_id
    )
    update webhook_deliveries d set status = 'queued', next_attempt_at = greatest(now(), coalesce(d.next_attempt_at, now()))
    from heads where d.id = heads.id and heads.status = 'pending'
    returning d.id, d.next_attempt_at, d.next_attempt_at <= now() as due`;
}

export async function lockDelivery(tx: Tx, id: string): Promise<(DeliveryRow & { due: boolean; leaseExpired: boolean }) | null> {
  const [row] = await tx<(DeliveryRow & { due: boolean; leaseExpired: boolean })[]>`select *,
      coalesce(next_attempt_at <= now() + interval '1 second', true) as due,
      coalesce(lease_until < now(), true) as lease_expired
    from webhook_deliveries where id = ${id} for update`;
  return row ?? null;
}

export async function deliveryLane(sql: Db, id: string): Promise<(Lane & { status: DeliveryStatus }) | null> {
  const [row] = await sql<(Lane & { status: DeliveryStatus })[]>`select webhook_id, flow_key, status from webhook_deliveries where id = ${id}`;
  return row ?? null;
}

export async function hasEarlierUnfinished(tx: Tx, d: Pick<DeliveryRow, 'id' | 'webhookId' | 'flowKey' | 'eventId'>): Promise<boolean> {
  const [row] = await tx`select 1 from webhook_deliveries where webhook_id = ${d.webhookId} and flow_key = ${d.flowKey}
    and event_id < ${d.eventId} and status in ${tx(UNFINISHED)} limit 1`;
  return row !== undefined;
}

export async function setWaiting(tx: Tx, id: string): Promise<void> {
  await tx`update webhook_deliveries set status = 'pending' where id = ${id}`;
}

/** Claimed for one attempt until the lease ends (a process that dies mid-send leaves it to the sweep). */
export async function claimDelivery(tx: Tx, id: string, leaseSeconds: number): Promise<number> {
  const [row] = await tx<{ attempts: number }[]>`update webhook_deliveries set status = 'sending', attempts = attempts + 1,
    lease_until = now() + make_interval(secs => ${leaseSeconds}) where id = ${id} returning attempts`;
  return row!.attempts;
}

export async function insertAttempt(tx: Db, a: AttemptRow): Promise<void> {
  await tx`insert into webhook_attempts (delivery_id, attempt, manual, started_at, duration_ms, status_code, error, retry_after)
    values (${a.deliveryId}, ${a.attempt}, ${a.manual}, ${a.startedAt}, ${a.durationMs}, ${a.statusCode}, ${a.error}, ${a.retryAfter})`;
}

/** Ends the delivery (delivered, failed, skipped). */
export async function finishDelivery(tx: Tx, id: string, status: 'delivered' | 'failed' | 'skipped', code: number | null, error: string | null): Promise<void> {
  await tx`update webhook_deliveries set status = ${status}, last_status_code = ${code}, last_error = ${error},
    finished_at = now(), next_attempt_at = null, lease_until = null, manual = false where id = ${id}`;
}

/** Another try after `delaySeconds`; returns when it is due (database time, like pg-boss's start_after). */
export async function scheduleRetry(tx: Tx, id: string, delaySeconds: number, code: number | null, error: string | null): Promise<Date> {
  const [row] = await tx<{ nextAttemptAt: Date }[]>`update webhook_deliveries set status = 'queued', last_status_code = ${code}, last_error = ${error},
    next_attempt_at = now() + make_interval(secs => ${delaySeconds}), lease_until = null, manual = false where id = ${id} returning next_attempt_at`;
  return row!.nextAttemptAt;
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

export async function pageDeliveries(sql: Db, webhookId: string, size: number, from: number): Promise<{ total: number; items: DeliveryRow[] }> {
  const items = await sql<DeliveryRow[]>`select * from webhook_deliveries where webhook_id = ${webhookId}
    order by created_at desc, event_id desc limit ${size} offset ${from}`;
  const [count] = await sql<{ n: number }[]>`select count(*)::int as n from webhook_deliveries where webhook_id = ${webhookId}`;
  return { total: count!.n, items };
}

/** The latest attempts of these deliveries, oldest first per delivery. */
export function attemptsOf(sql: Db, deliveryIds: readonly string[], perDelivery: number): Promise<AttemptRow[]> {
  return sql<AttemptRow[]>`select delivery_id, attempt, manual, started_at, duration_ms, status_code, error, retry_after from (
      select *, row_number() over (partition by delivery_id order by id desc) as n from webhook_attempts
      where delivery_id = any(${deliveryIds as string[]})
    ) a where n <= ${perDelivery} order by delivery_id, id`;
}

/** Deliveries due now (any lane), for a worker with time to spare. */
export function dueDeliveries(sql: Db, limit: number): Promise<{ id: string }[]> {
  return sql`select id from webhook_deliveries where status = 'queued' and next_attempt_at <= now() order by next_attempt_at limit ${limit}`;
}

/** Claims whose process died (lease over) and queued deliveries long overdue (their job was lost). */
export function stuckDeliveries(sql: Db, overdueSeconds: number, limit: number): Promise<{ id: string }[]> {
  return sql`select id from webhook_deliveries
    where (status = 'sending' and lease_until < now())
       or (status = 'queued' and next_attempt_at < now() - make_interval(secs => ${overdueSeconds}))
    order by id limit ${limit}`;
}

/** Delivery work committed: wakes the webhook workers of every process (NOTIFY is sent at commit). */
export const WEBHOOKS_CHANNEL = 'flowplan_webhooks';

export async function announceWebhookWork(tx: Db): Promise<void> {
  await tx`select pg_notify(${WEBHOOKS_CHANNEL}, '')`;
}

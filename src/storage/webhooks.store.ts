/**
 * Webhook endpoints. Their delivery state (lanes, the attempt log, the collector's cursor) is
 * in webhook-lanes.store.ts.
 */
import { beginRetryingDeadlocks, type Db, type Sql, type Tx } from './db.ts';
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
  /** Events committed from then (until `pausedUntil`, when it was switched on again) are not for it. */
  pausedFrom: Date | null;
  pausedUntil: Date | null;
  /** Attempts in a row that got no answer in time (sql/0018_webhook_fairness.sql). */
  consecutiveTimeouts: number;
  /** Set while its circuit is tripped: its attempts wait until then (open), then go one at a time (half-open); null once it answers (closed). */
  circuitOpenUntil: Date | null;
  /**
   * Events with a position up to this one keep the delivery ids numbered by position they were
   * sent with before ids were sealed (sql/0031_webhook_sealed_ids.sql); null: every id sealed.
   */
  positionIdsThrough: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export async function insertWebhook(
  sql: Db,
  row: Pick<WebhookRow, 'id' | 'workspaceId' | 'url' | 'events' | 'description' | 'secret'>,
): Promise<WebhookRow> {
  const [created] = await sql<
    WebhookRow[]
  >`insert into webhooks (id, workspace_id, url, events, description, secret)
    values (${row.id}, ${row.workspaceId}, ${row.url}, ${row.events}, ${row.description}, ${row.secret}) returning *`;
  return created!;
}

export async function countWebhooks(sql: Db, workspaceId: string): Promise<number> {
  const [row] = await sql<
    { n: number }[]
  >`select count(*)::int as n from webhooks where workspace_id = ${workspaceId}`;
  return row!.n;
}

export async function pageWebhooks(
  sql: Db,
  workspaceId: string,
  page: PageRequest,
): Promise<Page<WebhookRow>> {
  return pageOf<WebhookRow>(
    sql,
    {
      columns: sql`*`,
      source: sql`from webhooks where workspace_id = ${workspaceId}`,
      order: sql`created_at desc, id desc`,
    },
    page,
  );
}

export async function getWebhook(
  sql: Db,
  workspaceId: string,
  id: string,
): Promise<WebhookRow | null> {
  const [row] = await sql<
    WebhookRow[]
  >`select * from webhooks where id = ${id} and workspace_id = ${workspaceId}`;
  return row ?? null;
}

export async function updateWebhook(
  sql: Db,
  workspaceId: string,
  id: string,
  patch: { url?: string; events?: string[]; description?: string | null; enabled?: boolean },
): Promise<WebhookRow | null> {
  const [row] = await sql<WebhookRow[]>`update webhooks set
      url = coalesce(${patch.url ?? null}, url),
      events = coalesce(${patch.events ?? null}::text[], events),
      description = case when ${patch.description !== undefined} then ${patch.description ?? null} else description end,
      enabled = coalesce(${patch.enabled ?? null}::boolean, enabled),
      -- Switched off: later events are not for it; switched on again: the pause ends now.
      paused_from = case when ${patch.enabled ?? null}::boolean = false and enabled then now() else paused_from end,
      paused_until = case when ${patch.enabled ?? null}::boolean = false and enabled then null
        when ${patch.enabled ?? null}::boolean and not enabled then now() else paused_until end,
      -- Switching it on or off by hand clears the reason the service gave.
      disabled_reason = case when ${patch.enabled ?? null}::boolean is null then disabled_reason end,
      updated_at = now()
    where id = ${id} and workspace_id = ${workspaceId} returning *`;
  return row ?? null;
}

/** The new secret signs from now on; the one it replaces keeps signing for `overlapSeconds`. */
export async function rotateWebhookSecret(
  sql: Db,
  workspaceId: string,
  id: string,
  secret: string,
  overlapSeconds: number,
): Promise<WebhookRow | null> {
  const [row] = await sql<WebhookRow[]>`update webhooks set previous_secret = secret,
      previous_secret_expires_at = now() + make_interval(secs => ${overlapSeconds}), secret = ${secret}, updated_at = now()
    where id = ${id} and workspace_id = ${workspaceId} returning *`;
  return row ?? null;
}

/**
 * Deletes an endpoint with its lanes and log. Its lanes are locked first, in the dispatcher's
 * order (lockLanes): the dispatcher writes an endpoint's log and breaker count while it holds
 * the lanes, so a delete that locked the endpoint first and then waited on a lane deadlocked
 * with it. The collector creates a lane (which locks its endpoint) before it locks the existing
 * ones, an order no delete can share: a delete chosen as that deadlock's victim runs again.
 */
export function deleteWebhook(sql: Sql, workspaceId: string, id: string): Promise<boolean> {
  return beginRetryingDeadlocks(sql, async (tx) => {
    await tx`select 1 from webhook_lanes where webhook_id = ${id} and workspace_id = ${workspaceId}
      order by flow_key for update`;
    const result =
      await tx`delete from webhooks where id = ${id} and workspace_id = ${workspaceId}`;
    return result.count > 0;
  });
}

/** The endpoints of a batch of claimed deliveries. */
export function webhooksByIds(sql: Db, ids: readonly string[]): Promise<WebhookRow[]> {
  return sql<WebhookRow[]>`select * from webhooks where id = any(${ids as string[]})`;
}

/** Endpoints that answered 410 Gone: disabled, with that reason. */
export async function disableWebhooks(
  sql: Db,
  ids: readonly string[],
  reason: string,
): Promise<void> {
  await sql`update webhooks set enabled = false, disabled_reason = ${reason}, updated_at = now(),
      paused_from = case when enabled then now() else paused_from end, paused_until = case when enabled then null else paused_until end
    where id = any(${ids as string[]})`;
}

/** How an endpoint's attempts of one batch went, in the order they ended. */
export interface TimeoutTally {
  webhookId: string;
  /** An answer came (any status): the count starts again from the timeouts after it. */
  answered: boolean;
  /** Timeouts after the last answer. */
  timeouts: number;
}

/**
 * The circuit breaker's count: timeouts in a row per endpoint. At `threshold` the circuit opens
 * for `cooldownSeconds` (again at each further timeout, such as the half-open attempt's); an
 * answer closes it. Returns the endpoints it opened, with when their cool-down ends.
 */
export async function countTimeouts(
  tx: Tx,
  tallies: readonly TimeoutTally[],
  threshold: number,
  cooldownSeconds: number,
): Promise<{ id: string; circuitOpenUntil: Date }[]> {
  if (tallies.length === 0) return [];
  const ids = tallies.map((t) => t.webhookId);
  // In key order: the outcome transactions of several processes lock the same endpoints.
  await tx`select 1 from webhooks where id = any(${ids}) order by id for update`;
  const count = tx`case when u.answered = 1 then 0 else h.consecutive_timeouts end + u.timeouts`;
  const rows = await tx<
    { id: string; circuitOpenUntil: Date; opened: boolean }[]
  >`update webhooks h set
      consecutive_timeouts = ${count},
      circuit_open_until = case when ${count} < ${threshold} then null
        when u.timeouts > 0 then now() + make_interval(secs => ${cooldownSeconds}) else h.circuit_open_until end
    from unnest(${ids}::text[], ${tallies.map((t) => (t.answered ? 1 : 0))}::int[], ${tallies.map((t) => t.timeouts)}::int[]) as u(w, answered, timeouts)
    where h.id = u.w
    returning h.id, h.circuit_open_until, u.timeouts > 0 and h.consecutive_timeouts >= ${threshold} as opened`;
  return rows.filter((r) => r.opened).map(({ id, circuitOpenUntil }) => ({ id, circuitOpenUntil }));
}

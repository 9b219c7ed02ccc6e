/**
 * Webhook endpoints of a workspace: create (the secret shown once), list, read, change,
 * delete, rotate the secret, the delivery log and manual retries. Another workspace's
 * endpoint is 404, like anything that does not exist.
 */
import type { Static } from '@sinclair/typebox';
import type {
  CreateWebhookBody,
  DeliverySchema,
  UpdateWebhookBody,
  WebhookSchema,
  WebhookWithSecretSchema,
} from '../../contract/webhook.schema.ts';
import type { Principal } from '../auth/principal.ts';
import { newId } from '../../platform/ids.ts';
import type { Config } from '../../platform/config.ts';
import { DomainError, notFound, validationFailed } from '../../platform/errors.ts';
import type { Sql, Tx } from '../../storage/db.ts';
import {
  countWebhooks,
  deleteWebhook,
  getWebhook,
  insertWebhook,
  pageWebhooks,
  rotateWebhookSecret,
  updateWebhook,
  type WebhookRow,
} from '../../storage/webhooks.store.ts';
import {
  addManualRetry,
  attemptsOf,
  lockEndpointLane,
  pageDeliveries,
  type AttemptRow,
  type DeliveryRow,
  type DeliveryStatus,
} from '../../storage/webhook-lanes.store.ts';
import { deliveryBody } from './message.ts';
import { resolveTarget, systemResolver, TargetRefused, type Resolver } from './address-guard.ts';
import type { WebhookDeliveries } from './delivery.job.ts';
import { webhookEventType } from '../events/event-types.ts';
import { newWebhookSecret } from './signing.ts';
import { withoutPath } from './sender.ts';
import type { PageRequest } from '../../platform/paging.ts';

/** Endpoints per workspace: each event fans out to every one of them. */
export const MAX_WEBHOOKS = 50;
/** After a rotation the previous secret keeps signing this long. */
const ROTATION_OVERLAP_SECONDS = 24 * 3600;
const ATTEMPTS_SHOWN = 20;

/** What the webhook operations need besides the caller, built once (compose.ts). */
export interface WebhookDeps {
  sql: Sql;
  deliveries: WebhookDeliveries;
  config: Config;
  /** DNS for the address check (the system resolver unless a test gives its own). */
  resolve?: Resolver;
}

export interface WebhookContext extends WebhookDeps {
  principal: Principal;
}

export async function createWebhook(
  ctx: WebhookContext,
  input: Static<typeof CreateWebhookBody>,
): Promise<Static<typeof WebhookWithSecretSchema>> {
  const url = await checkUrl(ctx, input.url);
  if ((await countWebhooks(ctx.sql, ctx.principal.workspaceId)) >= MAX_WEBHOOKS) {
    throw new DomainError(
      'PLAN_LIMIT_REACHED',
      `A workspace has at most ${MAX_WEBHOOKS} webhooks`,
      { limit: MAX_WEBHOOKS },
    );
  }
  const secret = newWebhookSecret();
  const row = await insertWebhook(ctx.sql, {
    id: newId('whk'),
    workspaceId: ctx.principal.workspaceId,
    url,
    events: input.events,
    description: input.description ?? null,
    secret,
  });
  return { ...webhookView(ctx.principal, row), secret };
}

export async function listWebhooks(ctx: WebhookContext, request: PageRequest) {
  const page = await pageWebhooks(ctx.sql, ctx.principal.workspaceId, request);
  return { total: page.total, items: page.items.map((row) => webhookView(ctx.principal, row)) };
}

export async function readWebhook(ctx: WebhookContext, id: string) {
  return webhookView(ctx.principal, await requireWebhook(ctx, id));
}

export async function changeWebhook(
  ctx: WebhookContext,
  id: string,
  patch: Static<typeof UpdateWebhookBody>,
) {
  await requireWebhook(ctx, id);
  const url = patch.url === undefined ? undefined : await checkUrl(ctx, patch.url);
  const row = await updateWebhook(ctx.sql, ctx.principal.workspaceId, id, { ...patch, url });
  if (!row) throw notFound('Webhook');
  return webhookView(ctx.principal, row);
}

export async function removeWebhook(ctx: WebhookContext, id: string): Promise<void> {
  if (!(await deleteWebhook(ctx.sql, ctx.principal.workspaceId, id))) throw notFound('Webhook');
}

/** A new secret, shown once; the previous one also signs for 24 hours so receivers can switch without losing deliveries. */
export async function rotateSecret(
  ctx: WebhookContext,
  id: string,
): Promise<Static<typeof WebhookWithSecretSchema>> {
  const secret = newWebhookSecret();
  const row = await rotateWebhookSecret(
    ctx.sql,
    ctx.principal.workspaceId,
    id,
    secret,
    ROTATION_OVERLAP_SECONDS,
  );
  if (!row) throw notFound('Webhook');
  return { ...webhookView(ctx.principal, row), secret };
}

export async function listDeliveries(ctx: WebhookContext, id: string, request: PageRequest) {
  const webhook = await requireWebhook(ctx, id);
  const page = await pageDeliveries(ctx.sql, webhook.workspaceId, id, request);
  return { total: page.total, items: await withAttempts(ctx, webhook, page.items) };
}

/** One more attempt of a finished delivery, with the same webhook-id, before the rest of its lane (once an attempt in flight there ends). */
export async function retryDelivery(ctx: WebhookContext, webhookId: string, id: string) {
  const webhook = await requireWebhook(ctx, webhookId);
  const position = ctx.deliveries.ids.positionOf(webhook, id);
  const found = position && (await delivery(ctx.sql, webhook, position));
  if (!position || !found) throw notFound('Delivery');
  if (!webhook.enabled)
    throw new DomainError(
      'INVALID_TRANSITION',
      'The webhook is disabled: enable it first (PATCH with enabled true)',
      { enabled: false },
    );
  await ctx.sql.begin(async (tx) => {
    const lane = { webhookId, flowKey: found.flowKey };
    await lockEndpointLane(tx, webhook.workspaceId, lane);
    const current = await delivery(tx, webhook, position);
    if (!current || !['delivered', 'failed', 'skipped'].includes(current.status)) {
      throw new DomainError('INVALID_TRANSITION', 'The delivery is still being attempted', {
        status: current ? deliveryStatus(current) : 'deleted',
      });
    }
    await addManualRetry(tx, webhook.workspaceId, lane, position);
    await ctx.deliveries.reopen(tx);
  });
  const [view] = await withAttempts(ctx, webhook, [(await delivery(ctx.sql, webhook, position))!]);
  return view!;
}

/** The endpoint's delivery of the event at `position` (read in the endpoint's workspace). */
async function delivery(
  sql: Sql | Tx,
  webhook: WebhookRow,
  position: string,
): Promise<DeliveryRow | null> {
  const page = await pageDeliveries(
    sql,
    webhook.workspaceId,
    webhook.id,
    { size: 1, from: 0 },
    position,
  );
  return page.items[0] ?? null;
}

async function requireWebhook(ctx: WebhookContext, id: string): Promise<WebhookRow> {
  const row = await getWebhook(ctx.sql, ctx.principal.workspaceId, id);
  if (!row) throw notFound('Webhook');
  return row;
}

async function checkUrl(ctx: WebhookContext, url: string): Promise<string> {
  try {
    const target = await resolveTarget(
      url,
      ctx.config.webhookAllowPrivate,
      ctx.resolve ?? systemResolver,
    );
    return target.url.toString();
  } catch (error) {
    if (!(error instanceof TargetRefused)) throw error;
    throw validationFailed(
      [{ in: 'body', pointer: '/url', message: error.message }],
      error.message,
    );
  }
}

async function withAttempts(ctx: WebhookContext, webhook: WebhookRow, rows: DeliveryRow[]) {
  const attempts = await attemptsOf(
    ctx.sql,
    webhook.workspaceId,
    webhook.id,
    rows.map((r) => r.position),
    ATTEMPTS_SHOWN,
  );
  const byDelivery = new Map<string, AttemptRow[]>();
  for (const a of attempts) byDelivery.set(a.position, [...(byDelivery.get(a.position) ?? []), a]);
  return rows.map((row) =>
    deliveryView(
      ctx.deliveries.ids.of(webhook, row.position),
      webhook.id,
      row,
      byDelivery.get(row.position) ?? [],
    ),
  );
}

/**
 * Integrators put tokens in their URLs' paths and queries (a URL never holds a user name or
 * password: it is refused): only a credential that may change the endpoint (an admin with
 * flows:write) sees a URL whole; anyone else, an admin's read-only key too, its scheme, host and
 * port, with what follows replaced by `/…`.
 */
function urlFor(principal: Principal, url: string): string {
  return principal.role === 'admin' && principal.scopes.includes('flows:write')
    ? url
    : withoutPath(new URL(url));
}

export function webhookView(principal: Principal, row: WebhookRow): Static<typeof WebhookSchema> {
  const overlapping =
    row.previousSecretExpiresAt && row.previousSecretExpiresAt > new Date()
      ? row.previousSecretExpiresAt
      : null;
  return {
    id: row.id,
    url: urlFor(principal, row.url),
    events: row.events.map(webhookEventType),
    description: row.description,
    enabled: row.enabled,
    disabledReason: row.disabledReason,
    previousSecretExpiresAt: overlapping?.toISOString() ?? null,
    circuit: circuitView(row),
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

/**
 * The endpoint's circuit breaker (delivery.job.ts): `open` while its attempts wait out the
 * cool-down after too many timeouts in a row, `half-open` once it is over (one attempt at a time,
 * with the shorter timeout) until an answer closes it.
 */
function circuitView(row: WebhookRow) {
  const until = row.circuitOpenUntil;
  const state: 'closed' | 'open' | 'half-open' =
    until === null ? 'closed' : until > new Date() ? 'open' : 'half-open';
  return {
    state,
    consecutiveTimeouts: row.consecutiveTimeouts,
    until: until?.toISOString() ?? null,
  };
}

/** `queued` (its lane's next, with a time) and `pending` (waiting for its turn) are one state to a client. */
function deliveryStatus(row: DeliveryRow): Exclude<DeliveryStatus, 'queued'> {
  return row.status === 'queued' ? 'pending' : row.status;
}

function deliveryView(
  id: string,
  webhookId: string,
  row: DeliveryRow,
  attempts: AttemptRow[],
): Static<typeof DeliverySchema> {
  return {
    id,
    webhookId,
    eventType: webhookEventType(row.type),
    flowId: row.flowKey || null,
    status: deliveryStatus(row),
    attempts: row.attempts,
    nextAttemptAt: row.status === 'queued' ? (row.nextAttemptAt?.toISOString() ?? null) : null,
    lastStatusCode: row.lastStatusCode,
    lastError: row.lastError,
    createdAt: row.createdAt.toISOString(),
    finishedAt: row.finishedAt?.toISOString() ?? null,
    // Past the event retention the log keeps the delivery, not its body.
    ...(row.event
      ? { payload: JSON.parse(deliveryBody(row.event)) as Record<string, unknown> }
      : {}),
    attemptLog: attempts.map((a) => ({
      attempt: a.attempt,
      manual: a.manual,
      startedAt: a.startedAt.toISOString(),
      durationMs: a.durationMs,
      statusCode: a.statusCode,
      error: a.error,
      retryAfter: a.retryAfter,
    })),
  };
}

/**
 * Webhook deliveries as pg-boss jobs.
 *
 * The outbox drain hands every batch of domain events to `collect`, inside the transaction
 * that marks them processed: one delivery row per matching endpoint and event is written
 * there, so each event reaches each endpoint exactly once as a delivery.
 *
 * Order: a lane is one endpoint and one flow. Only the earliest unfinished delivery of a lane
 * is attempted; the others wait (`pending`, no job) and the lane's next one is queued when it
 * ends (delivered, given up, skipped). Every change to a lane holds its advisory lock, so a
 * delivery drained while the head finishes is never left without a job. A later event of a
 * flow therefore never reaches an endpoint before an earlier one; a failing endpoint holds
 * up that flow's events to it (and only those) until it recovers or is given up on.
 *
 * Retries: after the n-th failed attempt the next waits min(base × 4^(n−1), 10 h) ±10%, or
 * longer if the receiver's Retry-After asks (up to a day); 10 attempts in all, so with the
 * default base of 5 s the last try comes about 27 hours after the first. 410 Gone disables
 * the endpoint. Each job carries only the delivery id, and the row says what to do: a job
 * that finds its delivery finished, claimed or not yet due does nothing, so duplicates and
 * pg-boss's own retries are harmless. A delivery is claimed (`sending`, with a lease) in one
 * short transaction and its outcome written in another, so no transaction stays open while
 * a receiver thinks; a process that dies mid-send leaves a lapsed lease, and the job's
 * pg-boss retry (or the sweep) sends it again with the same webhook-id: at least once.
 */
import type { Logger } from 'pino';
import { newId } from '../ids.ts';
import type { Config } from '../config.ts';
import type { Jobs } from '../jobs/jobs.ts';
import type { OutboxEvent } from '../jobs/outbox.ts';
import type { Sql, Tx } from '../store/db.ts';
import {
  announceWebhookWork, claimDelivery, deliveryLane, disableWebhook, enabledWebhooks, finishDelivery, hasEarlierUnfinished, insertAttempt,
  insertDeliveries, dueDeliveries, lockDelivery, lockLanes, queueLaneHeads, scheduleRetry, setWaiting, stuckDeliveries, webhookById, WEBHOOKS_CHANNEL,
  type DeliveryRow, type Lane, type WebhookRow,
} from '../store/webhooks.store.ts';
import { resolveTarget, TargetRefused, type Resolver, systemResolver } from './address-guard.ts';
import { post, type AttemptOutcome } from './sender.ts';
import { signedHeaders } from './signing.ts';
import { WEBHOOK_EVENT_TYPES } from './events.ts';

export const DELIVERY_QUEUE = 'webhook-delivery';
const MAINTENANCE_QUEUE = 'webhook-maintenance';
export const MAX_ATTEMPTS = 10;
const MAX_DELAY_SECONDS = 10 * 3600;
const MAX_RETRY_AFTER_SECONDS = 24 * 3600;
/** A claim outlives any attempt (timeout ≤ 60 s); past it, its process is taken for dead. */
const LEASE_SECONDS = 120;
/** Workers per process: attempts wait on receivers (up to the timeout), not on the CPU. */
const CONCURRENCY = 8;
/** How long one job goes on with further due deliveries (well inside the job's expiry, LEASE_SECONDS). */
const RUN_MS = 30_000;
const EVENT_TYPES = new Set<string>(WEBHOOK_EVENT_TYPES);

export function retryDelaySeconds(failedAttempts: number, baseSeconds: number, random = Math.random()): number {
  const delay = Math.min(baseSeconds * 4 ** (failedAttempts - 1), MAX_DELAY_SECONDS);
  return delay * (0.9 + 0.2 * random);
}

interface Claimed {
  delivery: DeliveryRow;
  webhook: WebhookRow;
  attempt: number;
}

export class WebhookDeliveries {
  constructor(
    private readonly sql: Sql,
    private readonly jobs: Jobs,
    private readonly config: Config,
    private readonly log: Logger,
    /** DNS for the delivery-time check (the system resolver; a test may give its own). */
    private readonly resolve: Resolver = systemResolver,
  ) {
    // pg-boss retries only a handler that threw (a database error): attempts are ours.
    jobs.queue(DELIVERY_QUEUE, { retryLimit: 10, retryDelay: 5, retryBackoff: true, expireInSeconds: LEASE_SECONDS });
    for (let i = 0; i < CONCURRENCY; i++) {
      jobs.work<{ id: string }>(DELIVERY_QUEUE, (job) => this.attempt(job.data.id), { pollingIntervalSeconds: 0.5 });
    }
    jobs.onOutbox('webhooks', (events, tx) => this.collect(events, tx));
    jobs.queue(MAINTENANCE_QUEUE, { retryLimit: 0 });
    jobs.work(MAINTENANCE_QUEUE, async () => { await this.recoverStuck(); }, { pollingIntervalSeconds: 30 });
    jobs.schedule(MAINTENANCE_QUEUE, '* * * * *');
  }

  /** Wakes this process's delivery workers whenever delivery work commits anywhere (NOTIFY at commit). */
  async listen(): Promise<() => Promise<void>> {
    const { unlisten } = await this.sql.listen(WEBHOOKS_CHANNEL, () => this.jobs.wake(DELIVERY_QUEUE));
    return unlisten;
  }

  /** Outbox subscriber: one delivery per enabled endpoint that wants the event. */
  async collect(events: readonly OutboxEvent[], tx: Tx): Promise<void> {
    const relevant = events.filter((e) => EVENT_TYPES.has(e.type));
    if (relevant.length === 0) return;
    const hooks = await enabledWebhooks(tx, [...new Set(relevant.map((e) => e.workspaceId))]);
    if (hooks.length === 0) return;
    const rows = [];
    for (const event of relevant) {
      const body = JSON.stringify({ type: event.type, timestamp: event.createdAt.toISOString(), workspaceId: event.workspaceId, data: event.data });
      for (const hook of hooks) {
        // An endpoint hears of events committed after it was registered.
        if (hook.workspaceId !== event.workspaceId || !hook.events.includes(event.type) || hook.createdAt > event.createdAt) continue;
        rows.push({
          id: newId('msg'), webhookId: hook.id, workspaceId: event.workspaceId, eventId: event.id, flowKey: event.flowId ?? '',
          type: event.type, body, attemptLimit: MAX_ATTEMPTS,
        });
      }
    }
    if (rows.length === 0) return;
    const lanes = uniqueLanes(rows);
    await lockLanes(tx, lanes);
    await insertDeliveries(tx, rows);
    await this.queueHeads(tx, lanes);
  }

  /** A manual retry: the delivery gets one more attempt, as soon as its lane lets it. */
  async reopen(tx: Tx, lane: Lane): Promise<void> {
    await this.queueHeads(tx, [lane]);
  }

  /**
   * The job: one attempt of its delivery, if still due and first in its lane. Then, for up to
   * RUN_MS, it goes on with the lane's next delivery and with any other that is due, straight
   * from the table: pg-boss polls a worker that was not woken only every half second, and a
   * job round trip per event would cap throughput far below what the receivers take. The
   * jobs stay the durable trigger; one that finds its delivery done by another does nothing.
   */
  async attempt(id: string): Promise<void> {
    const until = Date.now() + RUN_MS;
    let next: string | null = id;
    // A stopping process finishes the attempt in hand and leaves the rest to the jobs.
    const goOn = () => Date.now() < until && !this.jobs.stopping;
    while (next) {
      next = await this.attemptOne(next, goOn());
      if (!next && goOn()) next = await this.dueDelivery();
    }
  }

  private async dueDelivery(): Promise<string | null> {
    const candidates = await dueDeliveries(this.sql, CONCURRENCY * 2);
    // Workers picking at random collide less often on the same one.
    return candidates[Math.floor(Math.random() * candidates.length)]?.id ?? null;
  }

  /** Returns the lane's next delivery when this job should go on with it. */
  private async attemptOne(id: string, goOn: boolean): Promise<string | null> {
    const lane = await deliveryLane(this.sql, id);
    // Most jobs find their delivery already done by a worker that went on to it: one query.
    if (!lane || !['queued', 'sending'].includes(lane.status)) return null;
    const claimed = await this.sql.begin((tx) => this.claim(tx, id, lane));
    if (!claimed) return null;
    const { delivery, webhook, attempt } = claimed;
    const startedAt = new Date();
    const outcome = await this.send(delivery, webhook);
    return this.sql.begin(async (tx) => {
      await lockLanes(tx, [lane]);
      await insertAttempt(tx, { deliveryId: id, attempt, manual: delivery.manual, startedAt, ...outcome });
      const code = outcome.statusCode;
      if (code !== null && code >= 200 && code < 300) {
        await finishDelivery(tx, id, 'delivered', code, outcome.error);
      } else if (code === 410) {
        // The receiver says the endpoint is gone for good: stop sending it anything.
        await finishDelivery(tx, id, 'failed', code, outcome.error);
        await disableWebhook(tx, webhook.id, 'gone');
        this.log.info({ webhookId: webhook.id }, 'webhook endpoint answered 410 Gone: disabled');
      } else if (attempt >= delivery.attemptLimit) {
        await finishDelivery(tx, id, 'failed', code, outcome.error);
      } else {
        const backoff = retryDelaySeconds(attempt, this.config.webhookRetryBaseSeconds);
        const delay = Math.max(backoff, Math.min(outcome.retryAfter ?? 0, MAX_RETRY_AFTER_SECONDS));
        const at = await scheduleRetry(tx, id, delay, code, outcome.error);
        await this.jobs.send(DELIVERY_QUEUE, { id }, { tx, startAfter: at });
        return null;
      }
      return this.queueHeads(tx, [lane], goOn);
    });
  }

  private async claim(tx: Tx, id: string, lane: Lane): Promise<Claimed | null> {
    await lockLanes(tx, [lane]);
    const delivery = await lockDelivery(tx, id);
    if (!delivery) return null;
    const claimable = delivery.status === 'queued' || (delivery.status === 'sending' && delivery.leaseExpired);
    if (!claimable || !delivery.due) return null;
    if (await hasEarlierUnfinished(tx, delivery)) {
      // Not its turn: the lane's head queues it again when it ends.
      await setWaiting(tx, id);
      return null;
    }
    const webhook = await webhookById(tx, delivery.webhookId);
    if (!webhook?.enabled) {
      await finishDelivery(tx, id, 'skipped', null, 'endpoint disabled');
      await this.queueHeads(tx, [lane]);
      return null;
    }
    return { delivery, webhook, attempt: await claimDelivery(tx, id, LEASE_SECONDS) };
  }

  private async send(delivery: DeliveryRow, webhook: WebhookRow): Promise<AttemptOutcome> {
    const started = performance.now();
    try {
      // Checked again now: the name may resolve elsewhere than when it was saved.
      const target = await resolveTarget(webhook.url, this.config.webhookAllowPrivate, this.resolve);
      const secrets = [webhook.secret];
      if (webhook.previousSecret && webhook.previousSecretExpiresAt && webhook.previousSecretExpiresAt > new Date()) secrets.push(webhook.previousSecret);
      const headers = signedHeaders(secrets, delivery.id, Math.floor(Date.now() / 1000), delivery.body);
      return await post(target, headers, delivery.body, this.config.webhookTimeoutMs);
    } catch (error) {
      if (!(error instanceof TargetRefused)) throw error;
      return { statusCode: null, durationMs: Math.round(performance.now() - started), error: error.message, retryAfter: null };
    }
  }

  /**
   * Queues each lane's next delivery with a job of its own (so a crash loses none); with
   * `goOn` (one lane) also returns it when it is due now, for the caller to attempt at once.
   */
  private async queueHeads(tx: Tx, lanes: readonly Lane[], goOn = false): Promise<string | null> {
    const heads = await queueLaneHeads(tx, lanes);
    for (const head of heads) await this.jobs.send(DELIVERY_QUEUE, { id: head.id }, { tx, startAfter: head.nextAttemptAt });
    if (goOn && heads.length === 1 && heads[0]!.due) return heads[0]!.id;
    if (heads.length > 0) await announceWebhookWork(tx);
    return null;
  }

  /** The sweep: a claim whose process died, or a queued delivery whose job was lost, gets a job again. */
  async recoverStuck(): Promise<number> {
    const stuck = await stuckDeliveries(this.sql, 300, 1000);
    for (const { id } of stuck) await this.jobs.send(DELIVERY_QUEUE, { id });
    if (stuck.length > 0) this.log.warn({ count: stuck.length }, 'webhook deliveries recovered by the sweep');
    return stuck.length;
  }
}

function uniqueLanes(rows: readonly Lane[]): Lane[] {
  const lanes = new Map<string, Lane>();
  for (const { webhookId, flowKey } of rows) lanes.set(`${webhookId}:${flowKey}`, { webhookId, flowKey });
  return [...lanes.values()];
}

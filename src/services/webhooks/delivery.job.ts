/**
 * Webhook deliveries: lanes are the work, pg-boss jobs are their durable wake-ups. This is the
 * dispatcher's loop: it sends, records outcomes and schedules retries; the collector
 * (collector.ts) tells lanes of new events, and outcome.ts decides what each attempt's result
 * means.
 *
 * Lanes: a lane is one endpoint and one flow, a cursor into the event log (the position of the
 * last event it finished) and its head's attempts (webhook-lanes.store.ts). It sends one event
 * at a time, in position order: when its head ends (delivered, given up, skipped) the next
 * event past the cursor becomes the head in the same transaction. A later event of a flow
 * therefore never reaches an endpoint before an earlier one; a failing endpoint holds up that
 * flow's events to it (and only those) until it recovers or is given up on. No row is written
 * per event until an attempt finishes: then a log row, which the delivery log reads.
 *
 * Throughput: each process runs one dispatcher. It claims due lanes in batches (`skip locked`,
 * so processes share the work; round-robin across workspaces, within caps on the attempts in
 * flight per workspace and per endpoint, so one tenant's slow receivers take only their share;
 * lanes over a cap are claimed once an attempt ends), sends side by side over kept-alive connections, and writes
 * the outcomes of everything that finished meanwhile in one transaction, which also moves
 * those lanes on and claims their next events for this process at once: a lane moves on
 * without a round trip through a queue. When nothing is due it collects the next events. While
 * the API is busy the Governor slows all of this to WEBHOOK_BUSY_RATE deliveries a second, so
 * webhooks take the time requests leave.
 *
 * Wake-ups: when lanes become due (woken, moved on, retried, a manual retry) a
 * `webhook-dispatch` job is sent in the same transaction, for now or for the retry time
 * (pg-boss's `short` policy keeps at most one waiting per key), and NOTIFY wakes every
 * process's dispatcher at commit; the drain's NOTIFY of new positions wakes the collector. The
 * job's handler runs the dispatcher until nothing is due. A process that dies mid-send leaves
 * claims whose lease lapses: their lanes are then due again, and the sweep (every minute, and
 * at start) wakes a dispatcher for them and for events nobody collected; they are sent again
 * with the same webhook-id: at least once. When a failed attempt is tried again, or given up
 * on (and its endpoint disabled, after 410 Gone), is outcome.ts's to say.
 *
 * Circuit breaker: an endpoint whose attempts time out WEBHOOK_BREAKER_TIMEOUTS times in a row
 * opens its circuit: its lanes wait (deferred, no attempt used) for the cool-down, then get one
 * attempt at a time with WEBHOOK_BREAKER_TIMEOUT_SECONDS; another timeout opens it again, any
 * answer closes it.
 */
import type { Logger } from 'pino';
import { Counter } from 'prom-client';
import type { Config } from '../../platform/config.ts';
import type { Foreground } from '../../platform/foreground.ts';
import type { Metrics } from '../../platform/metrics.ts';
import type { Jobs } from '../jobs/jobs.ts';
import type { Sql, Tx } from '../../storage/db.ts';
import { listenDurably } from '../../storage/listen.ts';
import { SoonestTimer } from '../jobs/soonest-timer.ts';
import {
  countTimeouts,
  disableWebhooks,
  webhooksByIds,
  type TimeoutTally,
  type WebhookRow,
} from '../../storage/webhooks.store.ts';
import {
  advanceLanes,
  announceWebhookWork,
  claimDue,
  deferLanes,
  dueCounts,
  finishAttempts,
  insertLog,
  lockLanes,
  webhookBacklog,
  WEBHOOKS_CHANNEL,
  type ClaimedAttempt,
  type Fairness,
  type Lane,
  type LaneOutcome,
  type LogRow,
} from '../../storage/webhook-lanes.store.ts';
import { EVENTS_CHANNEL } from '../../storage/event-log.store.ts';
import { Governor } from './governor.ts';
import {
  resolveTarget,
  TargetRefused,
  type Resolver,
  type Target,
  systemResolver,
} from './address-guard.ts';
import { Connections, post } from './sender.ts';
import { signedHeaders } from './signing.ts';
import { collectEvents } from './collector.ts';
import { classifyAttempt, MAX_ATTEMPTS, type AttemptResult } from './outcome.ts';
import { deliveryBody, type DeliveryIds } from './message.ts';

export const DISPATCH_QUEUE = 'webhook-dispatch';
const MAINTENANCE_QUEUE = 'webhook-maintenance';
/** A claim outlives any attempt (timeout ≤ 60 s); past it, its process is taken for dead. */
const LEASE_SECONDS = 120;
/** A wake-up job hands over to the next after this long, well inside its expiry. */
const RUN_MS = 60_000;
/** Events collected per transaction at most. */
const COLLECT_BATCH = 200;
/** Retry kicks are grouped to this many milliseconds (at most 6,000 pending a minute ahead). */
const RETRY_TICK_MS = 10;

interface Finished {
  claim: ClaimedAttempt;
  outcome: LaneOutcome;
  /** The log row; none for an event retention dropped (nothing to describe it by). */
  log: LogRow | null;
  /** The endpoint answered 410 Gone. */
  gone: boolean;
  /** What the circuit breaker counts: an answer (any status), or a timeout. */
  answered: boolean;
  timedOut: boolean;
  /** The endpoint had timeouts counted when the attempt started (an answer then resets them). */
  counted: boolean;
}

export class WebhookDeliveries {
  private readonly connections = new Connections();
  private readonly attempts: Counter;
  private inFlight = 0;
  private finished: Finished[] = [];
  private wanted = false;
  /** Events may be waiting to be collected. */
  private collectWanted = false;
  private claiming = false;
  private flushing = false;
  private stopped = false;
  /** The next kick the dispatcher asked for itself (the governor, a failure). */
  private readonly kickTimer = new SoonestTimer(() => this.kick());
  /**
   * When this process's retries of the next minute fall due (performance.now(), to the next
   * RETRY_TICK_MS, so a failing endpoint's many retries share a few), each kicked on time: one
   * timer for the soonest would lose the later ones, leaving them to the wake-up jobs, which
   * pg-boss polls once a second.
   */
  private readonly retryTimes = new Set<number>();
  private readonly retryTimer = new SoonestTimer(() => this.retryDue());
  private idleWaiters: (() => void)[] = [];
  private readonly governor: Governor;
  /** Attempts in flight per process (WEBHOOK_CONCURRENCY): they wait on receivers (up to the timeout), not on the CPU. */
  private readonly concurrency: number;
  private readonly caps: Fairness;
  /** The last claim left due lanes to the caps: claim again once an attempt ends. */
  private heldBack = false;

  constructor(
    private readonly sql: Sql,
    private readonly jobs: Jobs,
    private readonly config: Config,
    private readonly log: Logger,
    metrics: Metrics,
    /** Delivery ids (message.ts), the webhooks API's too. */
    readonly ids: DeliveryIds,
    /** The API's load, which delivery keeps out of the way of (none: never held back). */
    foreground: Foreground | null = null,
    /** DNS for the delivery-time check (the system resolver; a test may give its own). */
    private readonly resolve: Resolver = systemResolver,
  ) {
    this.governor = new Governor(foreground, config.webhookBusyRate);
    this.concurrency = config.webhookConcurrency;
    this.caps = {
      workspaceInFlight: config.webhookWorkspaceInFlight,
      endpointInFlight: config.webhookEndpointInFlight,
    };
    this.attempts = new Counter({
      name: 'flowplan_webhook_attempts_total',
      help: 'Webhook delivery attempts by outcome (delivered, retry, failed, skipped)',
      labelNames: ['outcome'] as const,
      registers: [metrics.registry],
    });
    metrics.gaugeByLabels(
      'flowplan_webhook_backlog',
      'Webhook lanes with work by state (pending: waiting out a retry delay; queued: due; sending), and events not yet read by the collector (collecting), across every process',
      ['state'],
      async () => {
        const counts = await webhookBacklog(sql);
        return (['collecting', 'pending', 'queued', 'sending'] as const).map((state) => ({
          labels: { state },
          value: counts[state],
        }));
      },
    );
    // A job is only a wake-up: `short` keeps one waiting per key however often it is sent.
    jobs.queue(DISPATCH_QUEUE, {
      policy: 'short',
      retryLimit: 3,
      retryDelay: 5,
      expireInSeconds: (2 * RUN_MS) / 1000,
    });
    jobs.work(DISPATCH_QUEUE, () => this.runUntilIdle(), { pollingIntervalSeconds: 1 });
    jobs.queue(MAINTENANCE_QUEUE, { retryLimit: 0 });
    jobs.work(
      MAINTENANCE_QUEUE,
      async () => {
        await this.sweep();
      },
      { pollingIntervalSeconds: 30 },
    );
    jobs.schedule(MAINTENANCE_QUEUE, '* * * * *');
  }

  /**
   * Starts this process's dispatcher (when it runs jobs): wakes it whenever delivery work
   * commits anywhere, and its collector whenever the drain gives events positions (NOTIFY at
   * commit, so what it reads is visible), and sweeps once now, so claims left by a process that
   * died are sent without waiting for the schedule. Returns the stop.
   */
  async start(): Promise<() => Promise<void>> {
    if (!this.jobs.runsWorkers) return async () => {};
    const unlisten = await listenDurably(
      this.sql,
      WEBHOOKS_CHANNEL,
      () => this.kick(),
      () => this.kick(true),
    );
    const unlistenEvents = await listenDurably(
      this.sql,
      EVENTS_CHANNEL,
      () => this.kick(true),
      () => this.kick(true),
    );
    this.governor.start();
    await this.sweep();
    return async () => {
      await unlistenEvents();
      await unlisten();
      await this.stop();
    };
  }

  /**
   * Collects up to `limit` events, claiming up to `claim` of the lanes it made due for this
   * process. Returns how many events it read (-1: another process is collecting) and what it
   * claimed.
   */
  private collect(
    limit: number,
    claim: number,
  ): Promise<{ events: number; claimed: ClaimedAttempt[] }> {
    return this.sql.begin(async (tx) => {
      const { events, lanes } = await collectEvents(tx, limit);
      return { events, claimed: await this.promote(tx, lanes, claim) };
    });
  }

  /** A manual retry (added to its lane in `tx`): wakes whoever will send it, at commit. */
  async reopen(tx: Tx): Promise<void> {
    await this.wakeAt(tx, [new Date()]);
    await announceWebhookWork(tx);
  }

  /** Runs the dispatcher until nothing is due (or RUN_MS passed: the next wake-up goes on). */
  async runUntilIdle(): Promise<void> {
    // A wake-up taken while the process stops (its own last outcomes sent one) would otherwise wait out RUN_MS.
    if (this.stopped) return;
    this.kick();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      new Promise<void>((resolve) => this.idleWaiters.push(resolve)),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, RUN_MS);
      }),
    ]);
    clearTimeout(timer);
  }

  /** The sweep: claims whose process died, and due work nobody woke for, get a wake-up. */
  async sweep(): Promise<number> {
    const { lapsed, due } = await dueCounts(this.sql);
    if (lapsed > 0)
      this.log.warn({ count: lapsed }, 'webhook deliveries whose sender died are due again');
    this.kick(true);
    if (lapsed + due > 0) {
      await this.sql.begin(async (tx) => {
        await this.jobs.send(DISPATCH_QUEUE, {}, { tx, singletonKey: 'now' });
        await announceWebhookWork(tx);
      });
      this.kick();
    }
    return lapsed;
  }

  private kick(collect = false): void {
    if (!this.jobs.runsWorkers || this.stopped) return;
    this.wanted = true;
    if (collect) this.collectWanted = true;
    void this.pump();
  }

  private retryIn(ms: number): void {
    if (ms > RUN_MS) return;
    const at = Math.ceil((performance.now() + ms) / RETRY_TICK_MS) * RETRY_TICK_MS;
    this.retryTimes.add(at);
    this.retryTimer.in(at - performance.now());
  }

  private retryDue(): void {
    const now = performance.now();
    let next = Number.POSITIVE_INFINITY;
    for (const at of this.retryTimes) {
      if (at <= now) this.retryTimes.delete(at);
      else next = Math.min(next, at);
    }
    if (next < Number.POSITIVE_INFINITY) this.retryTimer.in(next - now);
    this.kick();
  }

  private async stop(): Promise<void> {
    this.stopped = true;
    this.governor.stop();
    this.kickTimer.cancel();
    this.retryTimer.cancel();
    // Attempts in hand finish and are recorded if they can be soon; a longer one is left to its lease.
    await Promise.race([
      new Promise<void>((resolve) => {
        this.idleWaiters.push(resolve);
        this.settle();
      }),
      new Promise((resolve) => setTimeout(resolve, 2000).unref()),
    ]);
    for (const resolve of this.idleWaiters.splice(0)) resolve();
    this.connections.close();
  }

  /**
   * Claims due heads while there is room (and the governor allows), collecting events when
   * nothing is due; each batch is sent at once.
   */
  private async pump(): Promise<void> {
    if (this.claiming) return;
    this.claiming = true;
    try {
      while (this.wanted && !this.stopped) {
        const room = this.room(this.inFlight);
        if (room <= 0) {
          // Full: a flush calls again. Held back by the governor: try again when it allows.
          if (this.inFlight < this.concurrency) this.kickTimer.in(this.governor.waitMs());
          break;
        }
        this.wanted = false;
        const { claimed: batch, heldBack } = await claimDue(
          this.sql,
          room,
          LEASE_SECONDS,
          this.caps,
        );
        if (heldBack) this.heldBack = true;
        if (batch.length < room && this.collectWanted) {
          // Cleared first: a kick while this collects asks for another round.
          this.collectWanted = false;
          const limit = this.governor.busy ? room : COLLECT_BATCH;
          const { events, claimed } = await this.collect(limit, room - batch.length);
          if (events === limit || events < 0) this.collectWanted = true;
          if (events > 0) this.wanted = true;
          // Another process is collecting, perhaps from before the newest commit: look again soon.
          if (events < 0) this.kickTimer.in(100);
          batch.push(...claimed);
        }
        if (batch.length === 0) continue;
        // A full batch may have left more behind.
        this.wanted = true;
        this.governor.spend(batch.length);
        await this.dispatch(batch);
      }
    } catch (error) {
      this.log.error(
        { err: error },
        'webhook dispatcher could not claim deliveries; trying again in 1 s',
      );
      this.wanted = true;
      this.kickTimer.in(1000);
    } finally {
      this.claiming = false;
      this.settle();
    }
  }

  /** Deliveries that may start now besides `inFlight`. */
  private room(inFlight: number): number {
    return Math.min(this.concurrency - inFlight, this.governor.allowance());
  }

  /** Sends claimed attempts side by side; each outcome joins the next flush. */
  private async dispatch(batch: readonly ClaimedAttempt[]): Promise<void> {
    this.inFlight += batch.length;
    let hooks: Map<string, WebhookRow>;
    try {
      hooks = new Map(
        (await webhooksByIds(this.sql, [...new Set(batch.map((d) => d.webhookId))])).map((h) => [
          h.id,
          h,
        ]),
      );
    } catch (error) {
      // The claims stay until their lease lapses; the sweep then queues them again.
      this.inFlight -= batch.length;
      throw error;
    }
    // One address check per endpoint and batch, made now (DNS may have changed since it was saved).
    const targets = new Map<string, Promise<Target | TargetRefused>>();
    const targetOf = (hook: WebhookRow) => {
      let target = targets.get(hook.id);
      if (!target) {
        target = resolveTarget(hook.url, this.config.webhookAllowPrivate, this.resolve).catch(
          (error: unknown) => {
            if (!(error instanceof TargetRefused)) throw error;
            // The delivery log says only that the host is not public; the operator learns where it led.
            if (error.internal)
              this.log.warn(
                { webhookId: hook.id, resolved: error.internal },
                'webhook deliveries refused: the host is not a public address',
              );
            return error;
          },
        );
        targets.set(hook.id, target);
      }
      return target;
    };
    for (const delivery of batch) {
      const hook = hooks.get(delivery.webhookId);
      void this.attempt(delivery, hook, hook && targetOf(hook)).then((finished) => {
        this.finished.push(finished);
        void this.flush();
      });
    }
  }

  private async attempt(
    claim: ClaimedAttempt,
    hook: WebhookRow | undefined,
    target: Promise<Target | TargetRefused> | undefined,
  ): Promise<Finished> {
    const startedAt = new Date();
    const attemptLimit = claim.manual ? claim.attempts : MAX_ATTEMPTS;
    const result = await this.send(claim, hook, target, startedAt);
    const { gone, attempt, status, delaySeconds, statusCode, error } = classifyAttempt(
      result,
      { attempts: claim.attempts, attemptLimit },
      this.config.webhookRetryBaseSeconds,
    );
    this.attempts.labels(status).inc();
    const { event } = claim;
    return {
      claim,
      gone,
      answered: result.kind === 'sent' && result.result.statusCode !== null,
      timedOut: result.kind === 'sent' && result.result.timedOut === true,
      counted: (hook?.consecutiveTimeouts ?? 0) > 0,
      outcome: {
        webhookId: claim.webhookId,
        flowKey: claim.flowKey,
        position: claim.position,
        manual: claim.manual,
        status,
        delaySeconds,
      },
      log: event && {
        webhookId: claim.webhookId,
        position: claim.position,
        flowKey: claim.flowKey,
        type: event.type,
        eventCreatedAt: event.createdAt,
        // A skip sent nothing: the claim's attempt is given back.
        attempt: attempt ? claim.attempts : claim.attempts - 1,
        manual: claim.manual,
        sent: attempt !== null,
        outcome: status,
        startedAt: attempt && startedAt,
        durationMs: attempt?.durationMs ?? null,
        statusCode,
        error,
        retryAfter: attempt?.retryAfter ?? null,
      },
    };
  }

  /** Signs and posts the event to the address checked for this batch, unless its endpoint is gone or disabled. */
  private async send(
    claim: ClaimedAttempt,
    hook: WebhookRow | undefined,
    target: Promise<Target | TargetRefused> | undefined,
    startedAt: Date,
  ): Promise<AttemptResult> {
    if (!hook?.enabled || !target) return { kind: 'endpoint-disabled' };
    if (!claim.event) return { kind: 'event-gone' };
    try {
      const resolved = await target;
      if (resolved instanceof TargetRefused) return { kind: 'refused', reason: resolved.message };
      const secrets = [hook.secret];
      if (
        hook.previousSecret &&
        hook.previousSecretExpiresAt &&
        hook.previousSecretExpiresAt > new Date()
      )
        secrets.push(hook.previousSecret);
      const body = deliveryBody(claim.event);
      const headers = signedHeaders(
        secrets,
        this.ids.of(hook, claim.position),
        Math.floor(Date.now() / 1000),
        body,
      );
      // A tripped circuit: the endpoint has kept timing out, so its attempts wait a shorter time until it answers again.
      const timeoutMs =
        1000 *
        (hook.circuitOpenUntil
          ? Math.min(this.config.webhookBreakerTimeoutSeconds, this.config.webhookTimeoutSeconds)
          : this.config.webhookTimeoutSeconds);
      return {
        kind: 'sent',
        result: await post(resolved, headers, body, timeoutMs, this.connections.agentFor(resolved)),
      };
    } catch (error) {
      return {
        kind: 'not-sent',
        reason: (error as Error).message,
        durationMs: Date.now() - startedAt.getTime(),
      };
    }
  }

  /**
   * Writes every outcome that came in, in one transaction per round (those that finish while
   * it commits make the next round); the lanes move on to their next events, and the due ones
   * are claimed here and sent straight away.
   */
  private async flush(): Promise<void> {
    if (this.flushing) return;
    this.flushing = true;
    try {
      while (this.finished.length > 0) {
        const batch = this.finished.splice(0);
        let next: ClaimedAttempt[];
        try {
          next = await this.sql.begin((tx) => this.record(tx, batch));
        } catch (error) {
          if (this.stopped) {
            // Their leases lapse and the sweep sends them again: at least once.
            this.log.error(
              { err: error, count: batch.length },
              'webhook outcomes not recorded at stop',
            );
            this.inFlight -= batch.length;
            continue;
          }
          this.log.error(
            { err: error, count: batch.length },
            'webhook outcomes not recorded; trying again in 1 s',
          );
          this.finished.unshift(...batch);
          await new Promise((resolve) => setTimeout(resolve, 1000));
          continue;
        }
        this.inFlight -= batch.length;
        // Attempts ended: lanes the caps held back may fit now.
        if (this.heldBack) {
          this.heldBack = false;
          this.wanted = true;
        }
        // This process tries its retries on time; the wake-up jobs are for when it is gone.
        const retries = batch
          .filter((f) => f.outcome.status === 'retry')
          .map((f) => f.outcome.delaySeconds);
        for (const seconds of retries) this.retryIn(seconds * 1000);
        if (next.length > 0)
          void this.dispatch(next).catch((error: unknown) =>
            this.log.error({ err: error }, 'webhook dispatch failed'),
          );
      }
    } finally {
      this.flushing = false;
    }
    if (this.wanted) void this.pump();
    this.settle();
  }

  private async record(tx: Tx, batch: readonly Finished[]): Promise<ClaimedAttempt[]> {
    const lanes = uniqueLanes(batch.map((f) => f.claim));
    await lockLanes(tx, lanes);
    await insertLog(
      tx,
      batch.flatMap((f) => (f.log ? [f.log] : [])),
    );
    const retries = await finishAttempts(
      tx,
      batch.map((f) => f.outcome),
    );
    await this.countTimeouts(tx, batch);
    const gone = [...new Set(batch.filter((f) => f.gone).map((f) => f.claim.webhookId))];
    if (gone.length > 0) {
      await disableWebhooks(tx, gone, 'gone');
      this.log.info({ webhookIds: gone }, 'webhook endpoint answered 410 Gone: disabled');
    }
    if (retries.length > 0) await this.wakeAt(tx, retries);
    // A retried head keeps its lane until its delay is out (unless a manual retry waits); every other outcome lets the lane's next event go.
    const claimed = await this.promote(
      tx,
      lanes,
      this.stopped ? 0 : this.room(this.inFlight - batch.length),
    );
    this.governor.spend(claimed.length);
    return claimed;
  }

  /** Moves the lanes on (claiming up to `claim` due ones) and wakes whoever should send the rest. */
  private async promote(tx: Tx, lanes: readonly Lane[], claim: number): Promise<ClaimedAttempt[]> {
    const { claimed, queued } = await advanceLanes(tx, lanes, claim, LEASE_SECONDS, this.caps);
    if (queued.length > 0) {
      await this.wakeAt(
        tx,
        queued.map((q) => q.nextAttemptAt),
      );
      if (queued.some((q) => q.due)) await announceWebhookWork(tx);
    }
    return claimed;
  }

  /**
   * The circuit breaker: counts each endpoint's timeouts in a row (written only when there are
   * some, or an answer ends a count). An endpoint that reaches WEBHOOK_BREAKER_TIMEOUTS has its
   * attempts deferred for the cool-down, then tried one at a time with the shorter timeout.
   */
  private async countTimeouts(tx: Tx, batch: readonly Finished[]): Promise<void> {
    const tallies = new Map<string, TimeoutTally>();
    for (const f of batch) {
      const id = f.claim.webhookId;
      const tally = tallies.get(id);
      if (f.timedOut)
        tallies.set(id, {
          webhookId: id,
          answered: tally?.answered ?? false,
          timeouts: (tally?.timeouts ?? 0) + 1,
        });
      else if (f.answered && (f.counted || tally))
        tallies.set(id, { webhookId: id, answered: true, timeouts: 0 });
    }
    const opened = await countTimeouts(
      tx,
      [...tallies.values()],
      this.config.webhookBreakerTimeouts,
      this.config.webhookBreakerCooldownSeconds,
    );
    if (opened.length === 0) return;
    await deferLanes(
      tx,
      opened.map((o) => o.id),
    );
    await this.wakeAt(
      tx,
      opened.map((o) => o.circuitOpenUntil),
    );
    for (const o of opened) this.retryIn(o.circuitOpenUntil.getTime() - Date.now());
    this.log.warn(
      { webhookIds: opened.map((o) => o.id), until: opened[0]!.circuitOpenUntil },
      'webhook endpoints keep timing out: their attempts wait out the cool-down',
    );
  }

  /** A wake-up job for each moment (to the second) lanes become due; those due now share one. */
  private async wakeAt(tx: Tx, times: readonly Date[]): Promise<void> {
    const now = Date.now();
    const seconds = new Set(
      times.map((at) => (at.getTime() <= now ? 0 : Math.ceil(at.getTime() / 1000))),
    );
    for (const second of seconds) {
      if (second === 0) await this.jobs.send(DISPATCH_QUEUE, {}, { tx, singletonKey: 'now' });
      else
        await this.jobs.send(
          DISPATCH_QUEUE,
          {},
          { tx, singletonKey: `at:${second}`, startAfter: new Date(second * 1000) },
        );
    }
  }

  /** Wakes those waiting for the dispatcher to run out of work, once it has. */
  private settle(): void {
    const idle =
      this.inFlight === 0 &&
      !this.claiming &&
      !this.flushing &&
      this.finished.length === 0 &&
      (!this.wanted || this.stopped);
    if (idle) for (const resolve of this.idleWaiters.splice(0)) resolve();
  }
}

function uniqueLanes(rows: readonly Lane[]): Lane[] {
  const lanes = new Map<string, Lane>();
  for (const { webhookId, flowKey } of rows)
    lanes.set(`${webhookId}:${flowKey}`, { webhookId, flowKey });
  return [...lanes.values()];
}

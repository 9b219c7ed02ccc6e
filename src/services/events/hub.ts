/**
 * The live event streams of one process. NOTIFY (sent at the drain's commit, from any
 * process) wakes the hub, which reads the log after the last position it dispatched, once
 * for every subscriber, and hands each event to the subscribers that may see it. Each event
 * is encoded once per audience and format, whoever of it receives it (a person's stream apart:
 * its cursors name the workspaces it has read, cursor.ts).
 *
 * A subscriber starting from an older cursor first catches up by reading the log itself,
 * page by page, up to where the hub is; only then (checked and switched with no await in
 * between) does it join the live dispatch, so it sees every event once, in position order.
 *
 * Never the heap: a subscriber whose transport has more than STREAM_MAX_BUFFERED_BYTES
 * waiting when the next event comes is closed (`slow`: resume from your cursor); catching up
 * waits for its transport to drain instead, reading the log at the client's pace.
 * Credentials are checked again while streams are open (credential-checks.ts), so a revoked
 * one's streams close within a second, and a person's shares are read again with them.
 */
import type { Logger } from 'pino';
import { Counter, Histogram } from 'prom-client';
import type { Foreground } from '../../platform/foreground.ts';
import type { Config } from '../../platform/config.ts';
import type { Metrics } from '../../platform/metrics.ts';
import type { Sql } from '../../storage/db.ts';
import { listenDurably } from '../../storage/listen.ts';
import {
  EVENTS_CHANNEL,
  eventsAfter,
  latestMarks,
  latestPosition,
  readEvents,
  type EventAudience,
  type EventFilter,
  type LoggedEvent,
} from '../../storage/event-log.store.ts';
import { DomainError } from '../../platform/errors.ts';
import type { Authenticator } from '../auth/authenticate.ts';
import { WEBHOOK_EVENT_TYPES } from '../../contract/webhook-events.schema.ts';
import { advance, CursorKeys } from './cursor.ts';
import { audienceOf, checkCursor, sealFor, type LogWatch } from './feed.ts';
import { CredentialChecks } from './credential-checks.ts';
import { LongPolls } from './long-polls.ts';
import {
  HubEvent,
  Subscription,
  type CloseReason,
  type StreamRequest,
  type StreamTarget,
} from './subscription.ts';

const EVENT_TYPES: ReadonlySet<string> = new Set(WEBHOOK_EVENT_TYPES);
/** Log rows read per query, live or catching up. */
const PAGE = 500;
/** A stream catching up looks at its buffer again this often when no drain was signalled. */
const DRAIN_CHECK_MS = 50;
/** A stream prepared and never attached (its client went before the answer) stops counting against its caps after this long. */
const UNATTACHED_MS = 30_000;
/** Retry-After of a stream refused at its cap: a stream is long-lived, so no sooner than this. */
const RETRY_STREAM_SECONDS = 5;
/** SSE keeps proxies from closing an idle stream with a comment this often. */
const HEARTBEAT_MS = 15_000;

export class EventHub implements LogWatch {
  private latest = '0';
  private readonly live = new Map<string, Set<Subscription>>();
  /** Open subscriptions that see flows of other workspaces (persons with shares). */
  private readonly guests = new Set<Subscription>();
  private readonly all = new Set<Subscription>();
  /** Streams prepared and not yet removed, by cap: `credential:<id>`, `person:<userId>`. */
  private readonly held = new Map<string, number>();
  /** GET /v1/events requests waiting for an event. */
  private readonly polls: LongPolls;
  /** The credentials of open streams, checked again while they are open. */
  private readonly checks: CredentialChecks;
  private pumping = false;
  private again = false;
  private stopped = true;
  private unlisten: (() => Promise<void>) | null = null;
  private heartbeatTimer: NodeJS.Timeout | null = null;
  private readonly delivered: Counter;
  private readonly closes: Counter;
  private readonly lag: Histogram;
  private readonly refused: Counter;
  private readonly maxBuffered: number;

  constructor(
    private readonly sql: Sql,
    auth: Authenticator,
    private readonly log: Logger,
    metrics: Metrics,
    private readonly limits: Pick<
      Config,
      'streamMaxBufferedBytes' | 'streamsPerCredential' | 'streamsPerPerson'
    >,
    /** The API's load: a long poll that waits is not work, so it steps out of it while it waits (webhooks read it). */
    foreground: Foreground | null = null,
  ) {
    this.maxBuffered = limits.streamMaxBufferedBytes;
    this.polls = new LongPolls(metrics, foreground);
    this.checks = new CredentialChecks(sql, auth, log, metrics, {
      open: () => this.all,
      close: (sub, reason) => this.close(sub, reason),
      reshare: (sub, sharedFlowIds) => this.reshare(sub, sharedFlowIds),
    });
    const registers = [metrics.registry];
    metrics.gaugeByLabels(
      'flowplan_stream_subscribers',
      'Open event streams of this process by transport',
      ['transport'],
      async () => {
        const counts = { sse: 0, websocket: 0 };
        for (const s of this.all) if (s.target) counts[s.target.transport]++;
        return (['sse', 'websocket'] as const).map((transport) => ({
          labels: { transport },
          value: counts[transport],
        }));
      },
    );
    this.delivered = new Counter({
      name: 'flowplan_stream_events_total',
      help: 'Events sent to stream subscribers (one per subscriber and event)',
      registers,
    });
    this.closes = new Counter({
      name: 'flowplan_stream_closes_total',
      help: 'Streams closed by the server, by reason (slow: over the buffer limit; revoked; stopping; unavailable: credential not checkable)',
      labelNames: ['reason'] as const,
      registers,
    });
    this.refused = new Counter({
      name: 'flowplan_stream_refusals_total',
      help: 'Event streams refused with 429: their credential or person held as many as allowed',
      registers,
    });
    this.lag = new Histogram({
      name: 'flowplan_stream_lag_seconds',
      help: "From an event's transaction to its dispatch to live subscribers",
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    });
  }

  /** The keys of cursors and event ids (loaded at start): the feed's too. */
  cursors!: CursorKeys;

  async start(): Promise<void> {
    this.cursors = await CursorKeys.load(this.sql);
    this.stopped = false;
    this.latest = await latestPosition(this.sql);
    this.unlisten = await listenDurably(
      this.sql,
      EVENTS_CHANNEL,
      () => this.pump(),
      () => this.pump(),
    );
    this.checks.start();
    this.heartbeatTimer = setInterval(() => {
      for (const s of this.all) s.target?.heartbeat();
    }, HEARTBEAT_MS);
    this.pump();
  }

  /** Ends every stream (`stopping`: resume elsewhere) and every long poll. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.checks.stop();
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    for (const s of [...this.all]) this.close(s, 'stopping');
    this.polls.wakeAll();
    await this.unlisten?.().catch(() => {});
  }

  /**
   * Waits for an event after `position` that this audience and filter read (or `ms`): other
   * workspaces' events wake no one here. Past the hub's own position already, it answers at
   * once (what it dispatched meanwhile is not known per audience).
   */
  waitBeyond(
    position: string,
    ms: number,
    audience: EventAudience,
    filter: EventFilter,
  ): Promise<void> {
    if (this.stopped || BigInt(this.latest) > BigInt(position)) return Promise.resolve();
    return this.polls.wait(position, ms, audience, filter);
  }

  /**
   * Checks a stream request (its cursor: CURSOR_EXPIRED, malformed) and makes its
   * subscription; nothing is sent until `attach`.
   */
  async prepare(request: StreamRequest): Promise<Subscription> {
    const audience = await audienceOf(this.sql, request.principal);
    const seal = sealFor(this.cursors, request.principal);
    let sub: Subscription;
    if (request.after === null) {
      // From now: where the live dispatch is, and the audience's marks as of there.
      const through = this.latest;
      sub = new Subscription(
        request,
        audience,
        seal,
        await latestMarks(this.sql, audience, through),
        through,
      );
    } else {
      const marks = await checkCursor(this.sql, request.after, audience, seal, request.afterFrom);
      sub = new Subscription(request, audience, seal, marks, null);
    }
    this.hold(sub);
    return sub;
  }

  /**
   * Counts a stream against its credential's and its person's caps (RATE_LIMITED past either),
   * from now until it is removed: checked and counted with no await between, so streams
   * opened at once cannot all pass.
   */
  private hold(sub: Subscription): void {
    const { principal } = sub.request;
    const caps: [string, number, string][] = [
      [
        `credential:${principal.tokenId ?? principal.credentialId}`,
        this.limits.streamsPerCredential,
        'credential (STREAMS_PER_CREDENTIAL)',
      ],
    ];
    if (principal.userId)
      caps.push([
        `person:${principal.userId}`,
        this.limits.streamsPerPerson,
        'person, across their tokens (STREAMS_PER_PERSON)',
      ]);
    for (const [key, limit, per] of caps) {
      if ((this.held.get(key) ?? 0) >= limit) {
        this.refused.inc();
        throw new DomainError(
          'RATE_LIMITED',
          `Too many open event streams: at most ${limit} per ${per} on one server; close one before opening another`,
          { limit, retryAfter: RETRY_STREAM_SECONDS },
          { retryAfterSeconds: RETRY_STREAM_SECONDS },
        );
      }
    }
    sub.holds = caps.map(([key]) => key);
    for (const key of sub.holds) this.held.set(key, (this.held.get(key) ?? 0) + 1);
    setTimeout(() => {
      if (!sub.target) this.unhold(sub);
    }, UNATTACHED_MS).unref();
  }

  private unhold(sub: Subscription): void {
    for (const key of sub.holds) {
      const n = (this.held.get(key) ?? 1) - 1;
      if (n > 0) this.held.set(key, n);
      else this.held.delete(key);
    }
    sub.holds = [];
  }

  /** Starts sending to the transport: catching up from the subscription's cursor, then live. */
  attach(sub: Subscription, target: StreamTarget): void {
    if (this.stopped || sub.closed) {
      this.unhold(sub);
      target.close('stopping');
      return;
    }
    sub.target = target;
    this.all.add(sub);
    void this.catchUp(sub).catch((error: unknown) => {
      this.log.warn(
        { err: error },
        'event stream could not catch up; closing it (the client resumes from its cursor)',
      );
      this.close(sub, 'stopping');
    });
  }

  /** The client went away. */
  detach(sub: Subscription): void {
    this.remove(sub);
  }

  private close(sub: Subscription, reason: CloseReason): void {
    if (sub.closed) return;
    this.remove(sub);
    this.closes.labels(reason).inc();
    sub.target?.close(reason);
  }

  private remove(sub: Subscription): void {
    sub.closed = true;
    this.unhold(sub);
    sub.drained();
    this.all.delete(sub);
    this.guests.delete(sub);
    const set = this.live.get(sub.audience.workspaceId);
    set?.delete(sub);
    if (set?.size === 0) this.live.delete(sub.audience.workspaceId);
  }

  private async catchUp(sub: Subscription): Promise<void> {
    while (!sub.closed) {
      if (sub.through !== null && BigInt(sub.through) >= BigInt(this.latest)) {
        this.join(sub);
        return;
      }
      const through = this.latest;
      const rows = await readEvents(
        this.sql,
        sub.marks,
        PAGE,
        sub.audience,
        sub.request.filter,
        through,
      );
      for (const row of rows) {
        // Catching up goes at the client's pace: the log is read again, never held here.
        while (!sub.closed && sub.target!.buffered() > this.maxBuffered / 2)
          await sub.waitForDrain(DRAIN_CHECK_MS);
        if (sub.closed) return;
        this.deliver(sub, new HubEvent(row));
      }
      // A full page may have more before `through`: read again after the marks it moved to.
      if (rows.length < PAGE) sub.through = through;
    }
  }

  private join(sub: Subscription): void {
    sub.live = true;
    const key = sub.audience.workspaceId;
    let set = this.live.get(key);
    if (!set) this.live.set(key, (set = new Set()));
    set.add(sub);
    if (sub.audience.sharedFlowIds.length > 0) this.guests.add(sub);
  }

  /** Sends unless the client has not taken what it was sent before (past the limit): then it is closed instead. */
  private deliver(sub: Subscription, event: HubEvent): void {
    if (sub.target!.buffered() > this.maxBuffered) return this.close(sub, 'slow');
    const { workspaceId, seq } = event.row;
    // The stream's own marks: moved in place on its workspace's events, the many streams' case.
    if (workspaceId === sub.audience.workspaceId) sub.marks.own = seq;
    else sub.marks = advance(sub.marks, sub.audience.workspaceId, workspaceId, seq);
    sub.target!.send(event.for(sub.seal, sub.marks));
    this.delivered.inc();
  }

  private pump(): void {
    if (this.stopped) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = true;
    void this.readOn()
      .catch((error: unknown) => {
        this.log.warn({ err: error }, 'event hub could not read the log; trying again in 1 s');
        setTimeout(() => this.pump(), 1000).unref();
      })
      .finally(() => {
        this.pumping = false;
        if (this.again) {
          this.again = false;
          this.pump();
        }
      });
  }

  private async readOn(): Promise<void> {
    for (;;) {
      const rows = await eventsAfter(this.sql, this.latest, PAGE);
      if (rows.length === 0) return;
      const now = Date.now();
      for (const row of rows) this.dispatch(row, now);
      this.latest = rows[rows.length - 1]!.position;
      if (rows.length < PAGE) return;
    }
  }

  private dispatch(row: LoggedEvent, now: number): void {
    if (!EVENT_TYPES.has(row.type)) return;
    const event = new HubEvent(row);
    this.lag.observe((now - row.createdAt.getTime()) / 1000);
    for (const sub of this.live.get(row.workspaceId) ?? [])
      if (sub.wants(event)) this.deliver(sub, event);
    for (const sub of this.guests)
      if (sub.audience.workspaceId !== row.workspaceId && sub.wants(event))
        this.deliver(sub, event);
    this.polls.wake(row);
  }

  /** A person's shares as read now: a live stream among the guests only while it has some. */
  private reshare(sub: Subscription, sharedFlowIds: string[]): void {
    sub.audience = { ...sub.audience, sharedFlowIds };
    if (!sub.live || sub.closed) return;
    if (sharedFlowIds.length > 0) this.guests.add(sub);
    else this.guests.delete(sub);
  }
}

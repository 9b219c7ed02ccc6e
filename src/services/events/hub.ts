/**
 * The live event streams of one process. NOTIFY (sent at the drain's commit, from any
 * process) wakes the hub, which reads the log after the last position it dispatched, once
 * for every subscriber, and hands each event to the subscribers that may see it. Each event
 * is encoded once per format, whoever receives it.
 *
 * A subscriber starting from an older cursor first catches up by reading the log itself,
 * page by page, up to where the hub is; only then (checked and switched with no await in
 * between) does it join the live dispatch, so it sees every event once, in position order.
 *
 * Never the heap: a subscriber whose transport has more than STREAM_MAX_BUFFERED_BYTES
 * waiting when the next event comes is closed (`slow`: resume from your cursor); catching up
 * waits for its transport to drain instead, reading the log at the client's pace.
 * Credentials are checked again every CHECK_MS, so a revoked one's streams close within a
 * second, and a person's shares are read again with them.
 */
import type { Logger } from 'pino';
import { Counter, Histogram } from 'prom-client';
import { Packr } from 'msgpackr';
import type { Foreground } from '../../platform/foreground.ts';
import type { Config } from '../../platform/config.ts';
import type { Metrics } from '../../platform/metrics.ts';
import type { Sql } from '../../storage/db.ts';
import { listenDurably } from '../../storage/listen.ts';
import {
  EVENTS_CHANNEL,
  eventsAfter,
  latestPosition,
  personStreamStates,
  readEvents,
  type EventAudience,
  type EventFilter,
  type LoggedEvent,
} from '../../storage/event-log.store.ts';
import { DomainError } from '../../platform/errors.ts';
import type { Authenticator } from '../auth/authenticate.ts';
import type { Principal } from '../auth/principal.ts';
import { WEBHOOK_EVENT_TYPES } from '../../contract/webhook-events.schema.ts';
import { CursorKeys, type CursorSeal } from './cursor.ts';
import {
  audienceOf,
  checkCursor,
  feedEvent,
  sealFor,
  type FeedEvent,
  type LogWatch,
} from './feed.ts';

export type CloseReason = 'slow' | 'revoked' | 'stopping' | 'unavailable';
export type Transport = 'sse' | 'websocket';

const packr = new Packr({ useRecords: false, variableMapSize: true });
const EVENT_TYPES: ReadonlySet<string> = new Set(WEBHOOK_EVENT_TYPES);
/** Log rows read per query, live or catching up. */
const PAGE = 500;
/** How often credentials and shares of open streams are checked again. */
const CHECK_MS = 500;
/**
 * A stream whose credential could not be checked (the database out of reach) for this long is
 * closed as `unavailable` (retry): it is not known to be revoked, nor known to be valid.
 */
const UNCHECKED_MS = 2000;
/** A stream catching up looks at its buffer again this often when no drain was signalled. */
const DRAIN_CHECK_MS = 50;
/** A stream prepared and never attached (its client went before the answer) stops counting against its caps after this long. */
const UNATTACHED_MS = 30_000;
/** Retry-After of a stream refused at its cap: a stream is long-lived, so no sooner than this. */
const RETRY_STREAM_SECONDS = 5;
/** SSE keeps proxies from closing an idle stream with a comment this often. */
const HEARTBEAT_MS = 15_000;

/**
 * One event as one audience sees it (its id and cursor are sealed for that audience), encoded
 * at most once per format whoever of that audience receives it.
 */
export class EncodedEvent {
  private jsonText: string | null = null;
  private sseText: string | null = null;
  private packed: Buffer | null = null;

  constructor(readonly event: FeedEvent) {}

  json(): string {
    return (this.jsonText ??= JSON.stringify(this.event));
  }

  /** A Server-Sent Events frame: the cursor as its id (a reconnect's Last-Event-ID), the type as its event name. */
  sse(): string {
    return (this.sseText ??= `id: ${this.event.cursor}\nevent: ${this.event.type}\ndata: ${this.json()}\n\n`);
  }

  msgpack(): Buffer {
    return (this.packed ??= packr.pack(this.event));
  }
}

/** One event of the log, encoded once per audience that receives it. */
export class HubEvent {
  private readonly encoded = new Map<string, EncodedEvent>();

  constructor(readonly row: LoggedEvent) {}

  for(seal: CursorSeal): EncodedEvent {
    let encoded = this.encoded.get(seal.audience);
    if (!encoded)
      this.encoded.set(seal.audience, (encoded = new EncodedEvent(feedEvent(this.row, seal))));
    return encoded;
  }
}

/** A transport's side of a subscription (the web layer's SSE response or WebSocket). */
export interface StreamTarget {
  readonly transport: Transport;
  send(event: EncodedEvent): void;
  /** Bytes handed to the transport and not yet taken by the client's socket. */
  buffered(): number;
  heartbeat(): void;
  close(reason: CloseReason): void;
}

export interface StreamRequest {
  principal: Principal;
  /** The bearer as given, checked again while the stream is open. */
  authorization: string;
  filter: EventFilter;
  /** Resume after this cursor; null: from now. */
  after: string | null;
  /** Where the cursor came from, for the refusal of a bad one. */
  afterFrom: 'query' | 'header';
}

/** Whether a reader of this audience and filter is given an event of this workspace, flow and type. */
function reads(
  audience: EventAudience,
  filter: EventFilter,
  workspaceId: string,
  flowId: string | null,
  type: string,
): boolean {
  const visible =
    workspaceId === audience.workspaceId ||
    (flowId !== null && audience.sharedFlowIds.includes(flowId));
  return (
    visible && filter.types.includes(type) && (filter.flowId === null || filter.flowId === flowId)
  );
}

/** A long poll waiting for an event it may read after `position`. */
interface Waiter {
  position: bigint;
  audience: EventAudience;
  filter: EventFilter;
  resolve: () => void;
  timer: NodeJS.Timeout;
}

export class Subscription {
  target: StreamTarget | null = null;
  live = false;
  closed = false;
  /** When its credential was last found valid. */
  checkedAt = Date.now();
  /** The caps it counts against (its credential's, its person's) until it is removed. */
  holds: string[] = [];
  private drainWaiter: (() => void) | null = null;

  /** `cursor`: the log position it has been sent everything through. */
  constructor(
    readonly request: StreamRequest,
    public audience: EventAudience,
    readonly seal: CursorSeal,
    public cursor: string,
  ) {}

  wants(e: HubEvent): boolean {
    return reads(this.audience, this.request.filter, e.row.workspaceId, e.row.flowId, e.row.type);
  }

  /** The transport took what was waiting (the web layer calls this on drain). */
  drained(): void {
    const wake = this.drainWaiter;
    this.drainWaiter = null;
    wake?.();
  }

  /** Resolves when the transport drains, or after `ms` (a drain may come between a look at the buffer and this). */
  waitForDrain(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.drainWaiter = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}

export class EventHub implements LogWatch {
  private latest = '0';
  private readonly live = new Map<string, Set<Subscription>>();
  /** Open subscriptions that see flows of other workspaces (persons with shares). */
  private readonly guests = new Set<Subscription>();
  private readonly all = new Set<Subscription>();
  /** Streams prepared and not yet removed, by cap: `credential:<id>`, `person:<userId>`. */
  private readonly held = new Map<string, number>();
  /** Long polls by their workspace; those that also read flows shared from other workspaces are in `guestWaiters` too. */
  private readonly waiters = new Map<string, Set<Waiter>>();
  private readonly guestWaiters = new Set<Waiter>();
  private pumping = false;
  private again = false;
  private stopped = true;
  private unlisten: (() => Promise<void>) | null = null;
  private checkTimer: NodeJS.Timeout | null = null;
  private heartbeatTimer: NodeJS.Timeout | null = null;
  private checking = false;
  private readonly delivered: Counter;
  private readonly closes: Counter;
  private readonly lag: Histogram;
  private readonly wakes: Counter;
  private readonly checkRounds: Counter;
  private readonly refused: Counter;
  private readonly checkQueries: Counter;
  private readonly maxBuffered: number;

  constructor(
    private readonly sql: Sql,
    private readonly auth: Authenticator,
    private readonly log: Logger,
    metrics: Metrics,
    private readonly limits: Pick<
      Config,
      'streamMaxBufferedBytes' | 'streamsPerCredential' | 'streamsPerPerson'
    >,
    /** The API's load: a long poll that waits is not work, so it steps out of it while it waits (webhooks read it). */
    private readonly foreground: Foreground | null = null,
  ) {
    this.maxBuffered = limits.streamMaxBufferedBytes;
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
    metrics.gauge(
      'flowplan_event_waiters',
      'Long polls of GET /v1/events waiting on this process',
      () => {
        let n = 0;
        for (const set of this.waiters.values()) n += set.size;
        return n;
      },
    );
    this.refused = new Counter({
      name: 'flowplan_stream_refusals_total',
      help: 'Event streams refused with 429: their credential or person held as many as allowed',
      registers,
    });
    this.checkRounds = new Counter({
      name: 'flowplan_stream_checks_total',
      help: "Rounds of checking open streams' credentials again (one every 500 ms while any is open)",
      registers,
    });
    this.checkQueries = new Counter({
      name: 'flowplan_stream_check_queries_total',
      help: 'Queries those rounds ran for person tokens and their shares (one per round, however many streams)',
      registers,
    });
    this.wakes = new Counter({
      name: 'flowplan_event_waiter_wakes_total',
      help: 'Long polls woken by an event they may read (each then reads the log)',
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
    this.checkTimer = setInterval(() => void this.check(), CHECK_MS);
    this.heartbeatTimer = setInterval(() => {
      for (const s of this.all) s.target?.heartbeat();
    }, HEARTBEAT_MS);
    this.pump();
  }

  /** Ends every stream (`stopping`: resume elsewhere) and every long poll. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.checkTimer) clearInterval(this.checkTimer);
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    for (const s of [...this.all]) this.close(s, 'stopping');
    for (const set of [...this.waiters.values()]) for (const w of set) this.release(w);
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
    this.foreground?.leave();
    return new Promise<void>((resolve) => {
      const waiter: Waiter = {
        position: BigInt(position),
        audience,
        filter,
        resolve,
        timer: setTimeout(() => this.release(waiter), ms),
      };
      let set = this.waiters.get(audience.workspaceId);
      if (!set) this.waiters.set(audience.workspaceId, (set = new Set()));
      set.add(waiter);
      if (audience.sharedFlowIds.length > 0) this.guestWaiters.add(waiter);
    }).finally(() => this.foreground?.enter());
  }

  private release(waiter: Waiter): void {
    clearTimeout(waiter.timer);
    const set = this.waiters.get(waiter.audience.workspaceId);
    set?.delete(waiter);
    if (set?.size === 0) this.waiters.delete(waiter.audience.workspaceId);
    this.guestWaiters.delete(waiter);
    waiter.resolve();
  }

  /**
   * Checks a stream request (its cursor: CURSOR_EXPIRED, malformed) and makes its
   * subscription; nothing is sent until `attach`.
   */
  async prepare(request: StreamRequest): Promise<Subscription> {
    const audience = await audienceOf(this.sql, request.principal);
    const seal = sealFor(this.cursors, request.principal);
    const after =
      request.after === null
        ? null
        : await checkCursor(this.sql, request.after, audience, seal, request.afterFrom);
    const sub = new Subscription(request, audience, seal, after ?? this.latest);
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
      if (BigInt(sub.cursor) >= BigInt(this.latest)) {
        this.join(sub);
        return;
      }
      const through = this.latest;
      const rows = await readEvents(
        this.sql,
        sub.cursor,
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
      sub.cursor = rows.length === PAGE ? rows[rows.length - 1]!.position : through;
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
    sub.target!.send(event.for(sub.seal));
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
    const position = BigInt(row.position);
    const wake = (w: Waiter) => {
      if (
        w.position >= position ||
        !reads(w.audience, w.filter, row.workspaceId, row.flowId, row.type)
      )
        return;
      this.wakes.inc();
      this.release(w);
    };
    for (const w of this.waiters.get(row.workspaceId) ?? []) wake(w);
    for (const w of this.guestWaiters) if (w.audience.workspaceId !== row.workspaceId) wake(w);
  }

  /**
   * Credentials of open streams, checked again, and persons' shares read anew. Keys and
   * clients go through the authenticator's cache (dropped on revocation in every process, so
   * no query unless one was revoked); every person token of every open stream is checked in
   * one query with its shares. A refusal closes `revoked`; a failure to check is not one.
   */
  private async check(): Promise<void> {
    if (this.checking || this.all.size === 0) return;
    this.checking = true;
    this.checkRounds.inc();
    try {
      const byCredential = new Map<string, Subscription[]>();
      for (const s of this.all) {
        const list = byCredential.get(s.request.authorization);
        if (list) list.push(s);
        else byCredential.set(s.request.authorization, [s]);
      }
      const persons = new Map<string, Subscription[]>();
      for (const [authorization, subs] of byCredential) {
        const { principal } = subs[0]!.request;
        if (principal.kind === 'person' && principal.tokenId) {
          if (principal.expiresAt !== null && principal.expiresAt <= Date.now())
            this.closeAll(subs, 'revoked');
          else persons.set(principal.tokenId, subs);
          continue;
        }
        try {
          await this.auth.authenticate(authorization);
          this.checked(subs);
        } catch (error) {
          this.uncheckable(subs, error);
        }
      }
      if (persons.size === 0) return;
      let states: Awaited<ReturnType<typeof personStreamStates>>;
      try {
        this.checkQueries.inc();
        states = await personStreamStates(this.sql, [...persons.keys()]);
      } catch (error) {
        this.uncheckable([...persons.values()].flat(), error);
        return;
      }
      for (const [tokenId, subs] of persons) {
        const state = states.get(tokenId);
        if (!state?.live) {
          this.closeAll(subs, 'revoked');
          continue;
        }
        this.checked(subs);
        for (const s of subs) {
          s.audience = { ...s.audience, sharedFlowIds: state.sharedFlowIds };
          if (!s.live || s.closed) continue;
          if (state.sharedFlowIds.length > 0) this.guests.add(s);
          else this.guests.delete(s);
        }
      }
    } finally {
      this.checking = false;
    }
  }

  private closeAll(subs: readonly Subscription[], reason: CloseReason): void {
    for (const s of subs) this.close(s, reason);
  }

  private checked(subs: readonly Subscription[]): void {
    const now = Date.now();
    for (const s of subs) s.checkedAt = now;
  }

  /** A refusal closes the streams as revoked; anything else (the database out of reach) leaves them open a while, then closes them to be retried. */
  private uncheckable(subs: readonly Subscription[], error: unknown): void {
    if (
      error instanceof DomainError &&
      (error.code === 'UNAUTHORIZED' || error.code === 'CREDENTIAL_REVOKED')
    )
      return this.closeAll(subs, 'revoked');
    this.log.warn({ err: error }, 'event streams: credentials could not be checked; trying again');
    const now = Date.now();
    for (const s of subs) if (now - s.checkedAt >= UNCHECKED_MS) this.close(s, 'unavailable');
  }
}

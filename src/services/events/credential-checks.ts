/**
 * The credentials of open event streams, checked again every CHECK_MS while any is open, so a
 * revoked one's streams close within a second, and a person's shares read anew with them. Keys
 * and clients go through the authenticator's cache (dropped on revocation in every process, so
 * no query unless one was revoked); every person token of every open stream is checked in one
 * query with its shares. A refusal closes `revoked`; a failure to check is not one.
 */
import type { Logger } from 'pino';
import { Counter } from 'prom-client';
import { DomainError } from '../../platform/errors.ts';
import type { Metrics } from '../../platform/metrics.ts';
import type { Sql } from '../../storage/db.ts';
import { personStreamStates } from '../../storage/event-log.store.ts';
import type { Authenticator } from '../auth/authenticate.ts';
import type { Principal } from '../auth/principal.ts';
import type { CloseReason, Subscription } from './subscription.ts';

/** How often credentials and shares of open streams are checked again. */
const CHECK_MS = 500;
/**
 * A stream whose credential could not be checked (the database out of reach) for this long is
 * closed as `unavailable` (retry): it is not known to be revoked, nor known to be valid.
 */
const UNCHECKED_MS = 2000;

/** The streams the checks look at, and what they do to them (the hub's). */
export interface CheckedStreams {
  /** The streams attached now. */
  open(): ReadonlySet<Subscription>;
  close(sub: Subscription, reason: CloseReason): void;
  /** A person's shares as read now: the stream reads those from here on. */
  reshare(sub: Subscription, sharedFlowIds: string[]): void;
}

export class CredentialChecks {
  private timer: NodeJS.Timeout | null = null;
  private checking = false;
  private readonly rounds: Counter;
  private readonly queries: Counter;

  constructor(
    private readonly sql: Sql,
    private readonly auth: Authenticator,
    private readonly log: Logger,
    metrics: Metrics,
    private readonly streams: CheckedStreams,
  ) {
    const registers = [metrics.registry];
    this.rounds = new Counter({
      name: 'flowplan_stream_checks_total',
      help: "Rounds of checking open streams' credentials again (one every 500 ms while any is open)",
      registers,
    });
    this.queries = new Counter({
      name: 'flowplan_stream_check_queries_total',
      help: 'Queries those rounds ran for person tokens and their shares (one per round, however many streams)',
      registers,
    });
  }

  start(): void {
    this.timer = setInterval(() => void this.round(), CHECK_MS);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  private async round(): Promise<void> {
    if (this.checking || this.streams.open().size === 0) return;
    this.checking = true;
    this.rounds.inc();
    try {
      const byCredential = new Map<string, { principal: Principal; subs: Subscription[] }>();
      for (const s of this.streams.open()) {
        const same = byCredential.get(s.request.authorization);
        if (same) same.subs.push(s);
        else
          byCredential.set(s.request.authorization, { principal: s.request.principal, subs: [s] });
      }
      const persons = new Map<string, Subscription[]>();
      for (const [authorization, { principal, subs }] of byCredential) {
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
        this.queries.inc();
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
        for (const s of subs) this.streams.reshare(s, state.sharedFlowIds);
      }
    } finally {
      this.checking = false;
    }
  }

  private closeAll(subs: readonly Subscription[], reason: CloseReason): void {
    for (const s of subs) this.streams.close(s, reason);
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
    for (const s of subs)
      if (now - s.checkedAt >= UNCHECKED_MS) this.streams.close(s, 'unavailable');
  }
}

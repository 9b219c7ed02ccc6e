/**
 * The per-credential rate limit (CONTRACT §1) held across every process on one database.
 *
 * Design: the bucket lives in Postgres (rate_buckets, one row per credential); each process
 * leases whole tokens from it and spends them locally, so a request waits for the database
 * only when its process holds no token for that credential. A lease is sized to about 0.5 s
 * of the credential's recent rate in this process (one token for a quiet one, at most 1/40 of
 * the burst), so a busy credential costs a few round trips a second whatever its rate, and
 * the next lease is taken while half of the last remains, so requests do not wait for it.
 * Tokens are subtracted in the bucket before they are spent, so the processes together never
 * admit more than the bucket allows. What a process holds unused is given back after
 * RETURN_MS without a request, so the worst case is under-admission: at most 1/40 of the
 * burst per process held back for that long. A 304 gives its token back to the process's
 * lease (it spends nothing).
 *
 * When the database is slow or away (no lease within LEASE_TIMEOUT_MS), the process falls
 * back to its own in-memory bucket of the full size: the limit then holds per process, so N
 * processes may admit up to N times the budget until the database answers again. Requests
 * that need the database fail with 503 meanwhile anyway.
 *
 * Ours, not a library's: the Postgres-backed limiters (rate-limiter-flexible's) take a round
 * trip per request, and leasing is what keeps the database off the request's path.
 */
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import type { Sql } from '../../storage/db.ts';
import { forgetIdleBuckets, leaseTokens, returnTokens } from '../../storage/rate.store.ts';
import { RateLimiter, type Limiter, type RateState } from './rate-limit.ts';

/** A lease covers about this long of the credential's recent rate in this process... */
const LEASE_WINDOW_S = 0.5;
/** ...but never more than this share of the burst, so little is ever held back from the others. */
const LEASE_SHARE_OF_BURST = 1 / 40;
const LEASE_TIMEOUT_MS = 250;
const RETURN_MS = 500;
const FORGET_EVERY_MS = 10 * 60_000;

interface Lease {
  /** Tokens this process holds for the key. */
  tokens: number;
  /** What the shared bucket held after the last lease (for the headers). */
  left: number;
  leasedAt: number;
  /** Tokens spent since the last lease: the rate that sizes the next one. */
  spent: number;
  /** The last lease's size. */
  granted: number;
  usedAt: number;
  /** The bucket was found empty: until then a request is refused here, without asking it again. */
  emptyUntil: number;
  pending: Promise<void> | null;
}

/** Seconds an empty bucket of `burst` takes to fill at `perMinute`. */
export const fillSeconds = (perMinute: number, burst: number): number =>
  Math.ceil(burst / (perMinute / 60));

export class SharedRateLimiter implements Limiter {
  private readonly leases = new LRUCache<string, Lease>({ max: 100_000 });
  /** Keys whose process holds unused tokens, to give back when idle. */
  private readonly holding = new Set<string>();
  private readonly fallback: RateLimiter;
  private readonly perSecond: number;
  private readonly timer: NodeJS.Timeout;
  private lastForget = Date.now();
  private degraded = false;

  constructor(
    private readonly sql: Sql,
    readonly perMinute: number,
    readonly burst: number,
    private readonly log: Logger,
    /**
     * How long a bucket stays idle before it is forgotten: at least the time the slowest-filling
     * budget sharing the table takes to fill (their rows look alike), so none is forgotten
     * before it is full again (fillSeconds).
     */
    private readonly forgetAfterSeconds: number,
  ) {
    this.fallback = new RateLimiter(perMinute, burst);
    this.perSecond = perMinute / 60;
    this.timer = setInterval(() => void this.giveBack(), RETURN_MS);
    this.timer.unref();
  }

  /** Answers at once while this process holds the tokens for the key; otherwise after a lease. */
  take(key: string, cost = 1): RateState | Promise<RateState> {
    const price = Math.min(cost, this.burst);
    const lease = this.leaseOf(key);
    if (lease.tokens >= price || Date.now() < lease.emptyUntil)
      return this.spend(key, lease, price);
    return this.takeLeased(key, lease, price);
  }

  private async takeLeased(key: string, lease: Lease, price: number): Promise<RateState> {
    // Requests of this process that waited on one lease may find its tokens taken by the
    // others: they lease again, until the bucket itself says it is empty.
    while (lease.tokens < price && Date.now() >= lease.emptyUntil) {
      const leased = await this.refill(key, lease, price - lease.tokens);
      if (!leased) return this.fallback.take(key, price);
    }
    return this.spend(key, lease, price);
  }

  private spend(key: string, lease: Lease, price: number): RateState {
    const allowed = lease.tokens >= price;
    if (allowed) {
      lease.tokens -= price;
      lease.spent += price;
      lease.usedAt = Date.now();
      if (lease.tokens >= 1) this.holding.add(key);
      // A busy credential leases its next tokens while half of these remain: requests do not queue behind the round trip.
      if (!lease.pending && lease.granted >= 4 && lease.tokens < lease.granted / 2)
        void this.refill(key, lease);
    }
    return this.state(lease, allowed, price);
  }

  /** A 304, or a spend refused by another budget: the tokens go back to this process's lease. */
  refund(key: string, tokens = 1): void {
    const lease = this.leases.get(key);
    if (!lease) return;
    lease.tokens = Math.min(this.burst, lease.tokens + tokens);
    this.holding.add(key);
  }

  peek(key: string): RateState {
    return this.state(this.leaseOf(key), true);
  }

  headers(state: RateState): Record<string, string> {
    return this.fallback.headers(state);
  }

  /** Gives back everything held (at shutdown). */
  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.giveBack(0);
  }

  private leaseOf(key: string): Lease {
    let lease = this.leases.get(key);
    if (!lease) {
      lease = {
        tokens: 0,
        left: this.burst,
        leasedAt: 0,
        spent: 0,
        granted: 0,
        usedAt: 0,
        emptyUntil: 0,
        pending: null,
      };
      this.leases.set(key, lease);
    }
    return lease;
  }

  /**
   * Leases tokens (one request at a time per key in this process; the others wait for it),
   * `needed` at least. Returns false when the database did not answer in time.
   */
  private async refill(key: string, lease: Lease, needed = 1): Promise<boolean> {
    if (!lease.pending) {
      const now = Date.now();
      const perSecond = lease.leasedAt
        ? lease.spent / Math.max(0.001, (now - lease.leasedAt) / 1000)
        : 0;
      const want = Math.max(
        Math.ceil(needed),
        Math.min(
          Math.ceil(perSecond * LEASE_WINDOW_S),
          Math.floor(this.burst * LEASE_SHARE_OF_BURST),
        ),
      );
      lease.leasedAt = now;
      lease.spent = 0;
      lease.pending = leaseTokens(this.sql, key, want, this.burst, this.perSecond)
        .then(
          ({ granted, left }) => {
            // A lease that came after its timeout still counts: the tokens were taken from the bucket.
            lease.tokens += granted;
            lease.granted = granted;
            lease.left = left;
            // A flood refused for an empty bucket asks the database again only when a token is due.
            lease.emptyUntil =
              granted === 0 ? Date.now() + ((1 - left) / this.perSecond) * 1000 : 0;
            if (this.degraded) this.log.info('rate limit: the shared budget answers again');
            this.degraded = false;
          },
          (error: unknown) => {
            if (!this.degraded)
              this.log.warn(
                { err: error },
                'rate limit: shared budget out of reach; each process keeps its own meanwhile',
              );
            this.degraded = true;
          },
        )
        .finally(() => {
          lease.pending = null;
        });
    }
    let timer: NodeJS.Timeout | undefined;
    const inTime = await Promise.race([
      lease.pending.then(() => !this.degraded),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), LEASE_TIMEOUT_MS);
      }),
    ]);
    clearTimeout(timer);
    return inTime;
  }

  private async giveBack(idleMs = RETURN_MS): Promise<void> {
    const now = Date.now();
    for (const key of [...this.holding]) {
      const lease = this.leases.get(key);
      if (!lease || lease.pending) continue;
      if (now - lease.usedAt < idleMs) continue;
      this.holding.delete(key);
      const unused = Math.floor(lease.tokens);
      if (unused < 1) continue;
      lease.tokens -= unused;
      await returnTokens(this.sql, key, unused, this.burst).catch(() => {
        // Lost: the bucket refills on its own; the credential was only held back.
      });
    }
    if (now - this.lastForget > FORGET_EVERY_MS) {
      this.lastForget = now;
      await forgetIdleBuckets(this.sql, this.forgetAfterSeconds).catch(() => {});
    }
  }

  private state(lease: Lease, allowed: boolean, price = 1): RateState {
    const available = lease.tokens + lease.left;
    return {
      allowed,
      remaining: Math.floor(available),
      resetSeconds: Math.max(0, Math.ceil((this.burst - available) / this.perSecond)),
      // Until the bucket holds the price (a costly request's, or one token).
      retryAfterSeconds: Math.max(1, Math.ceil((price - available) / this.perSecond)),
    };
  }
}

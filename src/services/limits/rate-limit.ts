/**
 * Token bucket per credential: `perMinute` tokens a minute refill a bucket of `burst`.
 * In memory per process; each credential has its own bucket, so one flood never
 * drains another's budget.
 */
import { LRUCache } from 'lru-cache';

interface Bucket {
  tokens: number;
  at: number;
}

export interface RateState {
  allowed: boolean;
  remaining: number;
  /** Seconds until the bucket is full again. */
  resetSeconds: number;
  /** Seconds until one token is available (for Retry-After). */
  retryAfterSeconds: number;
}

/** A rate budget per key: this process's own (RateLimiter) or one shared by every process (SharedRateLimiter). */
export interface Limiter {
  readonly perMinute: number;
  readonly burst: number;
  /** Spends `cost` tokens (1 by default) if the bucket holds them: all or none. */
  take(key: string, cost?: number): RateState | Promise<RateState>;
  /** Gives back `tokens` (1 by default) a request spent and turned out not to owe. */
  refund(key: string, tokens?: number): void;
  peek(key: string): RateState;
  headers(state: RateState): Record<string, string>;
}

export class RateLimiter implements Limiter {
  private readonly buckets: LRUCache<string, Bucket>;
  private readonly perMs: number;

  constructor(
    readonly perMinute: number,
    readonly burst: number,
    private readonly now: () => number = Date.now,
    /** Buckets held at once: the memory bound under a flood of distinct keys (the least recently used go first). */
    readonly maxKeys = 100_000,
  ) {
    this.perMs = perMinute / 60_000;
    // An idle bucket refills completely within this time, so forgetting it changes nothing.
    this.buckets = new LRUCache({
      max: maxKeys,
      ttl: Math.ceil(burst / this.perMs),
      ttlAutopurge: false,
    });
  }

  /** Buckets held now. */
  get size(): number {
    return this.buckets.size;
  }

  /** Spends `cost` tokens if there are that many (never more than the burst: it could not be). */
  take(key: string, cost = 1): RateState {
    const bucket = this.refill(key);
    const price = Math.min(cost, this.burst);
    const allowed = bucket.tokens >= price;
    if (allowed) bucket.tokens -= price;
    return this.state(bucket, allowed, price);
  }

  /** Gives back tokens spent by a request that turned out to be free (a 304) or refused elsewhere. */
  refund(key: string, tokens = 1): void {
    const bucket = this.buckets.get(key);
    if (bucket) bucket.tokens = Math.min(this.burst, bucket.tokens + tokens);
  }

  peek(key: string): RateState {
    return this.state(this.refill(key), true);
  }

  private refill(key: string): Bucket {
    const now = this.now();
    let bucket = this.buckets.get(key);
    if (!bucket) {
      bucket = { tokens: this.burst, at: now };
      this.buckets.set(key, bucket);
    } else {
      bucket.tokens = Math.min(this.burst, bucket.tokens + (now - bucket.at) * this.perMs);
      bucket.at = now;
    }
    return bucket;
  }

  private state(bucket: Bucket, allowed: boolean, price = 1): RateState {
    const remaining = Math.floor(bucket.tokens);
    return {
      allowed,
      remaining,
      resetSeconds: Math.ceil((this.burst - bucket.tokens) / this.perMs / 1000),
      retryAfterSeconds: Math.max(1, Math.ceil((price - bucket.tokens) / this.perMs / 1000)),
    };
  }

  headers(state: RateState): Record<string, string> {
    return {
      'RateLimit-Policy': `"credential";q=${this.perMinute};w=60`,
      RateLimit: `"credential";r=${state.remaining};t=${state.resetSeconds}`,
      'X-RateLimit-Limit': String(this.perMinute),
      'X-RateLimit-Remaining': String(state.remaining),
      'X-RateLimit-Reset': String(Math.ceil(this.now() / 1000) + state.resetSeconds),
    };
  }
}

/**
 * The edge's rate budgets: per credential (shared by every process), per workspace for the
 * costly part of requests whose price grows with their work (shared too), per client address
 * for routes without a credential, and per address for failed credential checks. Spending one
 * that is empty is a 429 RATE_LIMITED with Retry-After; a 304 gives its spend back.
 */
import { DomainError, type ErrorCode } from '../../platform/errors.ts';
import { httpStatus } from './error-status.ts';
import { addressBucket } from '../../platform/client-address.ts';
import type { Metrics } from '../../platform/metrics.ts';
import type { Limiter, RateLimiter, RateState } from '../../services/limits/rate-limit.ts';
import type { HttpMetrics } from './http-metrics.ts';
import type { RequestHead } from './request.ts';

export interface BudgetLimiters {
  /** The per-credential budget, shared by every process on the database. */
  limiter: Limiter;
  /**
   * The per-workspace budget of costly work (all of a request's price but its first token),
   * shared by every process and every credential of the workspace.
   */
  workspaceLimiter: Limiter;
  /** The separate per-client-address budget of routes with `rateLimit: 'address'`. */
  addressLimiter: RateLimiter;
  /** Failed credential checks per client address: spent, they are answered 429 (guessing and floods). */
  failedCredentialLimiter: RateLimiter;
}

/** WebSocket upgrades one address may have waiting for their credential (the first message) at once. */
export const PENDING_UPGRADES_PER_ADDRESS = 16;

export class Budgets {
  /** WebSocket upgrades waiting for their credential, by address (IPv6 by /64). */
  private readonly pendingUpgrades = new Map<string, number>();

  constructor(
    private readonly limiters: BudgetLimiters,
    private readonly metrics: HttpMetrics,
    registry: Metrics,
  ) {
    const failed = limiters.failedCredentialLimiter;
    registry.gauge(
      'flowplan_failed_credential_budgets',
      `Client addresses (IPv6 by /64) with a budget of failed credential checks held in memory (at most ${failed.maxKeys})`,
      () => failed.size,
    );
  }

  /**
   * Spends one of the credential's budget; its state goes into `headers` either way. A promise
   * only while a shared budget is being leased: most requests settle here without one.
   */
  spendCredential(rateKey: string, headers: Record<string, string>): Promise<void> | undefined {
    const rate = this.limiters.limiter.take(rateKey);
    if (rate instanceof Promise) return rate.then((leased) => this.settle(leased, headers));
    this.settle(rate, headers);
    return undefined;
  }

  /**
   * Spends `tokens` more (a costly request's rest) of the credential's budget and of its
   * workspace's: all or none, so what one of them refuses is given back to the other.
   */
  async spendMore(
    rateKey: string,
    workspaceId: string,
    tokens: number,
    headers: Record<string, string>,
  ): Promise<void> {
    const { limiter, workspaceLimiter } = this.limiters;
    this.settle(await limiter.take(rateKey, tokens), headers);
    const shared = await workspaceLimiter.take(`workspace:${workspaceId}`, tokens);
    if (shared.allowed) return;
    limiter.refund(rateKey, tokens);
    Object.assign(headers, limiter.headers(limiter.peek(rateKey)));
    throw this.refusal(
      workspaceLimiter,
      shared,
      'workspace',
      `This workspace's budget for costly requests is spent (${workspaceLimiter.perMinute} a minute, ${workspaceLimiter.burst} at once, for all its credentials together)`,
    );
  }

  private settle(rate: RateState, headers: Record<string, string>): void {
    const { limiter } = this.limiters;
    Object.assign(headers, limiter.headers(rate));
    if (!rate.allowed)
      throw this.refusal(limiter, rate, 'credential', 'Rate limit exceeded for this credential');
  }

  /** Spends one of the client address's budget; returns the key it was spent under. */
  spendAddress(head: RequestHead): string {
    const rateKey = `address:${addressBucket(head.remoteAddress)}`;
    const rate = this.limiters.addressLimiter.take(rateKey);
    if (!rate.allowed)
      throw this.refusal(
        this.limiters.addressLimiter,
        rate,
        'address',
        'Too many requests from this address',
      );
    return rateKey;
  }

  /**
   * An upgraded WebSocket whose credential is still to come (first-message authentication)
   * holds one of its address's PENDING_UPGRADES_PER_ADDRESS places: returns what gives the
   * place back (idempotent); throws 429 RATE_LIMITED when they are all taken.
   */
  holdPendingUpgrade(head: RequestHead): () => void {
    const key = addressBucket(head.remoteAddress);
    const pending = this.pendingUpgrades.get(key) ?? 0;
    if (pending >= PENDING_UPGRADES_PER_ADDRESS) {
      this.metrics.rateLimited.inc({ reason: 'pending-upgrades' });
      throw new DomainError(
        'RATE_LIMITED',
        `Too many WebSocket upgrades from this address are waiting for their credential (at most ${PENDING_UPGRADES_PER_ADDRESS})`,
        {
          limit: PENDING_UPGRADES_PER_ADDRESS,
          retryAfter: 1,
        },
        { retryAfterSeconds: 1 },
      );
    }
    this.pendingUpgrades.set(key, pending + 1);
    let left = false;
    return () => {
      if (left) return;
      left = true;
      const rest = (this.pendingUpgrades.get(key) ?? 1) - 1;
      if (rest > 0) this.pendingUpgrades.set(key, rest);
      else this.pendingUpgrades.delete(key);
    };
  }

  /**
   * What a credential that does not check out answers: it spends its address's budget, and
   * once that is spent the answer is 429 instead of 401. `codes`: the refusals that count
   * (a route's own secrets: a client secret, a code, a refresh token); by default every 401.
   */
  failedCredential(error: unknown, head: RequestHead, codes?: readonly ErrorCode[]): unknown {
    if (
      !(error instanceof DomainError) ||
      !(codes ? codes.includes(error.code) : httpStatus(error) === 401)
    )
      return error;
    const limiter = this.limiters.failedCredentialLimiter;
    const rate = limiter.take(`failed:${addressBucket(head.remoteAddress)}`);
    if (rate.allowed) return error;
    return this.refusal(
      limiter,
      rate,
      'failed-credential',
      'Too many failed credential checks from this address',
    );
  }

  /** A 304 spends nothing: gives back what `rateKey` spent, and says the budget's state in `headers`. */
  refund(rateKey: string, credential: boolean, headers: Record<string, string>): void {
    if (credential) {
      const { limiter } = this.limiters;
      limiter.refund(rateKey);
      Object.assign(headers, limiter.headers(limiter.peek(rateKey)));
    } else {
      this.limiters.addressLimiter.refund(rateKey);
    }
  }

  private refusal(
    limiter: RateLimiter | Limiter,
    rate: RateState,
    reason: string,
    message: string,
  ): DomainError {
    this.metrics.rateLimited.inc({ reason });
    return new DomainError(
      'RATE_LIMITED',
      message,
      {
        limit: limiter.perMinute,
        burst: limiter.burst,
        retryAfter: rate.retryAfterSeconds,
      },
      { retryAfterSeconds: rate.retryAfterSeconds },
    );
  }
}

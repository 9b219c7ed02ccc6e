/**
 * What an attempt's result means for its delivery: delivered, tried again after a delay,
 * given up (with the endpoint disabled when it answered 410 Gone), or skipped. Pure, so every
 * case can be checked without a receiver; the dispatcher (delivery.job.ts) sends and records.
 *
 * Only a 2xx answer delivers. After the n-th failed attempt the next waits
 * min(base × 4^(n−1), 10 h) ±10%, or longer if the receiver's Retry-After asks (up to a day);
 * 10 attempts in all, so with the default base of 5 s the last try comes about 27 hours after
 * the first.
 */
import type { AttemptOutcome } from './sender.ts';

/** Attempts a delivery gets in all (a manual retry's limit is its one more). */
export const MAX_ATTEMPTS = 10;
const MAX_DELAY_SECONDS = 10 * 3600;
const MAX_RETRY_AFTER_SECONDS = 24 * 3600;

export function retryDelaySeconds(
  failedAttempts: number,
  baseSeconds: number,
  random = Math.random(),
): number {
  const delay = Math.min(baseSeconds * 4 ** (failedAttempts - 1), MAX_DELAY_SECONDS);
  return delay * (0.9 + 0.2 * random);
}

/** How an attempt went, as the dispatcher saw it. */
export type AttemptResult =
  /** The endpoint was deleted or disabled after the event was committed: nothing was sent. */
  | { kind: 'endpoint-disabled' }
  /** Retention dropped the event before it could be sent (its lane was held up that long): nothing was sent. */
  | { kind: 'event-gone' }
  /** The address guard refused where the endpoint's name leads now: nothing was sent. */
  | { kind: 'refused'; reason: string }
  /** The attempt failed before a request went out. */
  | { kind: 'not-sent'; reason: string; durationMs: number }
  /** A request went out: an answer, a connection failure or a timeout (the sender's `error` says which). */
  | { kind: 'sent'; result: AttemptOutcome };

export interface Classified {
  status: 'delivered' | 'retry' | 'failed' | 'skipped';
  /** Seconds until the next try (0 unless `retry`). */
  delaySeconds: number;
  statusCode: number | null;
  error: string | null;
  /** The endpoint answered 410 Gone, for good: it is disabled with this outcome. */
  gone: boolean;
  /** What the attempt log keeps of it; null when nothing was sent. */
  attempt: AttemptOutcome | null;
}

/** `delivery.attempts` counts this attempt; `random` (0–1, drawn when absent) places a retry within its ±10%. */
export function classifyAttempt(
  result: AttemptResult,
  delivery: { attempts: number; attemptLimit: number },
  retryBaseSeconds: number,
  random?: number,
): Classified {
  if (result.kind === 'endpoint-disabled') {
    return {
      status: 'skipped',
      delaySeconds: 0,
      statusCode: null,
      error: 'endpoint disabled',
      gone: false,
      attempt: null,
    };
  }
  if (result.kind === 'event-gone') {
    return {
      status: 'skipped',
      delaySeconds: 0,
      statusCode: null,
      error: 'event no longer kept (past the event retention)',
      gone: false,
      attempt: null,
    };
  }
  const attempt: AttemptOutcome =
    result.kind === 'sent'
      ? result.result
      : result.kind === 'refused'
        ? { statusCode: null, durationMs: 0, error: result.reason, retryAfter: null }
        : {
            statusCode: null,
            durationMs: result.durationMs,
            error: `not sent: ${result.reason}`,
            retryAfter: null,
          };
  const code = attempt.statusCode;
  const gone = code === 410;
  let status: Classified['status'];
  let delaySeconds = 0;
  if (code !== null && code >= 200 && code < 300) status = 'delivered';
  else if (gone || delivery.attempts >= delivery.attemptLimit) status = 'failed';
  else {
    status = 'retry';
    const backoff = retryDelaySeconds(delivery.attempts, retryBaseSeconds, random);
    delaySeconds = Math.max(backoff, Math.min(attempt.retryAfter ?? 0, MAX_RETRY_AFTER_SECONDS));
  }
  return { status, delaySeconds, statusCode: code, error: attempt.error, gone, attempt };
}

/**
 * The outcome classifier, case by case: what each kind of attempt result (an answer of each
 * class, a connection failure, a timeout, an address refusal, a failure before sending, an
 * endpoint disabled meanwhile) means for the delivery at each point of its attempts. The jitter
 * is fixed at its middle (random 0.5) unless a case says otherwise, so delays are exact.
 */
import t from 'tap';
import type { AttemptOutcome } from '../../../src/services/webhooks/sender.ts';
import {
  classifyAttempt,
  MAX_ATTEMPTS,
  type AttemptResult,
  type Classified,
} from '../../../src/services/webhooks/outcome.ts';

const BASE = 5;
const answered = (
  statusCode: number | null,
  error: string | null = null,
  retryAfter: number | null = null,
): AttemptOutcome => ({ statusCode, durationMs: 7, error, retryAfter });
const sent = (result: AttemptOutcome): AttemptResult => ({ kind: 'sent', result });
const retry = (delaySeconds: number, attempt: AttemptOutcome): Classified => ({
  status: 'retry',
  delaySeconds,
  statusCode: attempt.statusCode,
  error: attempt.error,
  gone: false,
  attempt,
});
const failed = (attempt: AttemptOutcome, gone = false): Classified => ({
  status: 'failed',
  delaySeconds: 0,
  statusCode: attempt.statusCode,
  error: attempt.error,
  gone,
  attempt,
});
const delivered = (attempt: AttemptOutcome): Classified => ({
  status: 'delivered',
  delaySeconds: 0,
  statusCode: attempt.statusCode,
  error: attempt.error,
  gone: false,
  attempt,
});

const ok = answered(200);
const oversized = answered(204, 'answer longer than 65536 bytes, not read further');
const serverError = answered(500, 'answered 500');
const redirect = answered(302, 'redirect not followed (302 to http://elsewhere/)');
const gone = answered(410, 'answered 410');
const slowDown = (seconds: number) => answered(429, 'answered 429', seconds);
const connectionFailed = answered(null, 'connection failed: ECONNREFUSED');
const timedOut = answered(null, 'no complete answer within 10 s');
const refusal =
  'The host hook.example.test resolves to 10.0.0.7, a private address; webhooks only reach public addresses';
const refused: AttemptOutcome = {
  statusCode: null,
  durationMs: 0,
  error: refusal,
  retryAfter: null,
};

/** [what, the result, attempts made (this one included), attempt limit, random, expected] */
const cases: [string, AttemptResult, number, number, number, Classified][] = [
  [
    'endpoint deleted or disabled: skipped, nothing recorded as sent',
    { kind: 'endpoint-disabled' },
    1,
    MAX_ATTEMPTS,
    0.5,
    {
      status: 'skipped',
      delaySeconds: 0,
      statusCode: null,
      error: 'endpoint disabled',
      gone: false,
      attempt: null,
    },
  ],
  ['200: delivered', sent(ok), 1, MAX_ATTEMPTS, 0.5, delivered(ok)],
  [
    '299 (last of 2xx): delivered',
    sent(answered(299)),
    1,
    MAX_ATTEMPTS,
    0.5,
    delivered(answered(299)),
  ],
  [
    '2xx with a note (oversized answer): delivered, the note kept',
    sent(oversized),
    1,
    MAX_ATTEMPTS,
    0.5,
    delivered(oversized),
  ],
  ['2xx on the last attempt: delivered', sent(ok), MAX_ATTEMPTS, MAX_ATTEMPTS, 0.5, delivered(ok)],
  ['199 (below 2xx): retried', sent(answered(199)), 1, MAX_ATTEMPTS, 0.5, retry(5, answered(199))],
  ['300 (above 2xx): retried', sent(answered(300)), 1, MAX_ATTEMPTS, 0.5, retry(5, answered(300))],
  ['redirect (not followed): retried', sent(redirect), 1, MAX_ATTEMPTS, 0.5, retry(5, redirect)],
  [
    '500 after the 1st attempt: retried after the base',
    sent(serverError),
    1,
    MAX_ATTEMPTS,
    0.5,
    retry(5, serverError),
  ],
  [
    '500 after the 2nd: 4 × the base',
    sent(serverError),
    2,
    MAX_ATTEMPTS,
    0.5,
    retry(20, serverError),
  ],
  [
    '500 after the 3rd: 16 × the base',
    sent(serverError),
    3,
    MAX_ATTEMPTS,
    0.5,
    retry(80, serverError),
  ],
  [
    '500 after the 9th: at most 10 h',
    sent(serverError),
    9,
    MAX_ATTEMPTS,
    0.5,
    retry(36_000, serverError),
  ],
  ['shortest jitter: 90%', sent(serverError), 3, MAX_ATTEMPTS, 0, retry(72, serverError)],
  ['longest jitter: 110%', sent(serverError), 3, MAX_ATTEMPTS, 1, retry(88, serverError)],
  ['jitter of the 10 h cap too', sent(serverError), 9, MAX_ATTEMPTS, 1, retry(39_600, serverError)],
  [
    'Retry-After longer than the backoff: waited for',
    sent(slowDown(120)),
    1,
    MAX_ATTEMPTS,
    0.5,
    retry(120, slowDown(120)),
  ],
  [
    'Retry-After shorter than the backoff: the backoff',
    sent(slowDown(2)),
    3,
    MAX_ATTEMPTS,
    0.5,
    retry(80, slowDown(2)),
  ],
  ['Retry-After of 0: the backoff', sent(slowDown(0)), 1, MAX_ATTEMPTS, 0.5, retry(5, slowDown(0))],
  [
    'Retry-After over a day: a day',
    sent(slowDown(3 * 86_400)),
    1,
    MAX_ATTEMPTS,
    0.5,
    retry(86_400, slowDown(3 * 86_400)),
  ],
  [
    'Retry-After on the last attempt: given up',
    sent(slowDown(60)),
    MAX_ATTEMPTS,
    MAX_ATTEMPTS,
    0.5,
    failed(slowDown(60)),
  ],
  [
    '500 on the last attempt: given up',
    sent(serverError),
    MAX_ATTEMPTS,
    MAX_ATTEMPTS,
    0.5,
    failed(serverError),
  ],
  [
    'past the limit: given up',
    sent(serverError),
    MAX_ATTEMPTS + 1,
    MAX_ATTEMPTS,
    0.5,
    failed(serverError),
  ],
  [
    'a manual retry (limit: one more) that fails: given up',
    sent(serverError),
    4,
    4,
    0.5,
    failed(serverError),
  ],
  [
    '410 on the 1st attempt: given up, endpoint disabled',
    sent(gone),
    1,
    MAX_ATTEMPTS,
    0.5,
    failed(gone, true),
  ],
  [
    '410 on the last attempt: given up, endpoint disabled',
    sent(gone),
    MAX_ATTEMPTS,
    MAX_ATTEMPTS,
    0.5,
    failed(gone, true),
  ],
  [
    '410 with Retry-After: given up, no delay',
    sent({ ...gone, retryAfter: 60 }),
    1,
    MAX_ATTEMPTS,
    0.5,
    failed({ ...gone, retryAfter: 60 }, true),
  ],
  [
    'connection failed: retried',
    sent(connectionFailed),
    1,
    MAX_ATTEMPTS,
    0.5,
    retry(5, connectionFailed),
  ],
  [
    'connection failed on the last attempt: given up',
    sent(connectionFailed),
    MAX_ATTEMPTS,
    MAX_ATTEMPTS,
    0.5,
    failed(connectionFailed),
  ],
  ['timeout: retried', sent(timedOut), 2, MAX_ATTEMPTS, 0.5, retry(20, timedOut)],
  [
    'timeout on the last attempt: given up',
    sent(timedOut),
    MAX_ATTEMPTS,
    MAX_ATTEMPTS,
    0.5,
    failed(timedOut),
  ],
  [
    'address refused: retried, recorded as an attempt of 0 ms',
    { kind: 'refused', reason: refusal },
    1,
    MAX_ATTEMPTS,
    0.5,
    retry(5, refused),
  ],
  [
    'address refused on the last attempt: given up',
    { kind: 'refused', reason: refusal },
    MAX_ATTEMPTS,
    MAX_ATTEMPTS,
    0.5,
    failed(refused),
  ],
  [
    'failed before sending: retried, the reason recorded',
    { kind: 'not-sent', reason: 'bad agent', durationMs: 3 },
    1,
    MAX_ATTEMPTS,
    0.5,
    retry(5, { statusCode: null, durationMs: 3, error: 'not sent: bad agent', retryAfter: null }),
  ],
  [
    'failed before sending on the last attempt: given up',
    { kind: 'not-sent', reason: 'bad agent', durationMs: 3 },
    MAX_ATTEMPTS,
    MAX_ATTEMPTS,
    0.5,
    failed({ statusCode: null, durationMs: 3, error: 'not sent: bad agent', retryAfter: null }),
  ],
];

t.test('each attempt result maps to its outcome', async (t) => {
  for (const [what, result, attempts, attemptLimit, random, expected] of cases) {
    t.strictSame(classifyAttempt(result, { attempts, attemptLimit }, BASE, random), expected, what);
  }
});

t.test('without a given random, a retry falls within its ±10%', async (t) => {
  for (let i = 0; i < 100; i++) {
    const { status, delaySeconds } = classifyAttempt(
      sent(serverError),
      { attempts: 2, attemptLimit: MAX_ATTEMPTS },
      BASE,
    );
    if (status !== 'retry' || delaySeconds < 18 || delaySeconds > 22)
      t.fail(`${status} after ${delaySeconds} s`);
  }
  t.pass('100 draws between 18 and 22 s');
});

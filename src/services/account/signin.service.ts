/**
 * Checking a password: throttled, and answering the same, in the same time, whether the email
 * has no account or the password is wrong (an unknown email is checked against a dummy hash of
 * the same cost). scrypt runs on libuv's threadpool, so sign-ins never stall the event loop.
 *
 * The throttle takes each attempt from its counters before the password is checked (one
 * transaction under row locks), so a burst cannot slip past a limit it read before the others
 * counted. Three budgets, every address keyed by its addressBucket() (IPv6 by /64) and resolved
 * by the edge through TRUST_PROXY:
 * - one account from one address: locked for a window after a few failures;
 * - one address across accounts: locked after more (guessing many accounts from one place);
 * - one account from anywhere: never locked, only slowed (a growing delay before the check), so
 *   nobody can lock the real person out by failing on purpose from elsewhere.
 */
import { busy, DomainError } from '../../platform/errors.ts';
import { count } from '../../platform/plural.ts';
import { addressBucket } from '../../platform/client-address.ts';
import type { Sql } from '../../storage/db.ts';
import { findUserByEmail, type UserRow } from '../../storage/workspaces.store.ts';
import {
  forgetOldSigninAttempts,
  giveBackSigninAttempts,
  reserveSigninAttempt,
  type SigninKeys,
} from '../../storage/signin-attempts.store.ts';
import { hashPassword, sha256, verifyPassword } from '../auth/secrets.ts';
import { MAX_PASSWORD } from './password.ts';

export type { OrgRow } from '../../storage/workspaces.store.ts';

const WINDOW_SECONDS = 15 * 60;
/** Attempts within a window before the pair (account, address) or the address is locked. */
const LIMITS = { pair: 5, address: 20 } as const;
/** An account's attempts within a window before each next one waits, and how long: doubling from the base, at most the cap. */
const ACCOUNT_DELAY = { after: 5, baseMs: 250, maxMs: 4000 } as const;

let dummyHash: Promise<string> | null = null;

/**
 * Password checks waiting for or running on the threadpool. One check costs ~350 ms of a core
 * (scrypt at 128 MiB), so a 2-core machine does about 5 a second; past this bound a burst is
 * answered 503 at once rather than queued into sign-ins that take half a minute.
 */
const MAX_PENDING_CHECKS = 16;
let pendingChecks = 0;

/** Computes the dummy hash ahead of the first sign-in, so that one is not slower either. */
export function prepareSignin(): void {
  dummyHash ??= hashPassword('not a password');
}

/** Thrown when sign-in is refused for now; carries the minutes to wait. */
export class SigninThrottled extends DomainError {
  constructor(readonly minutes: number) {
    super(
      'RATE_LIMITED',
      `Too many failed sign-ins. Try again in ${count(minutes, 'minute')}.`,
      { retryAfter: minutes * 60 },
      { retryAfterSeconds: minutes * 60 },
    );
  }
}

function keysOf(email: string, address: string): SigninKeys {
  const normal = email.trim().toLowerCase();
  // No account has an address this long; a bounded key keeps the index happy.
  const account = normal.length <= 320 ? normal : `sha256:${sha256(normal)}`;
  const bucket = addressBucket(address);
  return {
    address: `address:${bucket}`,
    pair: `pair:${bucket} ${account}`,
    account: `account:${account}`,
  };
}

/** The wait before checking, for an account that saw this many attempts in its window. */
function accountDelayMs(previousAttempts: number): number {
  if (previousAttempts < ACCOUNT_DELAY.after) return 0;
  return Math.min(
    ACCOUNT_DELAY.maxMs,
    ACCOUNT_DELAY.baseMs * 2 ** (previousAttempts - ACCOUNT_DELAY.after),
  );
}

/** The person for this email and password; null (after the same work) when either is wrong. */
export async function checkPassword(
  sql: Sql,
  input: { email: string; password: string; address: string },
): Promise<UserRow | null> {
  if (input.password.length > MAX_PASSWORD) {
    throw new DomainError(
      'VALIDATION_FAILED',
      `The password is longer than ${MAX_PASSWORD} characters`,
      { field: 'password' },
    );
  }
  const keys = keysOf(input.email, input.address);
  const slot = await reserveSigninAttempt(sql, keys, LIMITS, WINDOW_SECONDS);
  if (!slot.admitted)
    throw new SigninThrottled(Math.max(1, Math.ceil(slot.retryAfterSeconds / 60)));
  let outcome: UserRow | null | undefined;
  try {
    const delay = accountDelayMs(slot.accountAttempts);
    if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
    outcome = await verify(sql, input);
  } finally {
    // An attempt refused for load (or failed on the way) was never checked: it gives its slot back.
    // Should that fail too, the error that stopped the check is the one to report; the counter ages out.
    if (outcome === undefined)
      await giveBackSigninAttempts(sql, keys, false).catch(() => undefined);
  }
  if (outcome) {
    await giveBackSigninAttempts(sql, keys, true);
    return outcome;
  }
  await forgetOldSigninAttempts(sql, 24 * 3600);
  return null;
}

async function verify(
  sql: Sql,
  input: { email: string; password: string },
): Promise<UserRow | null> {
  if (pendingChecks >= MAX_PENDING_CHECKS) {
    throw busy('sign-ins', 5);
  }
  pendingChecks++;
  try {
    const user = input.email.length <= 320 ? await findUserByEmail(sql, input.email) : null;
    const ok = await verifyPassword(
      input.password,
      user?.passwordHash ?? (await (dummyHash ??= hashPassword('not a password'))),
    );
    return user && ok ? user : null;
  } finally {
    pendingChecks--;
  }
}

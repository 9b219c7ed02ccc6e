/**
 * Checking a password: throttled per account and per client address, and answering the same,
 * in the same time, whether the email has no account or the password is wrong (an unknown
 * email is checked against a dummy hash of the same cost). scrypt runs on libuv's
 * threadpool, so sign-ins never stall the event loop.
 */
import { ApiError } from '../errors.ts';
import type { Db } from '../store/db.ts';
import { findUserByEmail, type UserRow } from '../store/workspaces.store.ts';
import { clearSigninFailures, recordSigninFailure, signinFailures } from '../store/people.store.ts';
import { hashPassword, verifyPassword } from '../auth/secrets.ts';

export const MAX_PASSWORD = 1024;
const WINDOW_SECONDS = 15 * 60;
const LIMITS = { account: 5, address: 20 };

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
export class SigninThrottled extends ApiError {
  constructor(readonly minutes: number) {
    super('RATE_LIMITED', `Too many failed sign-ins. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`, { retryAfter: minutes * 60 }, {
      'Retry-After': String(minutes * 60),
    });
  }
}

const keysOf = (email: string, address: string) => ({ account: `account:${email.trim().toLowerCase()}`, address: `address:${address}` });

async function throttle(sql: Db, email: string, address: string): Promise<void> {
  const keys = keysOf(email, address);
  const rows = await signinFailures(sql, [keys.account, keys.address], WINDOW_SECONDS);
  let waitMs = 0;
  for (const row of rows) {
    const limit = row.key === keys.account ? LIMITS.account : LIMITS.address;
    if (row.count >= limit) waitMs = Math.max(waitMs, row.oldest.getTime() + WINDOW_SECONDS * 1000 - Date.now());
  }
  if (waitMs > 0) throw new SigninThrottled(Math.max(1, Math.ceil(waitMs / 60_000)));
}

/** The person for this email and password; null (after the same work) when either is wrong. */
export async function checkPassword(sql: Db, input: { email: string; password: string; address: string }): Promise<UserRow | null> {
  if (input.password.length > MAX_PASSWORD) {
    throw new ApiError('VALIDATION_FAILED', `The password is longer than ${MAX_PASSWORD} characters`, { field: 'password' });
  }
  await throttle(sql, input.email, input.address);
  if (pendingChecks >= MAX_PENDING_CHECKS) {
    throw new ApiError('SERVICE_UNAVAILABLE', 'Too many sign-ins at this moment. Try again in a few seconds.', undefined, { 'Retry-After': '5' });
  }
  pendingChecks++;
  let user: UserRow | null;
  let ok: boolean;
  try {
    user = input.email.length <= 320 ? await findUserByEmail(sql, input.email) : null;
    ok = await verifyPassword(input.password, user?.passwordHash ?? (await (dummyHash ??= hashPassword('not a password'))));
  } finally {
    pendingChecks--;
  }
  const keys = keysOf(input.email, input.address);
  if (!user || !ok) {
    await recordSigninFailure(sql, [keys.account, keys.address]);
    return null;
  }
  await clearSigninFailures(sql, keys.account);
  return user;
}

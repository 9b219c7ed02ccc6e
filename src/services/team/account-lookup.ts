/**
 * Finding an account by its address, for a caller who must not learn in bulk which addresses
 * have accounts (issue 17, item 8). Routes that answer differently for an address with and
 * without an account (a brainstorm share: 201 or 404) look accounts up here: each "no such
 * account" spends a token of the caller's budget, LOOKUP_MISSES_PER_HOUR refilling over the
 * hour (one budget for a workspace's keys and clients, one for each of its people), kept in
 * Postgres so every process spends the same one. Once it is spent, every look-up is refused,
 * the known addresses too: a 429 for unknown addresses alone would answer the question just
 * the same.
 *
 * The token is taken before the look-up and given back when the account exists, so requests
 * racing on one budget can never find more than it allows.
 */
import { DomainError } from '../../platform/errors.ts';
import type { Principal } from '../auth/principal.ts';
import type { Db } from '../../storage/db.ts';
import { returnLookup, takeLookup } from '../../storage/lookup-budgets.store.ts';
import { findUserByEmail, type UserRow } from '../../storage/workspaces.store.ts';

export const LOOKUP_MISSES_PER_HOUR = 20;
const PER_SECOND = LOOKUP_MISSES_PER_HOUR / 3600;

/**
 * One budget per workspace for its keys and clients together, and one per person in each
 * workspace for person tokens: never per credential, or an admin could mint a key for a fresh
 * budget (and a person a token) as often as they liked (issue 30, item 8).
 */
const budgetKey = (principal: Principal) =>
  principal.userId
    ? `workspace:${principal.workspaceId}:person:${principal.userId}`
    : `workspace:${principal.workspaceId}`;

/**
 * The account with this address, or null; RATE_LIMITED when the caller's budget is spent.
 * Call it outside any transaction: the budget must be spent even when the caller then fails.
 */
export async function findAccount(
  sql: Db,
  principal: Principal,
  email: string,
): Promise<UserRow | null> {
  const key = budgetKey(principal);
  const { granted, left } = await takeLookup(sql, key, LOOKUP_MISSES_PER_HOUR, PER_SECOND);
  if (!granted) {
    const retryAfter = Math.max(1, Math.ceil((1 - left) / PER_SECOND));
    throw new DomainError(
      'RATE_LIMITED',
      `Too many addresses without an account (${LOOKUP_MISSES_PER_HOUR} an hour for a workspace's keys, and for each of its people); try again later`,
      {
        limit: LOOKUP_MISSES_PER_HOUR,
        windowSeconds: 3600,
        retryAfter,
      },
      { retryAfterSeconds: retryAfter },
    );
  }
  let missed = false;
  try {
    const user = await findUserByEmail(sql, email);
    missed = user === null;
    return user;
  } finally {
    // Only "no such account" spends (a failed look-up answered nothing either).
    if (!missed) await returnLookup(sql, key, LOOKUP_MISSES_PER_HOUR);
  }
}

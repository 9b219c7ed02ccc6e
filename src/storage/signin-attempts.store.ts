/**
 * Counters of sign-in attempts (signin_attempts), one row per key. An attempt is taken before
 * its password is checked, under the rows' locks, so attempts that arrive together queue on the
 * counters instead of all reading the same count; a successful sign-in gives its attempts back.
 * Every transaction here locks address, then pair, then account (the keys' order), so two of
 * them never wait on each other in a circle.
 */
import type { Sql } from './db.ts';

export interface SigninKeys {
  /** The client address's bucket: every account tried from there. */
  address: string;
  /** One account from one address bucket. */
  pair: string;
  /** One account from anywhere. */
  account: string;
}

export type Reservation =
  { admitted: true; accountAttempts: number } | { admitted: false; retryAfterSeconds: number };

/**
 * Takes one attempt for the pair and the address unless either has reached its limit within the
 * window, and then one for the account. `accountAttempts`: the account's attempts in its window
 * before this one (from every address, those in flight included).
 */
export async function reserveSigninAttempt(
  sql: Sql,
  keys: SigninKeys,
  limits: { pair: number; address: number },
  windowSeconds: number,
): Promise<Reservation> {
  return sql.begin(async (tx): Promise<Reservation> => {
    // Upsert locks both rows (in key order), starting a new window where the last one has passed.
    const rows = await tx<{ key: string; count: number; waitSeconds: number }[]>`
      insert into signin_attempts (key, count, since)
      select key, 0, now() from unnest(${[keys.address, keys.pair]}::text[]) key order by key
      on conflict (key) do update set
        count = case when signin_attempts.since <= now() - make_interval(secs => ${windowSeconds}) then 0 else signin_attempts.count end,
        since = case when signin_attempts.since <= now() - make_interval(secs => ${windowSeconds}) then now() else signin_attempts.since end
      returning key, count, extract(epoch from since + make_interval(secs => ${windowSeconds}) - now())::float8 as wait_seconds`;
    const limitOf = (key: string) => (key === keys.pair ? limits.pair : limits.address);
    const full = rows.filter((row) => row.count >= limitOf(row.key));
    if (full.length > 0)
      return {
        admitted: false,
        retryAfterSeconds: Math.max(...full.map((row) => row.waitSeconds)),
      };
    // The attempt that reaches a limit starts the lock's window.
    await tx`update signin_attempts set count = count + 1,
        since = case when count + 1 >= (case when key = ${keys.pair} then ${limits.pair}::int else ${limits.address}::int end) then now() else since end
      where key in (${keys.address}, ${keys.pair})`;
    const [account] = await tx<{ count: number }[]>`
      insert into signin_attempts (key, count, since) values (${keys.account}, 1, now())
      on conflict (key) do update set
        count = case when signin_attempts.since <= now() - make_interval(secs => ${windowSeconds}) then 1 else signin_attempts.count + 1 end,
        since = case when signin_attempts.since <= now() - make_interval(secs => ${windowSeconds}) then now() else signin_attempts.since end
      returning count`;
    return { admitted: true, accountAttempts: account!.count - 1 };
  });
}

/**
 * Gives attempts back. `signedIn`: the pair's password was right, so its attempts were the
 * person's own: the pair starts afresh and the address and account forget as many. Otherwise
 * the one attempt taken was never checked (refused for load, or failed on the way).
 */
export async function giveBackSigninAttempts(
  sql: Sql,
  keys: SigninKeys,
  signedIn: boolean,
): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`select key from signin_attempts where key in (${keys.address}, ${keys.pair}) order by key for update`;
    let taken = 1;
    if (signedIn) {
      const [pair] = await tx<
        { count: number }[]
      >`delete from signin_attempts where key = ${keys.pair} returning count`;
      taken = Math.max(pair?.count ?? 1, 1);
    } else {
      await tx`update signin_attempts set count = greatest(count - 1, 0) where key = ${keys.pair}`;
    }
    await tx`update signin_attempts set count = greatest(count - ${taken}, 0) where key = ${keys.address}`;
    await tx`update signin_attempts set count = greatest(count - ${taken}, 0) where key = ${keys.account}`;
  });
}

/** Counters whose window passed long ago say nothing; a few are dropped at each failure. */
export async function forgetOldSigninAttempts(sql: Sql, olderThanSeconds: number): Promise<void> {
  await sql`delete from signin_attempts where key in (
    select key from signin_attempts where since < now() - make_interval(secs => ${olderThanSeconds})
    limit 100 for update skip locked)`;
}

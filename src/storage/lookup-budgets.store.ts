/** Budgets of account look-ups that found nothing (lookup_budgets), one token bucket per caller. */
import type { Db } from './db.ts';

/**
 * Takes one token from the key's bucket after refilling it (`perSecond`, up to `burst`); a
 * bucket seen for the first time starts full. The row lock serialises processes. `left` is
 * what the bucket holds after: with no token granted, the wait for one follows from it.
 */
export async function takeLookup(
  sql: Db,
  key: string,
  burst: number,
  perSecond: number,
): Promise<{ granted: boolean; left: number }> {
  const take = () => sql<{ granted: boolean; left: number }[]>`
    update lookup_budgets b set tokens = case when s.available >= 1 then s.available - 1 else s.available end, at = clock_timestamp()
    from (
      select key, least(${burst}::float8, tokens + extract(epoch from clock_timestamp() - at) * ${perSecond}) as available
      from lookup_budgets where key = ${key} for update
    ) s
    where b.key = s.key
    returning s.available >= 1 as granted, b.tokens as left`;
  let [row] = await take();
  if (!row) {
    // Buckets that have been full for a while name nobody worth remembering: whoever starts a new one clears them.
    await sql`delete from lookup_budgets where at < clock_timestamp() - make_interval(secs => ${burst / perSecond})`;
    await sql`insert into lookup_budgets (key, tokens, at) values (${key}, ${burst}, clock_timestamp()) on conflict (key) do nothing`;
    [row] = await take();
  }
  return row!;
}

/** Gives back a token taken for a look-up that found the account (never past the burst). */
export async function returnLookup(sql: Db, key: string, burst: number): Promise<void> {
  await sql`update lookup_budgets set tokens = least(${burst}::float8, tokens + 1) where key = ${key}`;
}

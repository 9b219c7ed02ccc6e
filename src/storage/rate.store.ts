/** Shared token buckets (rate_buckets): leases taken from them and unused tokens given back. */
import type { Db } from './db.ts';

/**
 * Takes up to `want` whole tokens from the key's bucket after refilling it (`perSecond`, up to
 * `burst`); a bucket seen for the first time starts full. The row lock serialises processes.
 * Returns what was granted and what the bucket holds after.
 */
export async function leaseTokens(
  sql: Db,
  key: string,
  want: number,
  burst: number,
  perSecond: number,
): Promise<{ granted: number; left: number }> {
  const lease = () => sql<{ granted: number; left: number }[]>`
    update rate_buckets b set tokens = s.available - least(${want}, floor(s.available)), at = clock_timestamp()
    from (
      select key, least(${burst}::float8, tokens + extract(epoch from clock_timestamp() - at) * ${perSecond}) as available
      from rate_buckets where key = ${key} for update
    ) s
    where b.key = s.key
    returning least(${want}, floor(s.available))::int as granted, b.tokens as left`;
  let [row] = await lease();
  if (!row) {
    await sql`insert into rate_buckets (key, tokens, at) values (${key}, ${burst}, clock_timestamp()) on conflict (key) do nothing`;
    [row] = await lease();
  }
  return row!;
}

/** Gives back tokens a process leased and did not use (never past the burst). */
export async function returnTokens(
  sql: Db,
  key: string,
  tokens: number,
  burst: number,
): Promise<void> {
  await sql`update rate_buckets set tokens = least(${burst}::float8, tokens + ${tokens}) where key = ${key}`;
}

/** Buckets idle this long are full again: forgetting them changes nothing. */
export async function forgetIdleBuckets(sql: Db, idleSeconds: number): Promise<void> {
  await sql`delete from rate_buckets where at < clock_timestamp() - make_interval(secs => ${idleSeconds})`;
}

/** Idempotency-Key records (CONTRACT §1), per principal (the edge's principalKey), kept 24 hours. */
import type { Db } from './db.ts';

export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

export type Claim =
  | { kind: 'claimed' }
  | { kind: 'replay'; response: StoredResponse }
  | { kind: 'in-use' }
  | { kind: 'reused' };

// A claim left by a process that died mid-request is taken over after this long.
const STALE_CLAIM = '2 minutes';

export async function claimKey(
  sql: Db,
  principal: string,
  key: string,
  requestHash: string,
): Promise<Claim> {
  const claimed = await sql`insert into idempotency_keys as k (principal, key, request_hash)
      values (${principal}, ${key}, ${requestHash})
    on conflict (principal, key) do update
      set request_hash = excluded.request_hash, created_at = now(), status = null, headers = null, body = null,
          completed_at = null
      where k.created_at < now() - interval '24 hours'
         or (k.completed_at is null and k.created_at < now() - ${STALE_CLAIM}::interval and k.request_hash = excluded.request_hash)
    returning 1`;
  if (claimed.length > 0) return { kind: 'claimed' };
  const [row] = await sql<
    {
      requestHash: string;
      status: number | null;
      headers: Record<string, string> | null;
      body: Buffer | null;
    }[]
  >`
    select request_hash, status, headers, body from idempotency_keys where principal = ${principal} and key = ${key}`;
  if (!row) return claimKey(sql, principal, key, requestHash);
  if (row.requestHash !== requestHash) return { kind: 'reused' };
  if (row.status === null) return { kind: 'in-use' };
  return {
    kind: 'replay',
    response: { status: row.status, headers: row.headers ?? {}, body: row.body ?? Buffer.alloc(0) },
  };
}

export async function completeKey(
  sql: Db,
  principal: string,
  key: string,
  response: StoredResponse,
): Promise<void> {
  await sql`update idempotency_keys set status = ${response.status}, headers = ${sql.json(response.headers)},
      body = ${response.body}, completed_at = now()
    where principal = ${principal} and key = ${key}`;
}

/** A request that failed on our side may be retried with the same key. */
export async function releaseKey(sql: Db, principal: string, key: string): Promise<void> {
  await sql`delete from idempotency_keys where principal = ${principal} and key = ${key} and completed_at is null`;
}

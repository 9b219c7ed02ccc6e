/**
 * Idempotency-Key answers (CONTRACT §1): the first request with a key runs and its answer is
 * kept 24 hours for the principal that made it; the same key and request again get that
 * answer back, another request under the key is refused. The web layer decides what a
 * principal and an answer are; this keeps the claims.
 */
import type { Sql } from '../../storage/db.ts';
import {
  claimKey,
  completeKey,
  releaseKey,
  type Claim,
  type StoredResponse,
} from '../../storage/idempotency.store.ts';
import { sha256 } from '../auth/secrets.ts';

export type { Claim, StoredResponse };

export class IdempotencyKeys {
  constructor(private readonly sql: Sql) {}

  /** Claims `key` for `owner` and this request (its line and content, hashed), or says why not. */
  claim(owner: string, key: string, request: string, content: string): Promise<Claim> {
    return claimKey(this.sql, owner, key, sha256(`${request}\n${content}`));
  }

  complete(owner: string, key: string, response: StoredResponse): Promise<void> {
    return completeKey(this.sql, owner, key, response);
  }

  /** A request that failed on our side may be retried with the same key. */
  release(owner: string, key: string): Promise<void> {
    return releaseKey(this.sql, owner, key);
  }
}

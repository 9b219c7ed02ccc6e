/**
 * Idempotency-Key on POST (CONTRACT §1): the first request with a key runs; the same key and
 * body again get its stored answer (with this request's own id and rate-limit state, and
 * `Idempotent-Replayed: true`); another body under the key is 422, one still running 409.
 * A stored answer belongs to the principal that made it (principalKey).
 */
import { DomainError, validationFailed } from '../../platform/errors.ts';
import { httpStatus } from './error-status.ts';
import type { Principal } from '../../services/auth/principal.ts';
import type { IdempotencyKeys } from '../../services/idempotency/idempotency.service.ts';
import type { IncomingRequest, OutgoingResponse } from './request.ts';

/**
 * Who an answer belongs to: the credential, and for a person token also the person and the
 * workspace it acts in. Every person signed in through one first-party client shares its
 * credential, so the credential alone would hand one person's stored answer to another.
 */
export function principalKey(principal: Principal): string {
  return principal.userId
    ? `${principal.credentialId}/${principal.userId}/${principal.workspaceId}`
    : principal.credentialId;
}

export async function idempotent(
  keys: IdempotencyKeys,
  /** Whose answer it is (principalKey): another principal's same key is a key of its own. */
  owner: string,
  key: string,
  request: IncomingRequest,
  /** The body as the request hash covers it: its bytes, or an upload's digest. */
  content: string,
  headers: Record<string, string>,
  run: () => Promise<OutgoingResponse>,
  /** A client error's answer (it is kept and replayed like a success). */
  refused: (error: DomainError) => OutgoingResponse,
): Promise<OutgoingResponse> {
  if (key.length === 0 || key.length > 255) {
    throw validationFailed(
      [{ in: 'header', pointer: '/idempotency-key', message: 'must be 1 to 255 characters' }],
      'Idempotency-Key must be 1 to 255 characters',
    );
  }
  const claim = await keys.claim(
    owner,
    key,
    `${request.method} ${request.path}?${request.query}`,
    content,
  );
  if (claim.kind === 'reused')
    throw new DomainError(
      'IDEMPOTENCY_KEY_REUSED',
      'This Idempotency-Key was used with another request body',
    );
  if (claim.kind === 'in-use')
    throw new DomainError(
      'IDEMPOTENCY_KEY_IN_USE',
      'A request with this Idempotency-Key is still running',
    );
  if (claim.kind === 'replay') {
    // The stored answer, with this request's own id and rate-limit state.
    const { status, headers: stored, body } = claim.response;
    return {
      status,
      headers: { ...headers, ...stored, 'Idempotent-Replayed': 'true' },
      body: status === 204 ? null : body,
    };
  }
  let response: OutgoingResponse;
  try {
    response = await run();
  } catch (error) {
    if (error instanceof DomainError && httpStatus(error) < 500) {
      response = refused(error);
    } else {
      await keys.release(owner, key);
      throw error;
    }
  }
  const body = response.body === null ? Buffer.alloc(0) : Buffer.from(response.body);
  const stored = Object.fromEntries(
    Object.entries(response.headers).filter(
      ([name]) => !/^(x-)?ratelimit|^x-request-id$/i.test(name),
    ),
  );
  await keys.complete(owner, key, { status: response.status, headers: stored, body });
  return response;
}

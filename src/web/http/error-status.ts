/**
 * How a domain error answers over HTTP: each code's status, each hint's header, and the
 * spec's envelope. The domain names what went wrong (src/platform/errors.ts); only here
 * does it become a status line.
 */
import type { DomainError, ErrorCode } from '../../platform/errors.ts';

export const HTTP_STATUS = {
  VALIDATION_FAILED: 400,
  CIRCULAR_DEPENDENCY: 400,
  INVALID_EMAIL: 400,
  ALREADY_MEMBER: 400,
  UNSUPPORTED_GRANT_TYPE: 400,
  INVALID_SCOPE: 400,
  invalid_grant: 400,
  invalid_request: 400,
  UNAUTHORIZED: 401,
  CREDENTIAL_REVOKED: 401,
  INVALID_CLIENT: 401,
  FORBIDDEN: 403,
  INSUFFICIENT_SCOPE: 403,
  PLAN_REQUIRED: 403,
  PLAN_LIMIT_REACHED: 403,
  SUBSCRIPTION_PAST_DUE: 403,
  invalid_target: 403,
  NOT_FOUND: 404,
  NOT_ARCHIVED: 404,
  METHOD_NOT_ALLOWED: 405,
  CURSOR_EXPIRED: 410,
  UPGRADE_REQUIRED: 426,
  TASK_BLOCKED: 409,
  INVALID_TRANSITION: 409,
  TASK_STARTED: 409,
  SUBTASKS_OUTSTANDING: 409,
  DELIVERABLE_MISSING: 409,
  DOWNSTREAM_STARTED: 409,
  VERSION_MISMATCH: 409,
  IDEMPOTENCY_KEY_IN_USE: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  IDEMPOTENCY_KEY_REUSED: 422,
  RATE_LIMITED: 429,
  INTERNAL: 500,
  RENDER_FAILED: 502,
  SERVICE_UNAVAILABLE: 503,
} as const satisfies Record<ErrorCode, number>;

export interface ErrorBody {
  error: { code: ErrorCode; message: string; details?: Record<string, unknown> };
}

export function httpStatus(error: DomainError): number {
  return HTTP_STATUS[error.code];
}

/** The response headers an error's hints ask for (none: undefined). */
export function errorHeaders({ hints }: DomainError): Record<string, string> | undefined {
  const { retryAfterSeconds, challenge, allow } = hints;
  if (retryAfterSeconds === undefined && challenge === undefined && allow === undefined)
    return undefined;
  const headers: Record<string, string> = {};
  if (retryAfterSeconds !== undefined) headers['Retry-After'] = String(retryAfterSeconds);
  if (challenge !== undefined) headers['WWW-Authenticate'] = `${challenge} realm="flowplan"`;
  if (allow !== undefined) headers.Allow = allow.join(', ');
  return headers;
}

export function errorBody({ code, message, details }: DomainError): ErrorBody {
  const error: ErrorBody['error'] = { code, message };
  if (details !== undefined) error.details = details;
  return { error };
}

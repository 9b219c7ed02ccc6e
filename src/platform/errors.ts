/**
 * The one error type of the API and the table of every code it may answer with,
 * spelled exactly as the spec and CONTRACT.md spell them (token-endpoint codes keep
 * their lower case). A test checks each code here appears in the OpenAPI document.
 */
export const ERROR_CODES = {
  // 400
  VALIDATION_FAILED: 400,
  CIRCULAR_DEPENDENCY: 400,
  INVALID_EMAIL: 400,
  ALREADY_MEMBER: 400,
  UNSUPPORTED_GRANT_TYPE: 400,
  INVALID_SCOPE: 400,
  invalid_grant: 400,
  invalid_request: 400,
  // 401
  UNAUTHORIZED: 401,
  CREDENTIAL_REVOKED: 401,
  INVALID_CLIENT: 401,
  // 403
  FORBIDDEN: 403,
  INSUFFICIENT_SCOPE: 403,
  PLAN_REQUIRED: 403,
  PLAN_LIMIT_REACHED: 403,
  SUBSCRIPTION_PAST_DUE: 403,
  invalid_target: 403,
  // 404
  NOT_FOUND: 404,
  NOT_ARCHIVED: 404,
  // 405, 409, 413, 415, 422, 429
  METHOD_NOT_ALLOWED: 405,
  TASK_BLOCKED: 409,
  INVALID_TRANSITION: 409,
  TASK_STARTED: 409,
  SUBTASKS_OUTSTANDING: 409,
  DELIVERABLE_MISSING: 409,
  DOWNSTREAM_STARTED: 409,
  IDEMPOTENCY_KEY_IN_USE: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  IDEMPOTENCY_KEY_REUSED: 422,
  RATE_LIMITED: 429,
  // 5xx
  INTERNAL: 500,
  RENDER_FAILED: 502,
  SERVICE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface ErrorBody {
  error: { code: ErrorCode; message: string; details?: Record<string, unknown> };
}

export class ApiError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  readonly details: Record<string, unknown> | undefined;
  /** Extra response headers (Allow, Retry-After, WWW-Authenticate). */
  readonly headers: Record<string, string> | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    details?: Record<string, unknown>,
    headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
    this.status = ERROR_CODES[code];
    this.details = details;
    this.headers = headers;
  }

  toBody(): ErrorBody {
    const error: ErrorBody['error'] = { code: this.code, message: this.message };
    if (this.details !== undefined) error.details = this.details;
    return { error };
  }
}

export const notFound = (what = 'Resource'): ApiError => new ApiError('NOT_FOUND', `${what} not found`);

/** Where a problem with the input was found: the web layer's locations, or the body a service was given. */
export type Location = 'body' | 'query' | 'path' | 'header';

export interface ValidationProblem {
  in: Location;
  pointer: string;
  message: string;
}

/** VALIDATION_FAILED listing each problem with its JSON pointer (schemas and services alike). */
export function validationFailed(errors: ValidationProblem[], message?: string): ApiError {
  const first = errors[0];
  return new ApiError(
    'VALIDATION_FAILED',
    message ?? (first ? `${first.in} ${first.pointer || '/'} ${first.message}` : 'Request is not valid'),
    { errors },
  );
}

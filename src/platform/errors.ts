/**
 * The domain's one error type and the list of every code it may carry, spelled exactly as
 * the spec and CONTRACT.md spell them (token-endpoint codes keep their lower case). An error
 * says what went wrong, never how HTTP answers it: the web layer maps each code to its status
 * and each hint to its header (src/web/http/error-status.ts), and a test checks every code
 * here appears in the OpenAPI document.
 */
export const ERROR_CODES = [
  'VALIDATION_FAILED',
  'CIRCULAR_DEPENDENCY',
  'INVALID_EMAIL',
  'ALREADY_MEMBER',
  'UNSUPPORTED_GRANT_TYPE',
  'INVALID_SCOPE',
  'invalid_grant',
  'invalid_request',
  'UNAUTHORIZED',
  'CREDENTIAL_REVOKED',
  'INVALID_CLIENT',
  'FORBIDDEN',
  'INSUFFICIENT_SCOPE',
  'PLAN_REQUIRED',
  'PLAN_LIMIT_REACHED',
  'SUBSCRIPTION_PAST_DUE',
  'invalid_target',
  'NOT_FOUND',
  'NOT_ARCHIVED',
  'METHOD_NOT_ALLOWED',
  'CURSOR_EXPIRED',
  'UPGRADE_REQUIRED',
  'TASK_BLOCKED',
  'INVALID_TRANSITION',
  'TASK_STARTED',
  'SUBTASKS_OUTSTANDING',
  'DELIVERABLE_MISSING',
  'DOWNSTREAM_STARTED',
  'IDEMPOTENCY_KEY_IN_USE',
  'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  'IDEMPOTENCY_KEY_REUSED',
  'RATE_LIMITED',
  'INTERNAL',
  'RENDER_FAILED',
  'SERVICE_UNAVAILABLE',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** What a caller may do about a refusal, beyond its code: the web layer turns these into headers. */
export interface ErrorHints {
  /** Seconds until trying again may succeed. */
  retryAfterSeconds?: number;
  /** The credential scheme the caller should authenticate with. */
  challenge?: 'Bearer' | 'Basic';
  /** The methods the resource does allow. */
  allow?: readonly string[];
}

export class DomainError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown> | undefined;
  readonly hints: ErrorHints;

  constructor(
    code: ErrorCode,
    message: string,
    details?: Record<string, unknown>,
    hints: ErrorHints = {},
  ) {
    super(message);
    this.name = 'DomainError';
    this.code = code;
    this.details = details;
    this.hints = hints;
  }
}

export const notFound = (what = 'Resource'): DomainError =>
  new DomainError('NOT_FOUND', `${what} not found`);

/** Where a problem with the input was found: the web layer's locations, or the body a service was given. */
export type Location = 'body' | 'query' | 'path' | 'header';

export interface ValidationProblem {
  in: Location;
  pointer: string;
  message: string;
}

/** VALIDATION_FAILED listing each problem with its JSON pointer (schemas and services alike). */
export function validationFailed(errors: ValidationProblem[], message?: string): DomainError {
  const first = errors[0];
  return new DomainError(
    'VALIDATION_FAILED',
    message ??
      (first ? `${first.in} ${first.pointer || '/'} ${first.message}` : 'Request is not valid'),
    { errors },
  );
}

/** One member of a cycle: its name, and its id or (in a request that creates it) its index. */
export interface CycleMember {
  id?: string;
  index?: number;
  name: string;
}

const CYCLE_NAMED = 8;
const CYCLE_NAME_CHARS = 80;

/**
 * CIRCULAR_DEPENDENCY naming the members of the cycle, in order, so a person can see which
 * link to drop: `lead`, then `"A" (tsk_1) → "B" (tsk_2) → "A" (tsk_1)` and what an arrow means.
 * The message names the first few; `details[key]` the first hundred (`details` keeps `extra`).
 */
export function circularDependency(
  lead: string,
  members: readonly CycleMember[],
  arrow: string,
  key: 'tasks' | 'ideas',
  extra: Record<string, unknown> = {},
): DomainError {
  const label = (m: CycleMember) => {
    const name =
      m.name.length > CYCLE_NAME_CHARS ? `${m.name.slice(0, CYCLE_NAME_CHARS - 1)}…` : m.name;
    return `"${name}" (${m.id ?? `#${m.index}`})`;
  };
  const shown =
    members.length > CYCLE_NAMED
      ? [...members.slice(0, CYCLE_NAMED).map(label), `… ${members.length - CYCLE_NAMED} more`]
      : members.map(label);
  const loop = [...shown, label(members[0]!)].join(' → ');
  return new DomainError('CIRCULAR_DEPENDENCY', `${lead}: ${loop} (${arrow})`, {
    ...extra,
    [key]: members.slice(0, 100),
  });
}

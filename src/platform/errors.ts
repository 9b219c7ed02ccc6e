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
  'VERSION_MISMATCH',
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

/*
 * Refusals made in more than one place, each in its one wording (as fastify's createError
 * keeps a message by its code): a caller says what is refused, and never words it again.
 */

/** NOT_FOUND for the thing named (`Member`), and its id where an operator gave one. */
export const notFound = (what: string, id?: string): DomainError =>
  new DomainError('NOT_FOUND', `${what}${id ? ` ${id}` : ''} not found`);

/**
 * A workspace the person does not belong to: NOT_FOUND, as another workspace's things are. The
 * app's consent form answers FORBIDDEN: it lists only the person's own, so one more is a forgery.
 */
export const notMember = (code: 'NOT_FOUND' | 'FORBIDDEN' = 'NOT_FOUND'): DomainError =>
  new DomainError(code, 'You are not a member of that workspace');

/** A signed-in person who belongs to no workspace at all. */
export const noWorkspaceYet = (): DomainError =>
  new DomainError(
    'FORBIDDEN',
    'You do not belong to any workspace yet: ask an admin for an invitation',
  );

/** A sign-in request handle that is unknown, used, or past its life. */
export const signInRequestExpired = (): DomainError =>
  new DomainError(
    'NOT_FOUND',
    'This sign-in request is unknown or has expired; start again from the application',
  );

export const credentialRevoked = (): DomainError =>
  new DomainError('CREDENTIAL_REVOKED', 'This credential has been revoked', undefined, {
    challenge: 'Bearer',
  });

/** INSUFFICIENT_SCOPE: `missing` of the scopes the call `required`. */
export const insufficientScope = (
  required: readonly string[],
  missing: readonly string[],
): DomainError =>
  new DomainError('INSUFFICIENT_SCOPE', `This call needs the scope ${missing.join(' ')}`, {
    required,
    missing,
  });

/** FORBIDDEN for a role below the one `what` needs. */
export const roleRequired = (
  minRole: string,
  role: string | null,
  what = 'This call',
): DomainError =>
  new DomainError('FORBIDDEN', `${what} needs role ${minRole} or above`, { role, minRole });

/** FORBIDDEN to a guest whose share lets them read the flow or brainstorm, not comment on it. */
export const commenterRoleRequired = (
  noun: 'flow' | 'brainstorm',
  shareRole: string,
): DomainError =>
  new DomainError(
    'FORBIDDEN',
    `This ${noun} is shared with you as a viewer: commenting needs the commenter role`,
    { shareRole },
  );

export const notArchived = (noun: 'flow' | 'brainstorm'): DomainError =>
  new DomainError('NOT_ARCHIVED', `The ${noun} is not archived`);

/** DOWNSTREAM_STARTED naming the started work that would wait on the task. */
export const downstreamStarted = (tasks: readonly unknown[]): DomainError =>
  new DomainError('DOWNSTREAM_STARTED', 'Work downstream of this task has already started', {
    tasks,
  });

/** Accepting an invite that is no longer pending. */
export const inviteClosed = (status: 'accepted' | 'revoked' | 'expired'): DomainError =>
  new DomainError(
    'FORBIDDEN',
    `This invite was ${status === 'expired' ? 'not used in time and has expired' : status}`,
    { status },
  );

/** More of `what` at once than this process takes: the client retries after a moment. */
export const busy = (what: string, retryAfterSeconds: number): DomainError =>
  new DomainError(
    'SERVICE_UNAVAILABLE',
    `Too many ${what} at this moment; retry shortly`,
    undefined,
    { retryAfterSeconds },
  );

/** A request that reached a server whose close has finished answering what it had. */
export const shuttingDown = (): DomainError =>
  new DomainError('SERVICE_UNAVAILABLE', 'The server is shutting down', undefined, {
    retryAfterSeconds: 1,
  });

export const databaseUnreachable = (): DomainError =>
  new DomainError('SERVICE_UNAVAILABLE', 'The database is out of reach; retry shortly', undefined, {
    retryAfterSeconds: 2,
  });

/** A body of another media type; the OAuth endpoints say so as invalid_request (RFC 6749 §5.2). */
export const wrongMediaType = (
  type: string,
  code: 'UNSUPPORTED_MEDIA_TYPE' | 'invalid_request' = 'UNSUPPORTED_MEDIA_TYPE',
  details?: Record<string, unknown>,
): DomainError => new DomainError(code, `Send the body as ${type}`, details);

/** An OAuth parameter missing, or sent more than once (RFC 6749 §3.1, §3.2). */
export const parameterRequired = (name: string): DomainError =>
  new DomainError('invalid_request', `${name} is required`, { parameter: name });
export const parameterRepeated = (name: string): DomainError =>
  new DomainError('invalid_request', `Parameter ${name} is repeated`, { parameter: name });

/** Where a problem with the input was found: the web layer's locations, or the body a service was given. */
export type Location = 'body' | 'query' | 'path' | 'header';

export interface ValidationProblem {
  in: Location;
  pointer: string;
  message: string;
}

/** VALIDATION_FAILED listing each problem with its JSON pointer (schemas and services alike). */
export function validationFailed(
  errors: ValidationProblem[],
  message?: string,
  /** More details beside `errors` (a command list's `index`). */
  more: Record<string, unknown> = {},
): DomainError {
  const first = errors[0];
  return new DomainError(
    'VALIDATION_FAILED',
    message ??
      (first ? `${first.in} ${first.pointer || '/'} ${first.message}` : 'Request is not valid'),
    { errors, ...more },
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

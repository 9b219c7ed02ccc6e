/**
 * Errors as the client sees them: a domain error in the spec's envelope (or the page of a
 * route that renders its own), the database out of reach as 503, the SQLSTATEs a client's
 * values can cause as 400, anything else as 500 with its cause logged, never sent.
 */
import type { Logger } from 'pino';
import { isDatabaseUnavailable } from '../../platform/database.ts';
import { databaseUnreachable, DomainError, validationFailed } from '../../platform/errors.ts';
import { errorBody, errorHeaders, httpStatus } from './error-status.ts';
import { requestIdOf, type OutgoingResponse, type RequestHead } from './request.ts';
import type { Reply, Route } from './route.ts';

const JSON_TYPE = 'application/json; charset=utf-8';

export function failureResponse(
  log: Logger,
  error: unknown,
  headers: Record<string, string>,
  request: RequestHead,
  requestId: string,
  /** The matched route, or what renders refusals where no route matched (the app's pages). */
  route: Pick<Route, 'renderError'> | null,
): OutgoingResponse {
  const domainError = toDomainError(error);
  if (isDatabaseUnavailable(error)) {
    log.warn(
      {
        code: (error as { code: string }).code,
        requestId,
        method: request.method,
        path: request.path,
      },
      'database out of reach',
    );
  } else if (httpStatus(domainError) >= 500) {
    log.error(
      { err: error, requestId, method: request.method, path: request.path },
      'unhandled error',
    );
  }
  Object.assign(headers, errorHeaders(domainError));
  const reply = route?.renderError
    ? rendered(log, route.renderError, domainError, requestId)
    : null;
  if (reply) {
    Object.assign(headers, reply.headers);
    headers['Content-Type'] = reply.contentType ?? 'text/html; charset=utf-8';
    const body =
      reply.body === undefined
        ? null
        : Buffer.isBuffer(reply.body)
          ? reply.body
          : String(reply.body);
    return { status: reply.status, headers, body, cookies: reply.cookies };
  }
  headers['Content-Type'] = JSON_TYPE;
  return { status: httpStatus(domainError), headers, body: JSON.stringify(errorBody(domainError)) };
}

/** The refusal as its route renders it; null (the envelope, then) when the renderer throws, logged. */
function rendered(
  log: Logger,
  render: NonNullable<Route['renderError']>,
  error: DomainError,
  requestId: string,
): Reply | null {
  try {
    return render(error);
  } catch (renderFailure) {
    log.error(
      { err: renderFailure, requestId },
      'error page not rendered: answered in the envelope',
    );
    return null;
  }
}

/**
 * A refusal the transport answers itself, before the edge has the request (a body too large,
 * no room to hold one, the server shutting down). `close` false: the connection is left open
 * for the body to drain, but the client is told to close it.
 */
export function transportRefusal(
  headers: Record<string, string>,
  error: DomainError,
  close = true,
): OutgoingResponse {
  return {
    status: httpStatus(error),
    headers: {
      'X-Request-Id': requestIdOf(headers),
      'Content-Type': JSON_TYPE,
      ...errorHeaders(error),
      ...(close ? {} : { Connection: 'close' }),
    },
    body: JSON.stringify(errorBody(error)),
  };
}

/** The answer when the edge itself failed, with nothing known to say. */
export function serverError(): OutgoingResponse {
  return { status: 500, headers: {}, body: null };
}

// SQLSTATE classes a client can cause with values that passed the schema.
const CLIENT_SQLSTATES: Record<string, string> = {
  '22001': 'A value is too long',
  '22003': 'A number is out of range',
  '22007': 'A date is not valid',
  '22008': 'A date is out of range',
  '22P02': 'A value has the wrong form',
  '22P05': 'Text may not contain NUL characters',
  '22021': 'Text is not valid UTF-8',
};

/** What a failure is to the client: a domain error as is; anything else as the code it answers. */
export function toDomainError(error: unknown): DomainError {
  if (error instanceof DomainError) return error;
  if (isDatabaseUnavailable(error)) {
    return databaseUnreachable();
  }
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && code in CLIENT_SQLSTATES) {
    return validationFailed([{ in: 'body', pointer: '', message: CLIENT_SQLSTATES[code]! }]);
  }
  return new DomainError('INTERNAL', 'Internal error');
}

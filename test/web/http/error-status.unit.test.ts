/**
 * The web layer's mapping of domain errors: every code has its status, and each hint
 * becomes the header clients have always been sent.
 */
import t from 'tap';
import { DomainError, ERROR_CODES } from '../../../src/platform/errors.ts';
import { errorBody, errorHeaders, httpStatus } from '../../../src/web/http/error-status.ts';

t.test('every code answers with a status of its class', async (t) => {
  for (const code of ERROR_CODES) {
    const status = httpStatus(new DomainError(code, 'x'));
    t.ok(status >= 400 && status < 600, `${code}: ${status}`);
  }
  t.equal(httpStatus(new DomainError('TASK_BLOCKED', 'x')), 409);
  t.equal(httpStatus(new DomainError('SERVICE_UNAVAILABLE', 'x')), 503);
});

t.test('hints become headers; none, no headers', async (t) => {
  t.equal(errorHeaders(new DomainError('NOT_FOUND', 'x')), undefined);
  t.strictSame(
    errorHeaders(new DomainError('RATE_LIMITED', 'x', undefined, { retryAfterSeconds: 120 })),
    { 'Retry-After': '120' },
  );
  t.strictSame(
    errorHeaders(new DomainError('UNAUTHORIZED', 'x', undefined, { challenge: 'Bearer' })),
    { 'WWW-Authenticate': 'Bearer realm="flowplan"' },
  );
  t.strictSame(
    errorHeaders(new DomainError('INVALID_CLIENT', 'x', undefined, { challenge: 'Basic' })),
    { 'WWW-Authenticate': 'Basic realm="flowplan"' },
  );
  t.strictSame(
    errorHeaders(new DomainError('METHOD_NOT_ALLOWED', 'x', undefined, { allow: ['GET', 'POST'] })),
    { Allow: 'GET, POST' },
  );
});

t.test('the envelope carries details only when there are some', async (t) => {
  t.strictSame(errorBody(new DomainError('NOT_FOUND', 'Flow not found')), {
    error: { code: 'NOT_FOUND', message: 'Flow not found' },
  });
  t.strictSame(errorBody(new DomainError('PAYLOAD_TOO_LARGE', 'big', { quotaBytes: 1 })), {
    error: { code: 'PAYLOAD_TOO_LARGE', message: 'big', details: { quotaBytes: 1 } },
  });
});

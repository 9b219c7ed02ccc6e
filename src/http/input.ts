/** Query strings and request bodies: parsed by what the route declares, refused clearly. */
import { ApiError } from '../errors.ts';
import { validationFailed } from '../schemas/validator.ts';
import type { IncomingRequest } from './edge.ts';
import type { Route } from './route.ts';

/** Repeated parameters become arrays; the schema decides whether that is allowed. */
export function parseQuery(query: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!query) return out;
  for (const [name, value] of new URLSearchParams(query)) {
    const existing = out[name];
    if (existing === undefined) out[name] = value;
    else if (Array.isArray(existing)) existing.push(value);
    else out[name] = [existing, value];
  }
  return out;
}

function mediaType(header: string | undefined): string {
  return (header ?? '').split(';')[0]!.trim().toLowerCase();
}

export function readBody(route: Route, request: IncomingRequest, validate: ((value: unknown) => unknown) | null): unknown {
  const kind = route.bodyKind ?? (route.body ? 'json' : 'none');
  if (kind === 'none' || kind === 'bytes') return undefined;
  if (kind === 'form') return readForm(request);
  const empty = request.body.length === 0;
  if (empty && route.bodyOptional) return validate ? validate({}) : {};
  const type = mediaType(request.headers['content-type']);
  if (!empty && type !== 'application/json' && !type.endsWith('+json')) {
    throw new ApiError('UNSUPPORTED_MEDIA_TYPE', 'Send the body as application/json', { contentType: type || null });
  }
  if (empty) throw validationFailed([{ in: 'body', pointer: '', message: 'a JSON body is required' }]);
  let value: unknown;
  try {
    value = JSON.parse(request.body.toString('utf8'));
  } catch (error) {
    throw validationFailed([{ in: 'body', pointer: '', message: `is not valid JSON: ${(error as Error).message}` }], 'Body is not valid JSON');
  }
  return validate ? validate(value) : value;
}

/** OAuth endpoints: form bodies only (anything else is `invalid_request`), no repeated fields (RFC 6749 §3.2). */
function readForm(request: IncomingRequest): Record<string, string> {
  if (mediaType(request.headers['content-type']) !== 'application/x-www-form-urlencoded') {
    throw new ApiError('invalid_request', 'Send the body as application/x-www-form-urlencoded');
  }
  const form: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(request.body.toString('utf8'))) {
    if (name in form) throw new ApiError('invalid_request', `Parameter ${name} is repeated`);
    form[name] = value;
  }
  return form;
}

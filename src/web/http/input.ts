/** Query strings and request bodies: parsed by what the route declares, refused clearly. */
import secureJson from 'secure-json-parse';
import { parameterRepeated, validationFailed, wrongMediaType } from '../../platform/errors.ts';
import type { IncomingRequest } from './request.ts';
import { bodyKindOf, type Route } from './route.ts';

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

/** A Content-Type's media type, without its parameters, in lower case. */
export function mediaType(header: string | undefined): string {
  return (header ?? '').split(';')[0]!.trim().toLowerCase();
}

export function readBody(
  route: Route,
  request: IncomingRequest,
  validate: ((value: unknown) => unknown) | null,
): unknown {
  const kind = bodyKindOf(route);
  if (kind === 'none' || kind === 'bytes' || kind === 'upload') return undefined;
  if (kind === 'form') return readForm(request, Object.keys(route.body?.properties ?? {}));
  const empty = request.body.length === 0;
  if (empty && route.bodyOptional) return validate ? validate({}) : {};
  const type = mediaType(request.headers['content-type']);
  if (!empty && type !== 'application/json' && !type.endsWith('+json')) {
    throw wrongMediaType('application/json', 'UNSUPPORTED_MEDIA_TYPE', {
      contentType: type || null,
    });
  }
  if (empty)
    throw validationFailed([{ in: 'body', pointer: '', message: 'a JSON body is required' }]);
  if (nestedDeeperThan(request.body, MAX_JSON_DEPTH)) {
    throw validationFailed(
      [{ in: 'body', pointer: '', message: `nests deeper than ${MAX_JSON_DEPTH} levels` }],
      'Body nests too deeply',
    );
  }
  let value: unknown;
  try {
    // Refuses `__proto__` keys and `constructor.prototype` (prototype poisoning): one object
    // merged into another with such a key would change what every object inherits.
    value = secureJson.parse(request.body.toString('utf8'), null, {
      protoAction: 'error',
      constructorAction: 'error',
    });
  } catch (error) {
    const message = (error as Error).message;
    if (FORBIDDEN_KEY.test(message)) {
      throw validationFailed(
        [
          {
            in: 'body',
            pointer: '',
            message:
              'may not contain a "__proto__" key, nor a "constructor" object with a "prototype" key',
          },
        ],
        'Body contains a forbidden key',
      );
    }
    throw validationFailed(
      [{ in: 'body', pointer: '', message: `is not valid JSON: ${message}` }],
      'Body is not valid JSON',
    );
  }
  return validate ? validate(value) : value;
}

/** How secure-json-parse says it found a forbidden key (a SyntaxError, like JSON's own). */
const FORBIDDEN_KEY = /^Object contains forbidden (prototype|constructor) property/;

/** No body of this API nests anywhere near this deep (an idea tree is rows with parentIds). */
export const MAX_JSON_DEPTH = 64;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;

/**
 * One pass over the bytes, before JSON.parse sees them: parsing millions of nested brackets
 * (and the schema walking the result) held the event loop for seconds, every tenant waiting.
 * Brackets inside strings do not count; malformed input is left to JSON.parse. Ours: neither
 * JSON.parse nor secure-json-parse bounds depth, and this has to run before them.
 */
function nestedDeeperThan(bytes: Buffer, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i]!;
    if (inString) {
      if (byte === BACKSLASH) i++;
      else if (byte === QUOTE) inString = false;
    } else if (byte === QUOTE) {
      inString = true;
    } else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
      if (++depth > limit) return true;
    } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}

/**
 * OAuth endpoints: form bodies only (anything else is `invalid_request`). A parameter the route
 * declares is sent once (RFC 6749 §3.2); any other is ignored, repeated or not (§3.1).
 */
function readForm(request: IncomingRequest, recognised: readonly string[]): Record<string, string> {
  if (mediaType(request.headers['content-type']) !== 'application/x-www-form-urlencoded') {
    throw wrongMediaType('application/x-www-form-urlencoded', 'invalid_request');
  }
  const form: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(request.body.toString('utf8'))) {
    if (!recognised.includes(name)) continue;
    if (name in form) throw parameterRepeated(name);
    form[name] = value;
  }
  return form;
}

/**
 * Whether an answer can go on the wire as it is: what node:http would throw on (a status out
 * of its range, a header value beyond Latin-1), what uWS would write unchecked (CR/LF: a
 * header of the client's making, a split response), and a body that is no bytes. The edge
 * checks every answer with it before a transport writes a byte, the same on both transports.
 */
import type { OutgoingResponse } from './request.ts';

/** A header name: an RFC 9110 token. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/**
 * What a header value may hold: visible ASCII, space and tab. Stricter than node:http (which
 * lets Latin-1 through as single bytes, where uWS would write UTF-8): any text beyond ASCII a
 * header needs is percent-encoded first (a redirect, a file name).
 */
const UNSAFE_VALUE = /[^\t\x20-\x7e]/;

const unsafeValue = (value: unknown) => typeof value !== 'string' || UNSAFE_VALUE.test(value);

/** What makes the answer unwritable, in words for the log (never the value: it may be anyone's); null when it can be written. */
export function unwritable(response: OutgoingResponse): string | null {
  const { status, headers, body, cookies } = response;
  if (!Number.isInteger(status) || status < 200 || status > 599)
    return `status ${String(status)} is not a final HTTP status`;
  for (const name in headers) {
    if (!TOKEN.test(name)) return `a header name is not a token (${JSON.stringify(name)})`;
    if (unsafeValue(headers[name]))
      return `header ${name} holds something other than visible ASCII, space and tab`;
  }
  if (cookies?.some(unsafeValue))
    return 'a Set-Cookie value holds something other than visible ASCII, space and tab';
  // (A serializer that gives nothing: JSON.stringify of a function is undefined.)
  if (body !== null && typeof body !== 'string' && !Buffer.isBuffer(body))
    return 'the body is neither text nor bytes';
  return null;
}

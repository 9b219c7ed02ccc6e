/** A request as uWebSockets.js hands it over: read whole during its callback, the only time HttpRequest is valid. */
import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import { clientAddress, type TrustProxy } from '../../../platform/client-address.ts';
import { EMPTY_BODY, type IncomingRequest } from '../request.ts';

/** The request line and headers (lower-case names, repeats joined), with no body yet. */
export function readRequest(
  res: HttpResponse,
  req: HttpRequest,
  method: string,
  trustProxy: TrustProxy,
): IncomingRequest {
  const headers: Record<string, string> = {};
  // uWS itself refuses oversized and over-numerous headers before this runs.
  req.forEach((name, value) => {
    headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
  });
  return {
    method,
    path: req.getUrl(),
    query: req.getQuery() ?? '',
    headers,
    remoteAddress: clientAddress(
      Buffer.from(res.getRemoteAddressAsText()).toString(),
      headers['x-forwarded-for'],
      trustProxy,
    ),
    body: EMPTY_BODY,
  };
}

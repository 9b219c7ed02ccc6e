/** A request as node:http hands it over, in the edge's shape (../request.ts). */
import type { IncomingMessage } from 'node:http';
import { clientAddress, type TrustProxy } from '../../../platform/client-address.ts';
import { EMPTY_BODY, type IncomingRequest } from '../request.ts';

/**
 * The request line and headers, as uws/head.ts reads them: lower-case names and every repeat
 * joined with ", " (node:http's own `headers` drops repeats of some names; `headersDistinct`
 * keeps them all).
 */
export function readRequest(req: IncomingMessage, trustProxy: TrustProxy): IncomingRequest {
  const headers: Record<string, string> = {};
  for (const [name, values] of Object.entries(req.headersDistinct))
    if (values) headers[name] = values.join(', ');
  const url = req.url ?? '/';
  const mark = url.indexOf('?');
  return {
    method: req.method ?? 'GET',
    path: mark === -1 ? url : url.slice(0, mark),
    query: mark === -1 ? '' : url.slice(mark + 1),
    headers,
    remoteAddress: clientAddress(
      req.socket.remoteAddress ?? '',
      headers['x-forwarded-for'],
      trustProxy,
    ),
    body: EMPTY_BODY,
  };
}

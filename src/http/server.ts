/**
 * The only module that touches uWebSockets.js. Its rules, kept here once: HttpRequest is
 * valid only during the synchronous callback (read everything first); register onAborted
 * before any await; copy onData chunks and cap the body; write inside res.cork after an
 * await; never write to an aborted response.
 */
import { STATUS_CODES } from 'node:http';
import { createRequire } from 'node:module';
import type { HttpResponse, TemplatedApp, us_listen_socket } from 'uWebSockets.js';
import { ApiError } from '../errors.ts';
import type { Edge, IncomingRequest, OutgoingResponse } from './edge.ts';

const uws = createRequire(import.meta.url)('uWebSockets.js') as typeof import('uWebSockets.js');

/** The package silently falls back to a slow `ws` imitation when its binary does not load. */
export const UWS_NATIVE = typeof (uws as { SSLApp?: unknown }).SSLApp === 'function';
export const UWS_IMPLEMENTATION = UWS_NATIVE ? 'uWebSockets.js native' : 'uWebSockets.js fallback (node:http/ws imitation)';

const MAX_HEADERS = 100;

export interface HttpServer {
  readonly port: number;
  /** Stops accepting, then resolves when every in-flight request has been answered. */
  close(timeoutMs?: number): Promise<void>;
}

export async function listen(edge: Edge, host: string, port: number): Promise<HttpServer> {
  const app: TemplatedApp = uws.App();
  let inFlight = 0;
  let drained: (() => void) | null = null;
  const finish = () => {
    inFlight -= 1;
    if (inFlight === 0 && drained) drained();
  };

  app.any('/*', (res, req) => {
    const state = { aborted: false };
    res.onAborted(() => {
      state.aborted = true;
    });
    const method = req.getCaseSensitiveMethod().toUpperCase();
    const path = req.getUrl();
    const query = req.getQuery() ?? '';
    const headers: Record<string, string> = {};
    let headerCount = 0;
    req.forEach((name, value) => {
      headerCount += 1;
      headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
    });
    inFlight += 1;
    if (headerCount > MAX_HEADERS) {
      const error = new ApiError('VALIDATION_FAILED', `Too many headers (more than ${MAX_HEADERS})`, { errors: [{ in: 'header', pointer: '', message: 'too many headers' }] });
      send(res, state, { status: 431, headers: { 'Content-Type': 'application/json; charset=utf-8' }, body: JSON.stringify(error.toBody()) }, true);
      finish();
      return;
    }
    const limit = edge.bodyLimit(method, path);
    const declared = Number(headers['content-length'] ?? 0);
    if (declared > limit) {
      send(res, state, tooLarge(limit), true);
      finish();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    res.onData((chunk, isLast) => {
      if (refused) return;
      size += chunk.byteLength;
      if (size > limit) {
        refused = true;
        send(res, state, tooLarge(limit), true);
        finish();
        return;
      }
      // uWS reuses the chunk's memory after this callback: copy it.
      if (chunk.byteLength > 0) chunks.push(Buffer.from(new Uint8Array(chunk)));
      if (!isLast) return;
      const request: IncomingRequest = { method, path, query, headers, body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks) };
      edge.handle(request).then(
        (response) => send(res, state, response, false),
        () => send(res, state, { status: 500, headers: {}, body: null }, true),
      ).finally(finish);
    });
  });

  const token = await new Promise<us_listen_socket>((resolve, reject) =>
    app.listen(host, port, (socket) => (socket ? resolve(socket) : reject(new Error(`cannot listen on ${host}:${port}`)))),
  );
  return {
    port: uws.us_socket_local_port(token),
    close: (timeoutMs = 10_000) => {
      uws.us_listen_socket_close(token);
      if (inFlight === 0) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, timeoutMs);
        drained = () => (clearTimeout(timer), resolve());
      });
    },
  };
}

function tooLarge(limit: number): OutgoingResponse {
  const error = new ApiError('PAYLOAD_TOO_LARGE', `Body exceeds ${limit} bytes`, { limit });
  return { status: 413, headers: { 'Content-Type': 'application/json; charset=utf-8' }, body: JSON.stringify(error.toBody()) };
}

function send(res: HttpResponse, state: { aborted: boolean }, response: OutgoingResponse, close: boolean): void {
  if (state.aborted) return;
  state.aborted = true; // a response is written once
  res.cork(() => {
    res.writeStatus(`${response.status} ${STATUS_CODES[response.status] ?? ''}`);
    for (const name in response.headers) res.writeHeader(name, response.headers[name]!);
    if (response.status === 204 || response.status === 304) res.endWithoutBody(undefined, close);
    else res.end(response.body ?? '', close);
  });
}

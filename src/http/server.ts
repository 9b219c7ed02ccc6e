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
import { clientAddress, type TrustProxy } from './client-address.ts';
import { requestIdOf, type Edge, type OutgoingResponse } from './edge.ts';
import type { Foreground } from './foreground.ts';

const uws = createRequire(import.meta.url)('uWebSockets.js') as typeof import('uWebSockets.js');

/** The package silently falls back to a slow `ws` imitation when its binary does not load. */
export const UWS_NATIVE = typeof (uws as { SSLApp?: unknown }).SSLApp === 'function';
export const UWS_IMPLEMENTATION = UWS_NATIVE ? 'uWebSockets.js native' : 'uWebSockets.js fallback (node:http/ws imitation)';

export interface HttpServer {
  readonly port: number;
  /** Stops accepting, then resolves when every in-flight request has been answered. */
  close(timeoutMs?: number): Promise<void>;
}

export interface ListenOptions {
  /** Requests in flight, for the webhook governor. */
  foreground?: Foreground;
  /** Which proxies may name the client in X-Forwarded-For. */
  trustProxy?: TrustProxy;
}

export async function listen(edge: Edge, host: string, port: number, options: ListenOptions = {}): Promise<HttpServer> {
  const { foreground, trustProxy = null } = options;
  const app: TemplatedApp = uws.App();
  let inFlight = 0;
  let drained: (() => void) | null = null;
  // Once closing, every answer closes its connection, so keep-alive clients reconnect
  // elsewhere instead of sending into a process about to exit.
  let closing = false;
  const finish = () => {
    inFlight -= 1;
    foreground?.leave();
    if (inFlight === 0 && drained) drained();
  };
  const JSON_TYPE = { 'Content-Type': 'application/json; charset=utf-8' };
  const refuse = (res: HttpResponse, state: { aborted: boolean }, headers: Record<string, string>, status: number, error: ApiError, close = true) =>
    send(res, state, {
      status,
      // Left open for a drain, the connection still ends: the client is told to close it.
      headers: { 'X-Request-Id': requestIdOf(headers), ...JSON_TYPE, ...error.headers, ...(close ? {} : { Connection: 'close' }) },
      body: JSON.stringify(error.toBody()),
    }, close);
  const tooLarge = (limit: number) => new ApiError('PAYLOAD_TOO_LARGE', `Body exceeds ${limit} bytes`, { limit });

  app.any('/*', (res, req) => {
    const state = { aborted: false };
    // Counted in flight while its body is still arriving: a client that goes away meanwhile ends it.
    let awaitingBody = false;
    res.onAborted(() => {
      state.aborted = true;
      if (awaitingBody) {
        awaitingBody = false;
        finish();
      }
    });
    const method = req.getCaseSensitiveMethod().toUpperCase();
    const path = req.getUrl();
    const query = req.getQuery() ?? '';
    const headers: Record<string, string> = {};
    // uWS itself refuses oversized and over-numerous headers before this runs.
    req.forEach((name, value) => {
      headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
    });
    const remoteAddress = clientAddress(Buffer.from(res.getRemoteAddressAsText()).toString(), headers['x-forwarded-for'], trustProxy);
    if (drained && inFlight === 0) {
      refuse(res, state, headers, 503, new ApiError('SERVICE_UNAVAILABLE', 'The server is shutting down', undefined, { 'Retry-After': '1' }));
      return;
    }
    const match = edge.match(method, path);
    const limit = edge.bodyLimit(match);
    const declared = Number(headers['content-length'] ?? 0);
    if (declared > limit) {
      // Answered at once. Closing now would reset a client still sending (EPIPE before it reads
      // the answer), so a body up to DRAIN_LIMIT is read and dropped first (uWS goes on reading
      // an answered request's body; the handler must take it).
      const drain = declared <= DRAIN_LIMIT;
      if (drain) res.onData(() => {});
      refuse(res, state, headers, 413, tooLarge(limit), !drain);
      return;
    }
    inFlight += 1;
    foreground?.enter();
    const dispatch = (body: Buffer) => {
      edge.handle({ method, path, query, headers, body, remoteAddress }, match).then(
        (response) => send(res, state, response, closing),
        () => send(res, state, { status: 500, headers: {}, body: null }, true),
      ).finally(finish);
    };
    // Most requests carry no body: answer without waiting for onData.
    if (!(declared > 0) && headers['transfer-encoding'] === undefined) {
      dispatch(EMPTY);
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    awaitingBody = true;
    res.onData((chunk, isLast) => {
      if (!awaitingBody) return;
      size += chunk.byteLength;
      if (size > limit) {
        // A body of unknown length (chunked) is read to its end and dropped, then answered:
        // answering earlier would leave no way to close the connection after a bounded drain.
        chunks.length = 0;
        if (isLast || size > limit + DRAIN_LIMIT) {
          awaitingBody = false;
          refuse(res, state, headers, 413, tooLarge(limit), !isLast);
          finish();
        }
        return;
      }
      // uWS reuses the chunk's memory after this callback: copy it.
      if (chunk.byteLength > 0) chunks.push(Buffer.from(new Uint8Array(chunk)));
      if (isLast) {
        awaitingBody = false;
        dispatch(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks));
      }
    });
  });

  const token = await new Promise<us_listen_socket>((resolve, reject) =>
    app.listen(host, port, (socket) => (socket ? resolve(socket) : reject(new Error(`cannot listen on ${host}:${port}`)))),
  );
  return {
    port: uws.us_socket_local_port(token),
    close: (timeoutMs = 10_000) => {
      closing = true;
      uws.us_listen_socket_close(token);
      return new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, timeoutMs);
        drained = () => (clearTimeout(timer), resolve());
        if (inFlight === 0) drained();
      });
    },
  };
}

const EMPTY = Buffer.alloc(0);
/** A refused body is read and dropped up to this size, so clients that send it all before reading see the 413. */
const DRAIN_LIMIT = 64 * 1024 * 1024;

function send(res: HttpResponse, state: { aborted: boolean }, response: OutgoingResponse, close: boolean): void {
  if (state.aborted) return;
  state.aborted = true; // a response is written once
  res.cork(() => {
    res.writeStatus(`${response.status} ${STATUS_CODES[response.status] ?? ''}`);
    for (const name in response.headers) res.writeHeader(name, response.headers[name]!);
    for (const cookie of response.cookies ?? []) res.writeHeader('Set-Cookie', cookie);
    // No body for 204/304; without an explicit length uWS announces a bogus one and clients wait.
    if (response.status === 204 || response.status === 304) res.endWithoutBody(0, close);
    else res.end(response.body ?? '', close);
  });
}

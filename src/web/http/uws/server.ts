/**
 * The only module that touches uWebSockets.js. Its rules, kept here once: HttpRequest is
 * valid only during the synchronous callback (read everything first); register onAborted
 * before any await; copy onData chunks and cap the body; write inside res.cork after an
 * await; never write to an aborted response.
 */
import { createRequire } from 'node:module';
import type { HttpResponse, TemplatedApp, us_listen_socket } from 'uWebSockets.js';
import { DomainError } from '../../../platform/errors.ts';
import { clientAddress, type TrustProxy } from '../../../platform/client-address.ts';
import type { Foreground } from '../../../platform/foreground.ts';
import { BodyAllowance } from '../body-allowance.ts';
import { BodyReader, DRAIN_LIMIT, tooLarge } from '../body-reader.ts';
import type { Edge } from '../edge.ts';
import { serverError, transportRefusal } from '../failures.ts';
import { InFlight } from '../in-flight.ts';
import { EMPTY_BODY, type OutgoingResponse, type SocketUpgrade } from '../request.ts';
import { send as sendAnswer, type RequestState } from './response.ts';
import { socketEndpoint, type OpenSocket } from './websocket.ts';

const uws = createRequire(import.meta.url)('uWebSockets.js') as typeof import('uWebSockets.js');

/** The package silently falls back to a slow `ws` imitation when its binary does not load. */
export const UWS_NATIVE = typeof (uws as { SSLApp?: unknown }).SSLApp === 'function';
export const UWS_IMPLEMENTATION = UWS_NATIVE
  ? 'uWebSockets.js native'
  : 'uWebSockets.js fallback (node:http/ws imitation)';

/**
 * The fallback cannot serve this edge: it throws "Not implemented" from methods every request
 * here uses (getCaseSensitiveMethod, getRemoteAddressAsText, pause, resume, onWritable), and
 * the throw ends the process. So a server refuses to start on it rather than die at its first
 * request (test/ops/runtime.test.ts).
 */
/** The API port cannot be had: another process listens there, or HOST is not this machine's. */
export class ListenRefused extends Error {
  constructor(host: string, port: number) {
    super(
      `cannot listen on ${host}:${port}: another process listens there, or HOST is not an address of this machine; set PORT to a free port (0: any free one)`,
    );
  }
}

export class NativeUwsUnavailable extends Error {
  constructor() {
    super(
      `the native uWebSockets.js binary did not load (Node ${process.versions.node}, ABI ${process.versions.modules}, ${process.platform}-${process.arch}; ` +
        "the package ships glibc builds up to Node 20's ABI 115), and its fallback cannot serve flowplan: not starting (README: Runtime)",
    );
  }
}

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
  /**
   * Request body bytes this process holds at once, across requests, with a share per address
   * and a slice for requests without a credential; past either, 503 (MAX_BUFFERED_BODY_BYTES).
   */
  maxBufferedBytes?: number;
  /** WebSocket endpoints by path, each deciding its upgrades. */
  sockets?: Record<string, SocketUpgrade>;
}

export async function listen(
  edge: Edge,
  host: string,
  port: number,
  options: ListenOptions = {},
): Promise<HttpServer> {
  const { foreground, trustProxy = null, maxBufferedBytes = Infinity, sockets = {} } = options;
  /** Body bytes held by requests still reading theirs (taken as they arrive). */
  const allowance = new BodyAllowance(maxBufferedBytes);
  // `close()` (every socket, listen sockets included) is in the native App, not in its typings.
  const app = uws.App() as TemplatedApp & { close(): void };
  const flight = new InFlight(foreground);
  /** Open streamed responses and WebSockets: ended when the server closes. */
  const open = new Set<() => void>();
  const send = (
    res: HttpResponse,
    state: RequestState,
    response: OutgoingResponse,
    close: boolean,
  ) => sendAnswer(res, state, response, close, open);

  /** Answers and ends the request's time in flight (the bodyless path: no `finally` promise). */
  const answer = (
    res: HttpResponse,
    state: RequestState,
    response: OutgoingResponse,
    close: boolean,
  ) => {
    try {
      send(res, state, response, close);
    } finally {
      flight.leave();
    }
  };

  app.any('/*', (res, req) => {
    // Small on purpose: every request allocates it and the abort closure; a body's phase
    // lives in its BodyReader, which only requests with a body pay for.
    const state: RequestState = { aborted: false, onAbort: null, head: false };
    res.onAborted(() => {
      state.aborted = true;
      state.onAbort?.();
    });
    const method = req.getCaseSensitiveMethod().toUpperCase();
    state.head = method === 'HEAD';
    const path = req.getUrl();
    const query = req.getQuery() ?? '';
    const headers: Record<string, string> = {};
    // uWS itself refuses oversized and over-numerous headers before this runs.
    req.forEach((name, value) => {
      headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
    });
    const remoteAddress = clientAddress(
      Buffer.from(res.getRemoteAddressAsText()).toString(),
      headers['x-forwarded-for'],
      trustProxy,
    );
    if (flight.over) {
      const shuttingDown = new DomainError(
        'SERVICE_UNAVAILABLE',
        'The server is shutting down',
        undefined,
        { retryAfterSeconds: 1 },
      );
      send(res, state, transportRefusal(headers, shuttingDown), true);
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
      send(res, state, transportRefusal(headers, tooLarge(limit), !drain), !drain);
      return;
    }
    flight.enter();
    // Most requests carry no body: answer without waiting for onData.
    if (!(declared > 0) && headers['transfer-encoding'] === undefined) {
      edge.handle({ method, path, query, headers, remoteAddress, body: EMPTY_BODY }, match).then(
        (response) => answer(res, state, response, flight.closing),
        () => answer(res, state, serverError(), true),
      );
      return;
    }
    // A body is coming: read for the edge, which judges the head before any of it is kept.
    const reader = new BodyReader(
      { edge, allowance, flight },
      {
        pause: () => {
          if (!state.aborted) res.pause();
        },
        resume: () => {
          if (!state.aborted) res.resume();
        },
        send: (response, close) => send(res, state, response, close),
      },
      { method, path, query, headers, remoteAddress },
      match,
      limit,
      declared,
    );
    state.onAbort = () => reader.abort();
    // uWS reuses the chunk's memory after this callback: the reader copies what it keeps.
    res.onData((chunk, isLast) => reader.data(new Uint8Array(chunk), isLast));
    reader.start();
  });

  for (const [pattern, upgrade] of Object.entries(sockets))
    app.ws<OpenSocket>(pattern, socketEndpoint(upgrade, { edge, trustProxy, open }));

  // Exclusive: by default uWS sets SO_REUSEPORT, so a second server on a port in use would start and share it.
  // (The native module exports the option as a constant; its typings have only the enum, and no host + options overload.)
  const exclusive = (uws as unknown as { LIBUS_LISTEN_EXCLUSIVE_PORT: number })
    .LIBUS_LISTEN_EXCLUSIVE_PORT;
  const token = await new Promise<us_listen_socket>((resolve, reject) =>
    (
      app as unknown as {
        listen(
          host: string,
          port: number,
          options: number,
          cb: (socket: us_listen_socket | false) => void,
        ): void;
      }
    ).listen(host, port, exclusive, (socket) =>
      socket ? resolve(socket) : reject(new ListenRefused(host, port)),
    ),
  );
  return {
    port: uws.us_socket_local_port(token),
    close: (timeoutMs = 10_000) => {
      flight.closing = true;
      uws.us_listen_socket_close(token);
      for (const end of [...open]) end();
      return new Promise<void>((resolve) => {
        // Then the idle keep-alive connections: left open, each holds the process until its
        // client lets go (undici: 4 s), or until uWS's idle timeout.
        let ended = false;
        const end = () => {
          if (ended) return;
          ended = true;
          clearTimeout(timer);
          // Not from inside a uWS callback: the last answer is still corked there, and a
          // forced close would drop it unsent.
          setImmediate(() => {
            app.close();
            resolve();
          });
        };
        const timer = setTimeout(end, timeoutMs);
        flight.drain(end);
      });
    },
  };
}

/**
 * The only module that touches uWebSockets.js. Its rules, kept here once: HttpRequest is
 * valid only during the synchronous callback (read everything first); register onAborted
 * before any await; copy onData chunks and cap the body; write inside res.cork after an
 * await; never write to an aborted response.
 */
import { createRequire } from 'node:module';
import type { HttpResponse, TemplatedApp, us_listen_socket } from 'uWebSockets.js';
import { DomainError } from '../../../platform/errors.ts';
import { errorBody, errorHeaders, httpStatus } from '../error-status.ts';
import { clientAddress, type TrustProxy } from '../../../platform/client-address.ts';
import type { Edge } from '../edge.ts';
import { BodyAllowance, type BodyBound, type BodyHold } from '../body-allowance.ts';
import {
  requestIdOf,
  type Admission,
  type OutgoingResponse,
  type RequestHead,
  type SocketConnection,
  type SocketSession,
  type SocketUpgrade,
} from '../request.ts';
import type { Match } from '../router.ts';
import type { Foreground } from '../../../platform/foreground.ts';
import { BodyStream, STREAM_WINDOW } from '../body-stream.ts';
import { send as sendAnswer, sendWhole, type RequestState } from './response.ts';

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
  /** Open streamed responses and WebSockets: ended when the server closes. */
  const open = new Set<() => void>();
  const send = (
    res: HttpResponse,
    state: RequestState,
    response: OutgoingResponse,
    close: boolean,
  ) => sendAnswer(res, state, response, close, open);
  /** `close` false: left open for a drain, the connection still ends; the client is told to close it. */
  const refusalOf = (
    headers: Record<string, string>,
    error: DomainError,
    close = true,
  ): OutgoingResponse => ({
    status: httpStatus(error),
    headers: {
      'X-Request-Id': requestIdOf(headers),
      ...JSON_TYPE,
      ...errorHeaders(error),
      ...(close ? {} : { Connection: 'close' }),
    },
    body: JSON.stringify(errorBody(error)),
  });
  const refuse = (
    res: HttpResponse,
    state: RequestState,
    headers: Record<string, string>,
    error: DomainError,
    close = true,
  ) => send(res, state, refusalOf(headers, error, close), close);
  const tooLarge = (limit: number) =>
    new DomainError(
      'PAYLOAD_TOO_LARGE',
      limit === 0 ? 'This route takes no request body' : `Body exceeds ${limit} bytes`,
      { limit },
    );

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
      finish();
    }
  };

  app.any('/*', (res, req) => {
    // Small on purpose: every request allocates it and the abort closure; a body's phase
    // lives in receiveBody, which only requests with a body pay for.
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
    if (drained && inFlight === 0) {
      refuse(
        res,
        state,
        headers,
        new DomainError('SERVICE_UNAVAILABLE', 'The server is shutting down', undefined, {
          retryAfterSeconds: 1,
        }),
      );
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
      refuse(res, state, headers, tooLarge(limit), !drain);
      return;
    }
    inFlight += 1;
    foreground?.enter();
    // Most requests carry no body: answer without waiting for onData.
    if (!(declared > 0) && headers['transfer-encoding'] === undefined) {
      edge.handle({ method, path, query, headers, remoteAddress, body: EMPTY }, match).then(
        (response) => answer(res, state, response, closing),
        () => answer(res, state, { status: 500, headers: {}, body: null }, true),
      );
      return;
    }
    receiveBody(
      res,
      state,
      { method, path, query, headers, remoteAddress },
      match,
      limit,
      declared,
    );
  });

  function receiveBody(
    res: HttpResponse,
    state: RequestState,
    head: RequestHead,
    match: Match,
    limit: number,
    declared: number,
  ): void {
    const { headers } = head;
    // A body is coming. Nothing of it is kept until the head has been judged: the socket is
    // paused, and what arrived with the head is held only while the credential is checked.
    res.pause();
    // Counted in flight while its body is still arriving: a client that goes away meanwhile ends it.
    let awaitingBody = true;
    /**
     * judging: the head is being decided; reading: admitted, the body is kept; dropping: refused
     * and answered, the rest is read and dropped; refusing: refused mid-way through a body of
     * unknown length, which is read to its end and dropped before the answer (answering earlier
     * would leave no way to end the connection cleanly after a bounded drain).
     */
    let phase: 'judging' | 'reading' | 'dropping' | 'refusing' = 'judging';
    let refusal: OutgoingResponse | null = null;
    let admission: Admission | null = null;
    /** The body bytes this request holds, once admitted. */
    let hold: BodyHold | null = null;
    let size = 0;
    /** The body's last chunk has arrived (whether or not it was kept). */
    let lastSeen = false;
    let early: { chunk: Buffer; isLast: boolean }[] = [];
    const chunks: Buffer[] = [];
    /** Gives back the body bytes this request holds. */
    const release = () => hold?.release();
    /** Ends an upload being streamed to storage. */
    let cutOff = NOTHING;
    state.onAbort = () => {
      release();
      cutOff();
      if (awaitingBody) {
        awaitingBody = false;
        finish();
      }
    };
    const busy = (bound: BodyBound) =>
      refusalOf(
        headers,
        new DomainError('SERVICE_UNAVAILABLE', BUSY[bound], undefined, { retryAfterSeconds: 1 }),
      );
    const done = (response: OutgoingResponse, close: boolean) => {
      awaitingBody = false;
      send(res, state, response, close);
      finish();
    };
    /** Refused: nothing of the body is kept from here on. */
    const refuseBody = (response: OutgoingResponse) => {
      if (!awaitingBody) return;
      release();
      chunks.length = 0;
      early = [];
      if (declared > 0) {
        // Answered at once; the connection ends once the client has sent what it declared.
        phase = 'dropping';
        res.resume();
        done({ ...response, headers: { ...response.headers, Connection: 'close' } }, false);
      } else if (lastSeen) {
        res.resume(); // for the connection's next request
        done(response, false);
      } else {
        phase = 'refusing';
        refusal = response;
        res.resume();
      }
    };
    /** An upload: handed to the route as it arrives, at most STREAM_WINDOW bytes waiting. */
    let stream: BodyStream | null = null;
    const take = (chunk: Buffer, isLast: boolean) => {
      size += chunk.byteLength;
      if (stream) {
        if (size > limit) stream.fail(tooLarge(limit));
        else stream.push(chunk, isLast);
        return;
      }
      if (size > limit) return refuseBody(refusalOf(headers, tooLarge(limit)));
      // Held as it arrives: a declared length that never comes holds nothing.
      const bound = hold!.take(chunk.byteLength);
      if (bound) return refuseBody(busy(bound));
      if (chunk.byteLength > 0) chunks.push(chunk);
      if (!isLast) return;
      awaitingBody = false;
      const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      chunks.length = 0;
      // Paused while the handler works: uWS re-arms its ~10 s idle timeout when a socket is
      // resumed, and would cut off a handler that takes longer (a large export); a paused socket
      // has none. It reads on once the answer is written.
      if (!state.aborted) res.pause();
      edge
        .handle({ ...head, body }, match, admission!)
        .then(
          (response) => {
            if (!state.aborted) res.resume();
            send(res, state, response, closing);
          },
          () => {
            if (!state.aborted) res.resume();
            send(res, state, { status: 500, headers: {}, body: null }, true);
          },
        )
        .finally(() => {
          release();
          finish();
        });
    };
    res.onData((chunk, isLast) => {
      if (isLast) lastSeen = true;
      if (phase === 'dropping') return;
      if (phase === 'refusing') {
        size += chunk.byteLength;
        if (awaitingBody && (isLast || size > limit + DRAIN_LIMIT))
          done(
            {
              ...refusal!,
              headers: { ...refusal!.headers, ...(isLast ? {} : { Connection: 'close' }) },
            },
            !isLast,
          );
        return;
      }
      // uWS reuses the chunk's memory after this callback: copy it.
      const copy = Buffer.from(new Uint8Array(chunk));
      if (phase === 'judging') early.push({ chunk: copy, isLast });
      else if (awaitingBody || stream) take(copy, isLast);
    });
    edge.admit(head, match).then(
      (verdict) => {
        if (!awaitingBody) return; // the client went away meanwhile
        if ('refused' in verdict) return refuseBody(verdict.refused);
        const streaming = edge.streamsBody(match);
        hold = allowance.hold(head.remoteAddress, verdict.admitted.principal !== null);
        if (streaming) {
          // An upload (a credential's, past its quota check) holds its window from the start.
          const bound = hold.take(declared > 0 ? Math.min(declared, STREAM_WINDOW) : STREAM_WINDOW);
          if (bound) return refuseBody(busy(bound));
        }
        admission = verdict.admitted;
        phase = 'reading';
        if (streaming) {
          const body = (stream = new BodyStream(
            () => !state.aborted && res.pause(),
            () => !state.aborted && res.resume(),
          ));
          cutOff = () =>
            body.fail(
              new DomainError('VALIDATION_FAILED', 'The client went away before the body ended'),
            );
          awaitingBody = false;
          edge
            .handle({ ...head, body: EMPTY, bodySource: body }, match, admission)
            .then(
              // Answered before the body ended (refused mid-way): the connection cannot be reused.
              (response) => send(res, state, response, closing || !lastSeen),
              () => send(res, state, { status: 500, headers: {}, body: null }, true),
            )
            .finally(() => {
              body.close();
              release();
              finish();
            });
        }
        const arrived = early;
        early = [];
        for (const { chunk, isLast } of arrived)
          if ((awaitingBody || stream) && phase === 'reading') take(chunk, isLast);
        // Read on: the rest of the body (a complete one is being handled, its socket paused).
        if (phase === 'reading') {
          if (stream) stream.resumeIfRoom();
          else if (awaitingBody) res.resume();
        }
      },
      () => refuseBody({ status: 500, headers: {}, body: null }),
    );
  }

  for (const [pattern, upgrade] of Object.entries(sockets)) {
    app.ws<OpenSocket>(pattern, {
      // Frames from clients are small (a first message with a bearer); events go the other way.
      maxPayloadLength: 16 * 1024,
      idleTimeout: 120,
      sendPingsAutomatically: true,
      // The session closes a slow client itself (with a code saying so) well before this.
      maxBackpressure: 64 * 1024 * 1024,
      upgrade: (res, req, context) => {
        const state: RequestState = { aborted: false, onAbort: null, head: false };
        res.onAborted(() => {
          state.aborted = true;
        });
        const headers: Record<string, string> = {};
        req.forEach((name, value) => {
          headers[name] = name in headers ? `${headers[name]}, ${value}` : value;
        });
        const head: RequestHead = {
          method: 'GET',
          path: req.getUrl(),
          query: req.getQuery() ?? '',
          headers,
          remoteAddress: clientAddress(
            Buffer.from(res.getRemoteAddressAsText()).toString(),
            headers['x-forwarded-for'],
            trustProxy,
          ),
        };
        const protocols = (headers['sec-websocket-protocol'] ?? '')
          .split(',')
          .map((p) => p.trim())
          .filter(Boolean);
        const overBudget = edge.enterUpgrade(head);
        if (overBudget) return sendWhole(res, state, overBudget, true);
        upgrade(head, protocols).then(
          (verdict) => {
            if (state.aborted) return;
            if ('refused' in verdict) return sendWhole(res, state, verdict.refused, true);
            let leave = NOTHING;
            if (verdict.pending) {
              // Counted once accepted, not while judged: a burst of upgrades with bearers is not pending.
              const place = edge.awaitCredential(head);
              if ('refused' in place) return sendWhole(res, state, place.refused, true);
              leave = place.leave;
            }
            state.aborted = true;
            res.cork(() =>
              res.upgrade<OpenSocket>(
                { session: verdict.session, state: { closed: false, end: NOTHING, leave } },
                headers['sec-websocket-key'] ?? '',
                verdict.protocol ?? '',
                headers['sec-websocket-extensions'] ?? '',
                context,
              ),
            );
          },
          () => sendWhole(res, state, { status: 500, headers: {}, body: null }, true),
        );
      },
      open: (ws) => {
        const socket = ws.getUserData().state;
        const connection: SocketConnection = {
          send: (data, binary) => {
            if (!socket.closed) ws.send(data, binary);
          },
          buffered: () => (socket.closed ? 0 : ws.getBufferedAmount()),
          close: (code, reason) => {
            if (socket.closed) return;
            socket.closed = true;
            ws.end(code, reason);
          },
        };
        socket.end = () => connection.close(1012, 'server restarting: resume from your cursor');
        open.add(socket.end);
        ws.getUserData().session.open(connection);
      },
      message: (ws, message, isBinary) => {
        const { session, state } = ws.getUserData();
        state.leave(); // its credential has come (or it is closed for what came instead)
        session.message(Buffer.from(new Uint8Array(message)), isBinary);
      },
      drain: (ws) => ws.getUserData().session.drain(),
      close: (ws) => {
        const { session, state } = ws.getUserData();
        state.closed = true;
        state.leave();
        open.delete(state.end);
        session.closed();
      },
    });
  }

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
      closing = true;
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
        drained = end;
        if (inFlight === 0) drained();
      });
    },
  };
}

/**
 * What uWS keeps with a WebSocket. Our own flags live one object down: uWS puts the user
 * data's properties on its WebSocket object, where `closed` is already taken.
 */
interface OpenSocket {
  session: SocketSession;
  state: {
    closed: boolean;
    /** Closes it when the server does. */
    end: () => void;
    /** Gives back its place among its address's upgrades waiting for a credential (idempotent). */
    leave: () => void;
  };
}

const EMPTY = Buffer.alloc(0);
/** Why a body was refused for room (503, Retry-After: 1). */
const BUSY: Record<BodyBound, string> = {
  process: 'Too many request bodies are being received; retry shortly',
  address: 'This address is sending too many request bodies at once; retry shortly',
  unauthenticated: 'Too many request bodies without a credential are being received; retry shortly',
};
const NOTHING = () => {};
/** A refused body is read and dropped up to this size, so clients that send it all before reading see the 413. */
const DRAIN_LIMIT = 64 * 1024 * 1024;

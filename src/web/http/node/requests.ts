/**
 * Each HTTP request on node:http, as uws/requests.ts does it on uWS: answered at once when the
 * server has shut down or the declared body is over the route's cap; handed to the edge when it
 * has no body, and to a BodyReader (../body-reader.ts) when it has one.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TrustProxy } from '../../../platform/client-address.ts';
import { DomainError, shuttingDown } from '../../../platform/errors.ts';
import { BodyReader, DRAIN_LIMIT, tooLarge, type BodyReaderDeps } from '../body-reader.ts';
import { serverError, transportRefusal } from '../failures.ts';
import { EMPTY_BODY, type Answering, type OutgoingResponse } from '../request.ts';
import { readRequest } from './head.ts';
import { rawAnswer, send, type RequestState } from './response.ts';

export interface RequestDeps extends BodyReaderDeps {
  /** Which proxies may name the client in X-Forwarded-For. */
  trustProxy: TrustProxy;
  /** Open streamed responses and WebSockets, ended when the server closes: a streamed answer joins them. */
  open: Answering['open'];
}

/** More header lines than this: 431 (uWS refuses such a crowd before any handler runs). */
const MAX_HEADER_LINES = 100;

/** A connection answered before its body came is closed this long after the client's last byte. */
const DRAIN_IDLE_MS = 10_000;

/**
 * Writes the answer. One that tells the client to close (Connection: close) while it is still
 * sending the body is written now, on the socket itself, and the connection ends once the body
 * has come, read and dropped: a client that reads only after sending sees the answer, not a
 * reset (node:http would close at once after an answer that says close). `close`: at once.
 */
function sendBeforeBody(
  req: IncomingMessage,
  res: ServerResponse,
  state: RequestState,
  response: OutgoingResponse,
  close: boolean,
  answering: Answering,
): void {
  const closeAfter = response.headers.Connection === 'close';
  if (close || !closeAfter || req.complete)
    return send(res, state, response, close || closeAfter, answering);
  if (state.aborted) return;
  state.aborted = true;
  const { socket } = req;
  socket.write(rawAnswer(response, state.head));
  socket.setTimeout(DRAIN_IDLE_MS, () => socket.destroy());
  req.once('end', () => socket.end());
  req.resume();
}

/**
 * The handler of every HTTP request; `expectsContinue` for one sent with `Expect: 100-continue`
 * (node:http's 'checkContinue'), told to go on only once its head is let in.
 */
export function requestHandler(
  deps: RequestDeps,
): (req: IncomingMessage, res: ServerResponse, expectsContinue?: boolean) => void {
  const { edge, flight, trustProxy } = deps;

  const answer = (
    res: ServerResponse,
    state: RequestState,
    response: OutgoingResponse,
    close: boolean,
  ) => {
    try {
      send(res, state, response, close, deps);
    } finally {
      flight.leave();
    }
  };

  return (req, res, expectsContinue = false) => {
    const state: RequestState = { aborted: false, onAbort: null, head: req.method === 'HEAD' };
    // The client went away before its answer was written.
    res.on('close', () => {
      if (state.aborted) return;
      state.aborted = true;
      state.onAbort?.();
    });
    const request = readRequest(req, trustProxy);
    const { headers } = request;
    if (flight.over) {
      send(res, state, transportRefusal(headers, shuttingDown()), true, deps);
      return;
    }
    if (req.rawHeaders.length > 2 * MAX_HEADER_LINES) {
      const crowd = new DomainError('VALIDATION_FAILED', 'Too many request headers');
      send(res, state, { ...transportRefusal(headers, crowd), status: 431 }, true, deps);
      return;
    }
    const match = edge.match(request.method, request.path);
    const limit = edge.bodyLimit(match);
    const declared = Number(headers['content-length'] ?? 0);
    if (declared > limit) {
      const tooBig = transportRefusal(headers, tooLarge(limit), false);
      // Told before it sends the body: nothing to read.
      if (expectsContinue) return send(res, state, tooBig, true, deps);
      // A body up to DRAIN_LIMIT is read and dropped, then answered; a bigger one is cut off.
      if (declared <= DRAIN_LIMIT) return sendBeforeBody(req, res, state, tooBig, false, deps);
      send(res, state, tooBig, true, deps);
      return;
    }
    if (expectsContinue) res.writeContinue();
    flight.enter();
    if (!(declared > 0) && headers['transfer-encoding'] === undefined) {
      req.resume(); // nothing to read: let the connection's next request come
      edge.handle(request, match).then(
        (response) => answer(res, state, response, flight.closing),
        () => answer(res, state, serverError(), true),
      );
      return;
    }
    const reader = new BodyReader(
      deps,
      {
        pause: () => {
          if (!state.aborted) req.pause();
        },
        resume: () => {
          if (!state.aborted) req.resume();
        },
        send: (response, close) => sendBeforeBody(req, res, state, response, close, deps),
      },
      request,
      match,
      limit,
      declared,
    );
    state.onAbort = () => reader.abort();
    req.on('data', (chunk: Buffer) => reader.data(chunk, false));
    req.on('end', () => reader.data(EMPTY_BODY, true));
    reader.start();
  };
}

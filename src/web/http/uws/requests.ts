/**
 * Each HTTP request on uWebSockets.js: its head read during the callback; answered at once
 * when the server has shut down or the declared body is over the route's cap; handed to the
 * edge when it has no body, and to a BodyReader (../body-reader.ts) when it has one.
 */
import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import type { TrustProxy } from '../../../platform/client-address.ts';
import { shuttingDown } from '../../../platform/errors.ts';
import { BodyReader, DRAIN_LIMIT, tooLarge, type BodyReaderDeps } from '../body-reader.ts';
import { serverError, transportRefusal } from '../failures.ts';
import type { Answering, OutgoingResponse } from '../request.ts';
import { readRequest } from './head.ts';
import { send, type RequestState } from './response.ts';

export interface RequestDeps extends BodyReaderDeps {
  /** Which proxies may name the client in X-Forwarded-For. */
  trustProxy: TrustProxy;
  /** Open streamed responses and WebSockets, ended when the server closes: a streamed answer joins them. */
  open: Answering['open'];
}

/** The handler of every HTTP request. */
export function requestHandler(deps: RequestDeps): (res: HttpResponse, req: HttpRequest) => void {
  const { edge, flight, trustProxy } = deps;

  /** Answers and ends the request's time in flight (the bodyless path: no `finally` promise). */
  const answer = (
    res: HttpResponse,
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

  return (res, req) => {
    // Small on purpose: every request allocates it and the abort closure; a body's phase
    // lives in its BodyReader, which only requests with a body pay for.
    const state: RequestState = { aborted: false, onAbort: null, head: false };
    res.onAborted(() => {
      state.aborted = true;
      state.onAbort?.();
    });
    // Method tokens are case-sensitive (RFC 9110 §9.1): `get` is no GET.
    const method = req.getCaseSensitiveMethod();
    state.head = method === 'HEAD';
    const request = readRequest(res, req, method, trustProxy);
    const { headers } = request;
    if (flight.over) {
      send(res, state, transportRefusal(headers, shuttingDown()), true, deps);
      return;
    }
    const match = edge.match(method, request.path);
    const limit = edge.bodyLimit(match);
    const declared = Number(headers['content-length'] ?? 0);
    if (declared > limit) {
      // Answered at once. Closing now would reset a client still sending (EPIPE before it reads
      // the answer), so a body up to DRAIN_LIMIT is read and dropped first (uWS goes on reading
      // an answered request's body; the handler must take it).
      const drain = declared <= DRAIN_LIMIT;
      if (drain) res.onData(() => {});
      send(res, state, transportRefusal(headers, tooLarge(limit), !drain), !drain, deps);
      return;
    }
    flight.enter();
    // Most requests carry no body: answer without waiting for onData.
    if (!(declared > 0) && headers['transfer-encoding'] === undefined) {
      edge.handle(request, match).then(
        (response) => answer(res, state, response, flight.closing),
        () => answer(res, state, serverError(), true),
      );
      return;
    }
    // A body is coming: read for the edge, which judges the head before any of it is kept.
    const reader = new BodyReader(
      deps,
      {
        pause: () => {
          if (!state.aborted) res.pause();
        },
        resume: () => {
          if (!state.aborted) res.resume();
        },
        send: (response, close) => send(res, state, response, close, deps),
      },
      request,
      match,
      limit,
      declared,
    );
    state.onAbort = () => reader.abort();
    // uWS reuses the chunk's memory after this callback: the reader copies what it keeps.
    res.onData((chunk, isLast) => reader.data(new Uint8Array(chunk), isLast));
    reader.start();
  };
}

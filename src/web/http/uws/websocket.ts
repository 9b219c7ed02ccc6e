/**
 * WebSocket endpoints on uWebSockets.js. An upgrade spends its address's budget, then its
 * endpoint (a SocketUpgrade, ../request.ts) judges it from the head: refused with an HTTP
 * answer, or accepted with a session, which is handed the socket as a SocketConnection, apart
 * from the socket library. Open sockets close when the server does.
 */
import type { WebSocketBehavior } from 'uWebSockets.js';
import type { TrustProxy } from '../../../platform/client-address.ts';
import type { Edge } from '../edge.ts';
import { serverError } from '../failures.ts';
import type { RequestHead, SocketConnection, SocketSession, SocketUpgrade } from '../request.ts';
import { readRequest } from './head.ts';
import { sendWhole } from './response.ts';

/**
 * What uWS keeps with a WebSocket. Our own flags live one object down: uWS puts the user
 * data's properties on its WebSocket object, where `closed` is already taken.
 */
export interface OpenSocket {
  session: SocketSession;
  state: {
    closed: boolean;
    /** Closes it when the server does. */
    end: () => void;
    /** Gives back its place among its address's upgrades waiting for a credential (idempotent). */
    leave: () => void;
  };
}

const NOTHING = () => {};

export interface SocketDeps {
  edge: Edge;
  /** Which proxies may name the client in X-Forwarded-For. */
  trustProxy: TrustProxy;
  /** Open streamed responses and WebSockets, ended when the server closes: an open socket joins them. */
  open: Set<() => void>;
}

/** The behaviour of one WebSocket endpoint, deciding its upgrades with `upgrade`. */
export function socketEndpoint(
  upgrade: SocketUpgrade,
  { edge, trustProxy, open }: SocketDeps,
): WebSocketBehavior<OpenSocket> {
  return {
    // Frames from clients are small (a first message with a bearer); events go the other way.
    maxPayloadLength: 16 * 1024,
    idleTimeout: 120,
    sendPingsAutomatically: true,
    // The session closes a slow client itself (with a code saying so) well before this.
    maxBackpressure: 64 * 1024 * 1024,
    upgrade: (res, req, context) => {
      const state = { aborted: false };
      res.onAborted(() => {
        state.aborted = true;
      });
      const head: RequestHead = readRequest(res, req, 'GET', trustProxy);
      const { headers } = head;
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
          state.aborted = true; // answered: the upgrade is the answer
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
        () => sendWhole(res, state, serverError(), true),
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
  };
}

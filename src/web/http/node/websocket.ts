/**
 * WebSocket endpoints on node:http, with `ws` speaking the protocol, as uws/websocket.ts does
 * on uWS: an upgrade spends its address's budget, its endpoint judges it from the head, and an
 * accepted one hands its session the socket as a SocketConnection. A refusal is written on the
 * raw socket. Open sockets close when the server does.
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { TrustProxy } from '../../../platform/client-address.ts';
import type { Edge } from '../edge.ts';
import { serverError } from '../failures.ts';
import type { SocketConnection, SocketSession, SocketUpgrade } from '../request.ts';
import { readRequest } from './head.ts';
import { sendRaw } from './response.ts';

/** uWS's idleTimeout with automatic pings: a peer silent this long (a ping unanswered) is closed. */
const PING_EVERY_MS = 60_000;

export interface SocketDeps {
  edge: Edge;
  trustProxy: TrustProxy;
  /** Open streamed responses and WebSockets, ended when the server closes: an open socket joins them. */
  open: Set<() => void>;
}

/** Decides and completes the upgrades of the given paths; false for any other path. */
export function socketUpgrades(
  sockets: Record<string, SocketUpgrade>,
  { edge, trustProxy, open }: SocketDeps,
): (req: IncomingMessage, socket: Duplex, early: Buffer) => boolean {
  const chosen = new WeakMap<IncomingMessage, string | null>();
  const wss = new WebSocketServer({
    noServer: true,
    // Frames from clients are small (a first message with a bearer); events go the other way.
    maxPayload: 16 * 1024,
    handleProtocols: (_offered, req) => chosen.get(req) ?? false,
  });
  return (req, socket, early) => {
    const head = readRequest(req, trustProxy);
    const upgrade = sockets[head.path];
    if (!upgrade) return false;
    const { headers } = head;
    const protocols = (headers['sec-websocket-protocol'] ?? '')
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean);
    const overBudget = edge.enterUpgrade(head);
    if (overBudget) {
      sendRaw(socket, overBudget);
      return true;
    }
    upgrade(head, protocols).then(
      (verdict) => {
        if (socket.destroyed) return;
        if ('refused' in verdict) return sendRaw(socket, verdict.refused);
        let leave = () => {};
        if (verdict.pending) {
          const place = edge.awaitCredential(head);
          if ('refused' in place) return sendRaw(socket, place.refused);
          leave = place.leave;
        }
        chosen.set(req, verdict.protocol);
        wss.handleUpgrade(req, socket, early, (ws) => accept(ws, verdict.session, leave, open));
      },
      () => sendRaw(socket, serverError()),
    );
    return true;
  };
}

function accept(
  ws: WebSocket,
  session: SocketSession,
  leave: () => void,
  open: Set<() => void>,
): void {
  let closed = false;
  let alive = true;
  // The peer's socket took what was sent: the session may send more.
  const sent = () => {
    if (!closed && ws.bufferedAmount === 0) session.drain();
  };
  const connection: SocketConnection = {
    send: (data, binary) => {
      if (!closed) ws.send(data, { binary }, sent);
    },
    buffered: () => (closed ? 0 : ws.bufferedAmount),
    close: (code, reason) => {
      if (closed) return;
      closed = true;
      ws.close(code, reason);
    },
  };
  const end = () => connection.close(1012, 'server restarting: resume from your cursor');
  open.add(end);
  const pings = setInterval(() => {
    if (!alive) return ws.terminate();
    alive = false;
    ws.ping();
  }, PING_EVERY_MS);
  pings.unref();
  ws.on('pong', () => (alive = true));
  ws.on('message', (data, isBinary) => {
    alive = true;
    leave(); // its credential has come (or it is closed for what came instead)
    const bytes = Array.isArray(data)
      ? Buffer.concat(data)
      : Buffer.isBuffer(data)
        ? data
        : Buffer.from(data);
    session.message(bytes, isBinary);
  });
  ws.on('close', () => {
    closed = true;
    clearInterval(pings);
    leave();
    open.delete(end);
    session.closed();
  });
  ws.on('error', () => ws.terminate());
  session.open(connection);
}

/**
 * The HTTP server on node:http, for where no uWebSockets.js build loads (../transport.ts):
 * listens, hands every request to the request handler and each WebSocket path's upgrades to
 * its endpoint, answers what node:http cannot parse in the error envelope, and closes as the
 * uWS server does: no new connections, open streams ended, in-flight requests answered.
 */
import http from 'node:http';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import { DomainError } from '../../../platform/errors.ts';
import { BodyAllowance } from '../body-allowance.ts';
import type { Edge } from '../edge.ts';
import { serverError, transportRefusal } from '../failures.ts';
import { InFlight } from '../in-flight.ts';
import { ListenRefused, type HttpServer, type ListenOptions } from '../listener.ts';
import { readRequest } from './head.ts';
import { requestHandler } from './requests.ts';
import { IDLE_TIMEOUT_MS, sendRaw } from './response.ts';
import { EMPTY_BODY } from '../request.ts';
import { socketUpgrades } from './websocket.ts';

/** How long a closing listener goes on accepting after the last connection came. */
const QUIET_MS = 100;

/** node:http's parse error, with the bytes it failed on. */
type ParseError = Error & { code?: string; rawPacket?: Buffer };

/** What node:http's parser refused, answered in the envelope: its status and error. */
function parseRefusal(error: ParseError): [number, DomainError] {
  if (error.code === 'HPE_HEADER_OVERFLOW')
    return [431, new DomainError('VALIDATION_FAILED', 'Request headers are too large')];
  return [400, new DomainError('VALIDATION_FAILED', 'The request is not valid HTTP/1.1')];
}

/**
 * The request line of a method token node:http's parser does not know (`FOO`, `get`): uWS
 * hands such a request to the edge, which answers 405 with Allow (or 404), and so does this.
 */
function unknownMethod(error: ParseError): { method: string; target: string } | null {
  if (error.code !== 'HPE_INVALID_METHOD') return null;
  const [, method, target] =
    /^([!#$%&'*+.^`|~\w-]+) (\/\S*) HTTP\/1\.[01]\r?\n/.exec(
      error.rawPacket?.toString('latin1') ?? '',
    ) ?? [];
  return method && target ? { method, target } : null;
}

export async function listen(
  edge: Edge,
  host: string,
  port: number,
  options: ListenOptions = {},
): Promise<HttpServer> {
  const { foreground, trustProxy = null, maxBufferedBytes = Infinity, sockets = {} } = options;
  const flight = new InFlight(foreground);
  const open = new Set<() => void>();
  const handler = requestHandler({
    edge,
    allowance: new BodyAllowance(maxBufferedBytes),
    flight,
    trustProxy,
    open,
  });
  const server = http.createServer(
    {
      // uWS serves a 20 KB header (a large cookie, a long bearer); far more is refused.
      maxHeaderSize: 64 * 1024,
      // uWS's idle timeout: a keep-alive connection with no request for 10 s is closed.
      keepAliveTimeout: IDLE_TIMEOUT_MS,
      // Long-polls and uploads take their time; a stalled head does not.
      headersTimeout: 10_000,
      requestTimeout: 0,
    },
    (req, res) => handler(req, res),
  );
  server.on('checkContinue', (req: http.IncomingMessage, res: http.ServerResponse) =>
    handler(req, res, true),
  );
  // Any other Expect is ignored, as uWS does (node:http would answer 417 by itself).
  server.on('checkExpectation', (req: http.IncomingMessage, res: http.ServerResponse) =>
    handler(req, res),
  );
  /** Connections accepted so far: a close stops accepting once they stop coming. */
  let connections = 0;
  server.on('connection', () => void (connections += 1));
  const upgrades = socketUpgrades(sockets, { edge, trustProxy, open });
  // A CONNECT, or an upgrade on a path without a WebSocket: node:http hands over the socket,
  // and the edge answers the request as any other (CONNECT: 405 or 404), then it closes.
  const answerOnSocket = (req: http.IncomingMessage, socket: Duplex) =>
    edge.handle(readRequest(req, trustProxy)).then(
      (response) => sendRaw(socket, response),
      () => sendRaw(socket, serverError()),
    );
  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, early: Buffer) => {
    if (!upgrades(req, socket, early)) void answerOnSocket(req, socket);
  });
  server.on('connect', (req: http.IncomingMessage, socket: Duplex) => {
    void answerOnSocket(req, socket);
  });
  server.on('clientError', (error: ParseError, socket: Duplex) => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const unknown = unknownMethod(error);
    if (unknown) {
      const mark = unknown.target.indexOf('?');
      const path = mark === -1 ? unknown.target : unknown.target.slice(0, mark);
      void edge
        .handle({
          method: unknown.method,
          path,
          query: mark === -1 ? '' : unknown.target.slice(mark + 1),
          headers: {},
          remoteAddress: (socket as Partial<net.Socket>).remoteAddress ?? '',
          body: EMPTY_BODY,
        })
        .then(
          (response) => sendRaw(socket, response),
          () => sendRaw(socket, serverError()),
        );
      return;
    }
    const [status, refusal] = parseRefusal(error);
    sendRaw(socket, { ...transportRefusal({}, refusal), status });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', () => reject(new ListenRefused(host, port)));
    server.listen({ host, port, exclusive: true }, resolve);
  });
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : port,
    close: (timeoutMs = 10_000) => {
      flight.closing = true;
      // Stops accepting and nothing more: http.Server's close() would also drop idle keep-alive
      // connections at once, resetting a request a client is sending on one right now. Such a
      // request is answered (with Connection: close), as on uWS, and the rest close at the end.
      // Once connections have stopped coming: those the kernel completed before the close are
      // accepted and answered, not reset with the listening socket. On a busy process node:http
      // accepts them over several turns of the loop (measured: 44 of 54 two turns after a
      // SIGTERM), so the listener waits until none has come for QUIET_MS, QUIET_MS × 10 at most.
      const closing = Date.now();
      let seen = connections;
      const stopAccepting = () => {
        if (connections !== seen && Date.now() - closing < QUIET_MS * 10) {
          seen = connections;
          setTimeout(stopAccepting, QUIET_MS).unref();
        } else net.Server.prototype.close.call(server);
      };
      setTimeout(stopAccepting, QUIET_MS).unref();
      for (const end of [...open]) end();
      return new Promise<void>((resolve) => {
        let ended = false;
        const end = () => {
          if (ended) return;
          ended = true;
          clearTimeout(timer);
          // After the last answer has been handed to its socket.
          setImmediate(() => {
            server.close();
            server.closeAllConnections();
            resolve();
          });
        };
        const timer = setTimeout(end, timeoutMs);
        flight.drain(end);
      });
    },
  };
}

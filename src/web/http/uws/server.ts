/**
 * The HTTP server on uWebSockets.js: loads the package (importing this module throws where
 * no build of it loads), listens, routes every request to the request handler and each WebSocket path to its
 * endpoint, and closes: no new connections, open streams ended, in-flight requests answered.
 */
import { createRequire } from 'node:module';
import type { us_listen_socket } from 'uWebSockets.js';
import { BodyAllowance } from '../body-allowance.ts';
import type { Edge } from '../edge.ts';
import { InFlight } from '../in-flight.ts';
import { ListenRefused, type HttpServer, type ListenOptions } from '../listener.ts';
import { requestHandler } from './requests.ts';
import { socketEndpoint, type OpenSocket } from './websocket.ts';

// Throws when no build of the package loads here (its message names the Node versions it
// ships): ../transport.ts then serves on node:http, or refuses when uWS was asked for.
// uWS reads its header-size cap from the environment once, as its binary loads: 4 KB by default,
// below the cookies and bearers clients send; 64 KB, as on node:http (../node/server.ts).
process.env.UWS_HTTP_MAX_HEADERS_SIZE ??= String(64 * 1024);
const uws = createRequire(import.meta.url)('uWebSockets.js') as typeof import('uWebSockets.js');

export async function listen(
  edge: Edge,
  host: string,
  port: number,
  options: ListenOptions = {},
): Promise<HttpServer> {
  const { foreground, trustProxy = null, maxBufferedBytes = Infinity, sockets = {} } = options;
  const app = uws.App();
  const flight = new InFlight(foreground);
  /** Open streamed responses and WebSockets: ended when the server closes. */
  const open = new Set<() => void>();
  app.any(
    '/*',
    requestHandler({
      edge,
      // Body bytes held by requests still reading theirs (taken as they arrive).
      allowance: new BodyAllowance(maxBufferedBytes),
      flight,
      trustProxy,
      open,
    }),
  );
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

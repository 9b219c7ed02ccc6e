/**
 * The HTTP server on uWebSockets.js: loads the package (and says whether its native build
 * runs), listens, routes every request to the request handler and each WebSocket path to its
 * endpoint, and closes: no new connections, open streams ended, in-flight requests answered.
 */
import { createRequire } from 'node:module';
import type { TemplatedApp, us_listen_socket } from 'uWebSockets.js';
import type { TrustProxy } from '../../../platform/client-address.ts';
import type { Foreground } from '../../../platform/foreground.ts';
import { BodyAllowance } from '../body-allowance.ts';
import type { Edge } from '../edge.ts';
import { InFlight } from '../in-flight.ts';
import type { SocketUpgrade } from '../request.ts';
import { requestHandler } from './requests.ts';
import { socketEndpoint, type OpenSocket } from './websocket.ts';

const uws = createRequire(import.meta.url)('uWebSockets.js') as typeof import('uWebSockets.js');

/** The package silently falls back to a slow `ws` imitation when its binary does not load. */
export const UWS_NATIVE = typeof (uws as { SSLApp?: unknown }).SSLApp === 'function';
export const UWS_IMPLEMENTATION = UWS_NATIVE
  ? 'uWebSockets.js native'
  : 'uWebSockets.js fallback (node:http/ws imitation)';

/** The API port cannot be had: another process listens there, or HOST is not this machine's. */
export class ListenRefused extends Error {
  constructor(host: string, port: number) {
    super(
      `cannot listen on ${host}:${port}: another process listens there, or HOST is not an address of this machine; set PORT to a free port (0: any free one)`,
    );
  }
}

/**
 * The fallback cannot serve this edge: it throws "Not implemented" from methods every request
 * here uses (getCaseSensitiveMethod, getRemoteAddressAsText, pause, resume, onWritable), and
 * the throw ends the process. So a server refuses to start on it rather than die at its first
 * request (test/ops/runtime.test.ts).
 */
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
  // `close()` (every socket, listen sockets included) is in the native App, not in its typings.
  const app = uws.App() as TemplatedApp & { close(): void };
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

/**
 * A listening HTTP server as compose.ts sees it, whichever transport serves it (uws/ or
 * node/): what it is asked to do, how it closes, and the one refusal its listen may meet.
 */
import type { TrustProxy } from '../../platform/client-address.ts';
import type { Foreground } from '../../platform/foreground.ts';
import type { Edge } from './edge.ts';
import type { SocketUpgrade } from './request.ts';

/** The API port cannot be had: another process listens there, or HOST is not this machine's. */
export class ListenRefused extends Error {
  constructor(host: string, port: number) {
    super(
      `cannot listen on ${host}:${port}: another process listens there, or HOST is not an address of this machine; set PORT to a free port (0: any free one)`,
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

export type Listen = (
  edge: Edge,
  host: string,
  port: number,
  options?: ListenOptions,
) => Promise<HttpServer>;

/** The shapes a request and its answer take between the transport (uws/) and the edge. */
import { randomUUID } from 'node:crypto';
import type { DomainError } from '../../platform/errors.ts';
import type { Principal } from '../../services/auth/principal.ts';

/** What is known of a request before its body: the request line and the headers. */
export interface RequestHead {
  method: string;
  path: string;
  query: string;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  /** The client's IP address, as text (through trusted proxies: see platform/client-address.ts). */
  remoteAddress: string;
}

export interface IncomingRequest extends RequestHead {
  body: Buffer;
  /** An upload route's body, as it arrives (the transport holds at most a window of it). */
  bodySource?: AsyncIterable<Buffer>;
}

/** The body of a request that has none. */
export const EMPTY_BODY = Buffer.alloc(0);

/** A request let in from its head alone: who it is, and what has been decided for it already. */
export interface Admission {
  principal: Principal | null;
  /** The budget it spent (refunded by a 304). */
  rateKey: string | null;
  /** The workspace whose budget a costly request's rest spends: the credential's own (a guest's too, not the sharing one's). */
  budgetWorkspaceId: string | null;
  requestId: string;
  /** Response headers decided so far (request id, rate-limit state). */
  headers: Record<string, string>;
  started: number;
}

/**
 * The edge's decision on a head: admitted, or refused with the answer to send and the error it
 * answers (a caller that does not answer over HTTP, a WebSocket's first message, reads the code).
 */
export type Verdict = { admitted: Admission } | { refused: OutgoingResponse; error: DomainError };

export interface OutgoingResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer | string | null;
  /** `Set-Cookie` values, written as one header each. */
  cookies?: string[];
  /** A streamed body (Server-Sent Events): given the open response once the head is written. */
  stream?: StreamOpener;
}

/** A response body written over time, kept open until either side ends it. */
export interface HttpStream {
  /** Queues text for the client; nothing happens once the stream has closed. */
  write(chunk: string): void;
  /** Bytes queued for the client that its socket has not taken yet. */
  buffered(): number;
  /** Called whenever the socket takes queued bytes after it had refused some. */
  onDrain(fn: () => void): void;
  /** Called once when the stream ends, by either side. */
  onClose(fn: () => void): void;
  end(): void;
}

export type StreamOpener = (stream: HttpStream) => void;

/**
 * What every answer of one server shares: its open streamed responses and WebSockets, ended
 * when it closes (a streamed answer joins them), and the edge, told of an answer the transport
 * could not write (its connection is then closed).
 */
export interface Answering {
  open: Set<() => void>;
  edge: { unsent(error: unknown, response: OutgoingResponse): void };
}

/**
 * The caller's X-Request-Id when it is sane, else a new random one: an id says nothing of how
 * many requests came before it, from anyone (a counter would let any client count every
 * workspace's requests). randomUUID draws from Node's cached entropy: a fraction of a
 * microsecond per request.
 */
export function requestIdOf(headers: Record<string, string>): string {
  const given = headers['x-request-id'];
  return given && /^[\w.:-]{1,128}$/.test(given) ? given : randomUUID();
}

/** A WebSocket as the edge sees it, apart from the socket library. */
export interface SocketConnection {
  send(data: string | Buffer, binary: boolean): void;
  /** Bytes sent that the client's socket has not taken yet. */
  buffered(): number;
  close(code: number, reason: string): void;
}

/** One WebSocket's life, after its upgrade was accepted. */
export interface SocketSession {
  open(connection: SocketConnection): void;
  message(data: Buffer, binary: boolean): void;
  /** The socket took queued bytes. */
  drain(): void;
  /** Closed, by either side. */
  closed(): void;
}

/**
 * Decides a WebSocket upgrade from the request head: refused with an HTTP answer, or accepted;
 * `pending` when its credential is still to come in the first message (until then it holds
 * one of its address's places for such upgrades).
 */
export type SocketUpgrade = (
  head: RequestHead,
  protocols: string[],
) => Promise<
  | { refused: OutgoingResponse }
  | { protocol: string | null; session: SocketSession; pending?: boolean }
>;

/**
 * Writing answers on node:http: a whole one (HEAD and bodiless statuses included), or the head
 * of a streamed one and then its body as the stream writes it; and, on a socket taken for an
 * upgrade, an answer written as raw HTTP/1.1. Written once, never to an abandoned request.
 */
import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Answering, HttpStream, OutgoingResponse, StreamOpener } from '../request.ts';

/** Whether the request was answered or abandoned, and what its body phase undoes on abort. */
export interface RequestState {
  aborted: boolean;
  onAbort: (() => void) | null;
  /** A HEAD request: answered with the GET's head and no body (RFC 9110 §9.3.2). */
  head: boolean;
}

/**
 * An answer, or the head of a streamed one (its body goes on after the request is done).
 * Nothing it throws escapes (the edge checked the answer, so that is a stream's opener, after
 * its head went out): reported, and the connection closed.
 */
export function send(
  res: ServerResponse,
  state: RequestState,
  response: OutgoingResponse,
  close: boolean,
  answering: Answering,
): void {
  if (state.aborted) return;
  state.aborted = true; // a response is written once
  try {
    const { stream } = response;
    if (stream && !state.head) return openStream(res, state, response, stream, answering);
    const body = response.body ?? '';
    const bodiless = response.status === 204 || response.status === 304;
    // HEAD: the length the GET's body has (node:http sends no body for HEAD itself).
    if (!bodiless && !(state.head && stream))
      res.setHeader('Content-Length', Buffer.byteLength(body));
    if (close) res.setHeader('Connection', 'close');
    writeHead(res, response);
    res.end(bodiless || state.head ? undefined : body);
  } catch (error) {
    answering.edge.unsent(error, response);
    res.destroy();
  }
}

/** An idle keep-alive connection is closed after this long, as uWS does. */
export const IDLE_TIMEOUT_MS = 10_000;

function writeHead(res: ServerResponse, response: OutgoingResponse): void {
  // Every answer: a browser never guesses a type we did not send (an upload served as HTML).
  res.setHeader('X-Content-Type-Options', 'nosniff');
  for (const [name, value] of Object.entries(response.headers)) res.setHeader(name, value);
  // Half the real idle timeout, in place of node:http's own header (which names all of it):
  // a client that trusts the header to the second reuses a connection as the server closes
  // it, and gets a reset (undici keeps a connection until one second before the time named).
  if (res.getHeader('Connection') !== 'close')
    res.setHeader('Keep-Alive', `timeout=${IDLE_TIMEOUT_MS / 2000}`);
  if (response.cookies?.length) res.setHeader('Set-Cookie', response.cookies);
  res.writeHead(response.status);
}

/** A streamed body: the head now, then whatever the stream writes until either side ends it. */
function openStream(
  res: ServerResponse,
  state: RequestState,
  response: OutgoingResponse,
  opener: StreamOpener,
  { open, edge }: Answering,
): void {
  let closed = false;
  const closes: (() => void)[] = [];
  const ended = () => {
    if (closed) return;
    closed = true;
    open.delete(end);
    for (const fn of closes.splice(0)) fn();
  };
  const end = () => {
    if (closed) return;
    ended();
    res.end();
  };
  const stream: HttpStream = {
    write(chunk) {
      if (closed) return;
      try {
        res.write(chunk);
      } catch (error) {
        // Called from the route's own code, long after send: ends this stream, not the process.
        edge.unsent(error, response);
        ended();
        res.destroy();
      }
    },
    // The response's own buffer and its socket's: what the client has not taken yet.
    buffered: () => (closed ? 0 : res.writableLength),
    onDrain: (fn) => {
      res.on('drain', fn);
    },
    onClose: (fn) => {
      closes.push(fn);
    },
    end,
  };
  state.onAbort = ended;
  res.on('close', ended);
  open.add(end);
  writeHead(res, response);
  res.flushHeaders();
  opener(stream);
}

/** An answer as raw HTTP/1.1 that ends its connection (no body after a HEAD's head). */
export function rawAnswer(response: OutgoingResponse, head = false): Buffer {
  const body = Buffer.from(response.body ?? '');
  const lines = [`HTTP/1.1 ${response.status} ${STATUS_CODES[response.status] ?? ''}`];
  const headers: Record<string, string> = {
    'X-Content-Type-Options': 'nosniff',
    ...response.headers,
    'Content-Length': String(body.length),
    Connection: 'close',
  };
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  for (const cookie of response.cookies ?? []) lines.push(`Set-Cookie: ${cookie}`);
  const text = Buffer.from(`${lines.join('\r\n')}\r\n\r\n`);
  return head ? text : Buffer.concat([text, body]);
}

/** An answer on a socket node:http handed over (an upgrade, a CONNECT), then closed. */
export function sendRaw(socket: Duplex, response: OutgoingResponse): void {
  if (!socket.destroyed) socket.end(rawAnswer(response));
}

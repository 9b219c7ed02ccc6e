/**
 * Writing answers on uWebSockets.js: a whole one (HEAD and bodiless statuses included), or the
 * head of a streamed one and then its body as the stream writes it. Written inside res.cork
 * (after an await, uWS would otherwise send each write alone), once, and never to a response
 * that was aborted.
 */
import { STATUS_CODES } from 'node:http';
import type { HttpResponse } from 'uWebSockets.js';
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
 * Nothing it throws escapes (the edge checked the answer, so that is a stream's opener, its
 * head written): reported, and the connection closed.
 */
export function send(
  res: HttpResponse,
  state: RequestState,
  response: OutgoingResponse,
  close: boolean,
  answering: Answering,
): void {
  try {
    const { stream } = response;
    if (stream && !state.head) openStream(res, state, response, stream, answering);
    else sendWhole(res, state, response, close);
  } catch (error) {
    answering.edge.unsent(error, response);
    res.close(); // (its onAborted ends the stream)
  }
}

function writeHead(res: HttpResponse, response: OutgoingResponse): void {
  res.writeStatus(`${response.status} ${STATUS_CODES[response.status] ?? ''}`);
  // Every answer: a browser never guesses a type we did not send (an upload served as HTML).
  res.writeHeader('X-Content-Type-Options', 'nosniff');
  for (const name in response.headers) res.writeHeader(name, response.headers[name]!);
  for (const cookie of response.cookies ?? []) res.writeHeader('Set-Cookie', cookie);
}

/** A whole answer; the connection closes after it when `close`. */
export function sendWhole(
  res: HttpResponse,
  state: { aborted: boolean; head?: boolean },
  response: OutgoingResponse,
  close: boolean,
): void {
  if (state.aborted) return;
  state.aborted = true; // a response is written once
  res.cork(() => {
    writeHead(res, response);
    // No body for 204/304; without an explicit length uWS announces a bogus one and clients wait.
    if (response.status === 204 || response.status === 304) res.endWithoutBody(0, close);
    // HEAD: the length the GET's body has, and no body (a keep-alive client would read one as
    // the next answer). The length is written by hand and endWithoutBody called with no argument:
    // given any, uWS 20.30 throws or waits for that many body bytes. The connection stays open
    // (a HEAD sent while the server closes ends with the idle connections).
    else if (state.head) {
      if (!response.stream)
        res.writeHeader('Content-Length', String(Buffer.byteLength(response.body ?? '')));
      res.endWithoutBody();
    } else if (!close && Buffer.isBuffer(response.body) && response.body.length > LARGE_BODY)
      // (A closing answer is rare, and a force-close after tryEnd could cut its tail: it is ended whole.)
      sendLarge(res, response.body);
    else res.end(response.body ?? '', close);
  });
}

/** Past this size a body goes out as the socket takes it, not copied into uWS's buffer at once. */
const LARGE_BODY = 256 * 1024;

/**
 * A large body (a 100k-task flow is tens of MB) written as the socket drains: tryEnd sends what
 * the socket takes now and keeps nothing, and each onWritable resumes from the write offset. A
 * cached body is shared by every reader of its version, so no reader costs a copy of it.
 */
function sendLarge(res: HttpResponse, body: Buffer): void {
  const start = res.getWriteOffset();
  const [, done] = res.tryEnd(body, body.length);
  if (done) return;
  res.onWritable((offset) => res.tryEnd(body.subarray(offset - start), body.length)[0]);
}

/**
 * A streamed body: the head now, then whatever the stream writes until either side ends it.
 * What the socket has not taken is the bytes written less the write offset's progress (the
 * first write carries the head, and goes out whole on a fresh response).
 */
function openStream(
  res: HttpResponse,
  state: RequestState,
  response: OutgoingResponse,
  opener: StreamOpener,
  { open, edge }: Answering,
): void {
  if (state.aborted) return;
  state.aborted = true;
  let closed = false;
  let written = 0;
  let base: number | null = null;
  const drains: (() => void)[] = [];
  const closes: (() => void)[] = [];
  const ended = () => {
    closed = true;
    open.delete(end);
    for (const fn of closes.splice(0)) fn();
  };
  const end = () => {
    if (closed) return;
    ended();
    res.cork(() => res.end());
  };
  const stream: HttpStream = {
    write(chunk) {
      if (closed) return;
      try {
        written += Buffer.byteLength(chunk);
        res.cork(() => res.write(chunk));
        base ??= res.getWriteOffset() - written;
      } catch (error) {
        // Called from the route's own code, long after send: ends this stream, not the process.
        edge.unsent(error, response);
        ended();
        res.close();
      }
    },
    buffered: () =>
      closed || base === null ? 0 : Math.max(0, written - (res.getWriteOffset() - base)),
    onDrain: (fn) => {
      drains.push(fn);
    },
    onClose: (fn) => {
      closes.push(fn);
    },
    end,
  };
  state.onAbort = () => {
    if (!closed) ended();
  };
  res.onWritable(() => {
    for (const fn of drains) fn();
    return true;
  });
  open.add(end);
  res.cork(() => {
    writeHead(res, response);
    opener(stream);
  });
}

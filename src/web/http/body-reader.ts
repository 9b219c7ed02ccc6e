/**
 * A request body, read for the edge. Nothing of it is kept until the head has been judged:
 * the socket is paused, and what arrived with the head is held only while the credential is
 * checked. Admitted, the body is kept as it arrives under the process's allowance (or, for an
 * upload, handed to the route as it arrives); refused, it is read and dropped so the client,
 * which may send it all before it reads, sees the answer. The transport hands it chunks and
 * gives it a channel to pause, resume and answer with; it knows no socket library.
 */
import { DomainError } from '../../platform/errors.ts';
import type { BodyAllowance, BodyBound, BodyHold } from './body-allowance.ts';
import { BodyStream, STREAM_WINDOW } from './body-stream.ts';
import type { Edge } from './edge.ts';
import { serverError, transportRefusal } from './failures.ts';
import type { InFlight } from './in-flight.ts';
import {
  EMPTY_BODY,
  type Admission,
  type OutgoingResponse,
  type RequestHead,
  type Verdict,
} from './request.ts';
import type { Match } from './router.ts';

/** A refused body is read and dropped up to this size, so clients that send it all before reading see the 413. */
export const DRAIN_LIMIT = 64 * 1024 * 1024;

/** Why a body was refused for room (503, Retry-After: 1). */
const BUSY: Record<BodyBound, string> = {
  process: 'Too many request bodies are being received; retry shortly',
  address: 'This address is sending too many request bodies at once; retry shortly',
  unauthenticated: 'Too many request bodies without a credential are being received; retry shortly',
};

/** A body over the route's cap (413). */
export function tooLarge(limit: number): DomainError {
  return new DomainError(
    'PAYLOAD_TOO_LARGE',
    limit === 0 ? 'This route takes no request body' : `Body exceeds ${limit} bytes`,
    { limit },
  );
}

/** The transport's side of one request: no-ops once the request is answered or abandoned. */
export interface BodyChannel {
  pause(): void;
  resume(): void;
  /** Writes the answer; the connection closes after it when `close`. */
  send(response: OutgoingResponse, close: boolean): void;
}

export interface BodyReaderDeps {
  edge: Edge;
  allowance: BodyAllowance;
  /** The request counts in flight from its head; the reader ends that when it is answered. */
  flight: InFlight;
}

/** A chunk that came with the head. */
interface Chunk {
  chunk: Buffer;
  isLast: boolean;
}

type Phase =
  /** The head is being judged; what arrived with it waits here. */
  | { kind: 'judging'; early: Chunk[] }
  /** Admitted: the body is kept as it arrives, under its hold. */
  | { kind: 'reading'; admission: Admission; hold: BodyHold; chunks: Buffer[] }
  /** Admitted upload: the body goes to the route as it arrives, at most STREAM_WINDOW waiting. */
  | { kind: 'streaming'; stream: BodyStream }
  /** Refused and answered: the rest of the declared body is read and dropped. */
  | { kind: 'dropping' }
  /**
   * Refused mid-way through a body of unknown length: read to its end and dropped before the
   * answer (answering earlier would leave no way to end the connection cleanly after a
   * bounded drain).
   */
  | { kind: 'refusing'; refusal: OutgoingResponse }
  /** The handler has the whole body, or the request was answered or abandoned. */
  | { kind: 'done' };

/** The phases in which the request waits for its body, counted in flight by the reader. */
const awaiting = (phase: Phase) =>
  phase.kind === 'judging' || phase.kind === 'reading' || phase.kind === 'refusing';

export class BodyReader {
  private phase: Phase = { kind: 'judging', early: [] };
  /** The body bytes this request holds, once admitted. */
  private hold: BodyHold | null = null;
  private size = 0;
  /** The body's last chunk has arrived (whether or not it was kept). */
  private lastSeen = false;

  constructor(
    private readonly deps: BodyReaderDeps,
    private readonly channel: BodyChannel,
    private readonly head: RequestHead,
    private readonly match: Match,
    /** The route's cap on the body. */
    private readonly limit: number,
    /** Content-Length; 0 when the body's length is unknown (chunked). */
    private readonly declared: number,
  ) {}

  /** Pauses the socket and has the edge judge the head. */
  start(): void {
    this.channel.pause();
    this.deps.edge.admit(this.head, this.match).then(
      (verdict) => this.judged(verdict),
      () => this.refuse(serverError()),
    );
  }

  /** A chunk of the body. Its memory may be reused after this call: what is kept is copied. */
  data(chunk: Uint8Array, isLast: boolean): void {
    if (isLast) this.lastSeen = true;
    const phase = this.phase;
    switch (phase.kind) {
      case 'dropping':
      case 'done':
        return;
      case 'refusing':
        this.size += chunk.byteLength;
        if (isLast || this.size > this.limit + DRAIN_LIMIT) {
          // Cut off past the drain: the connection ends, and the client is told so.
          this.phase = { kind: 'done' };
          const { refusal } = phase;
          const headers = isLast ? refusal.headers : { ...refusal.headers, Connection: 'close' };
          this.answer({ ...refusal, headers }, !isLast);
        }
        return;
      case 'judging':
        phase.early.push({ chunk: Buffer.from(chunk), isLast });
        return;
      case 'reading':
      case 'streaming':
        this.take(Buffer.from(chunk), isLast);
    }
  }

  /** The client went away. */
  abort(): void {
    this.release();
    const phase = this.phase;
    // An upload being streamed to storage ends.
    if (phase.kind === 'streaming')
      phase.stream.fail(
        new DomainError('VALIDATION_FAILED', 'The client went away before the body ended'),
      );
    if (awaiting(phase)) {
      this.phase = { kind: 'done' };
      this.deps.flight.leave();
    }
  }

  private judged(verdict: Verdict): void {
    const phase = this.phase;
    if (phase.kind !== 'judging') return; // the client went away meanwhile
    if ('refused' in verdict) return this.refuse(verdict.refused);
    const { edge, allowance } = this.deps;
    const streaming = edge.streamsBody(this.match);
    const hold = (this.hold = allowance.hold(
      this.head.remoteAddress,
      verdict.admitted.principal !== null,
    ));
    if (streaming) {
      // An upload (a credential's, past its quota check) holds its window from the start.
      const declared = this.declared;
      const bound = hold.take(declared > 0 ? Math.min(declared, STREAM_WINDOW) : STREAM_WINDOW);
      if (bound) return this.refuse(this.busy(bound));
      this.upload(verdict.admitted);
    } else this.phase = { kind: 'reading', admission: verdict.admitted, hold, chunks: [] };
    this.readOn(phase.early);
  }

  /** Hands the upload to its route as it arrives; the route answers when it has written it away. */
  private upload(admission: Admission): void {
    const { edge, flight } = this.deps;
    const stream = new BodyStream(
      () => this.channel.pause(),
      () => this.channel.resume(),
    );
    this.phase = { kind: 'streaming', stream };
    edge
      .handle({ ...this.head, body: EMPTY_BODY, bodySource: stream }, this.match, admission)
      .then(
        // Answered before the body ended (refused mid-way): the connection cannot be reused.
        (response) => this.channel.send(response, flight.closing || !this.lastSeen),
        () => this.channel.send(serverError(), true),
      )
      .finally(() => {
        stream.close();
        this.release();
        flight.leave();
      });
  }

  /** Takes what came with the head, then reads on (a complete body is being handled, its socket paused). */
  private readOn(early: Chunk[]): void {
    for (const { chunk, isLast } of early) this.take(chunk, isLast);
    const phase = this.phase;
    if (phase.kind === 'streaming') phase.stream.resumeIfRoom();
    else if (phase.kind === 'reading') this.channel.resume();
  }

  private take(chunk: Buffer, isLast: boolean): void {
    const phase = this.phase;
    if (phase.kind !== 'reading' && phase.kind !== 'streaming') return;
    this.size += chunk.byteLength;
    if (phase.kind === 'streaming') {
      if (this.size > this.limit) phase.stream.fail(tooLarge(this.limit));
      else phase.stream.push(chunk, isLast);
      return;
    }
    if (this.size > this.limit)
      return this.refuse(transportRefusal(this.head.headers, tooLarge(this.limit)));
    // Held as it arrives: a declared length that never comes holds nothing.
    const bound = phase.hold.take(chunk.byteLength);
    if (bound) return this.refuse(this.busy(bound));
    if (chunk.byteLength > 0) phase.chunks.push(chunk);
    if (isLast) this.handle(phase.chunks, phase.admission);
  }

  /** The whole body is in: the handler has it. */
  private handle(chunks: Buffer[], admission: Admission): void {
    const { edge, flight } = this.deps;
    this.phase = { kind: 'done' };
    const [only] = chunks;
    const body = chunks.length === 1 && only ? only : Buffer.concat(chunks);
    // Paused while the handler works: uWS re-arms its ~10 s idle timeout when a socket is
    // resumed, and would cut off a handler that takes longer (a large export); a paused socket
    // has none. It reads on once the answer is written.
    this.channel.pause();
    edge
      .handle({ ...this.head, body }, this.match, admission)
      .then(
        (response) => {
          this.channel.resume();
          this.channel.send(response, flight.closing);
        },
        () => {
          this.channel.resume();
          this.channel.send(serverError(), true);
        },
      )
      .finally(() => {
        this.release();
        flight.leave();
      });
  }

  /** Refused: nothing of the body is kept from here on. */
  private refuse(response: OutgoingResponse): void {
    if (!awaiting(this.phase)) return;
    this.release();
    if (this.declared > 0) {
      // Answered at once; the connection ends once the client has sent what it declared.
      this.phase = { kind: 'dropping' };
      this.channel.resume();
      this.answer({ ...response, headers: { ...response.headers, Connection: 'close' } }, false);
    } else if (this.lastSeen) {
      this.phase = { kind: 'done' };
      this.channel.resume(); // for the connection's next request
      this.answer(response, false);
    } else {
      this.phase = { kind: 'refusing', refusal: response };
      this.channel.resume();
    }
  }

  /** Answers while the body is still awaited, and ends the request's time in flight. */
  private answer(response: OutgoingResponse, close: boolean): void {
    this.channel.send(response, close);
    this.deps.flight.leave();
  }

  private busy(bound: BodyBound): OutgoingResponse {
    return transportRefusal(
      this.head.headers,
      new DomainError('SERVICE_UNAVAILABLE', BUSY[bound], undefined, { retryAfterSeconds: 1 }),
    );
  }

  /** Gives back the body bytes this request holds. */
  private release(): void {
    this.hold?.release();
  }
}

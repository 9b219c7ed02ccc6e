/**
 * An upload's body as it arrives, for the route that writes it away: the transport pushes
 * chunks in, the route reads them out, and the socket is paused while a window of them waits.
 */

/** Upload bytes one request may hold in memory before its socket is paused. */
export const STREAM_WINDOW = 2 * 1024 * 1024;

/**
 * An upload's body as an async iterable: chunks wait here until the route writes them away,
 * and the socket is paused while STREAM_WINDOW bytes wait, resumed at half of it.
 */
export class BodyStream implements AsyncIterable<Buffer> {
  private readonly queue: Buffer[] = [];
  private queued = 0;
  private ended = false;
  private error: Error | null = null;
  private paused = false;
  private wake: (() => void) | null = null;
  /** False once the body ended, failed or its reader stopped: later chunks are dropped. */
  open = true;

  constructor(
    private readonly pause: () => void,
    private readonly resume: () => void,
  ) {}

  push(chunk: Buffer, isLast: boolean): void {
    if (!this.open) return;
    if (chunk.length > 0) {
      this.queue.push(chunk);
      this.queued += chunk.length;
    }
    if (isLast) this.ended = true;
    if (!this.ended && !this.paused && this.queued >= STREAM_WINDOW) {
      this.paused = true;
      this.pause();
    } else if (this.ended && this.paused) {
      this.paused = false;
      this.resume(); // for the connection's next request
    }
    this.signal();
  }

  fail(error: Error): void {
    if (!this.open) return;
    this.error = error;
    this.open = false;
    this.signal();
  }

  /** The reader is done with it (answered): drop what waits, read nothing more into it. */
  close(): void {
    this.open = false;
    this.queue.length = 0;
    this.queued = 0;
  }

  /** After the chunks that came with the head were queued: read on unless they fill the window. */
  resumeIfRoom(): void {
    if (this.queued < STREAM_WINDOW || this.ended) this.resume();
    else this.paused = true;
  }

  private signal(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<Buffer> {
    for (;;) {
      if (this.error) throw this.error;
      const chunk = this.queue.shift();
      if (chunk) {
        this.queued -= chunk.length;
        if (this.paused && this.queued <= STREAM_WINDOW / 2) {
          this.paused = false;
          this.resume();
        }
        yield chunk;
        continue;
      }
      if (this.ended) {
        this.open = false;
        return;
      }
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }
}

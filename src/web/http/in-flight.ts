/**
 * The requests a listener has in flight, from their head until their answer (a request still
 * receiving its body counts), and its close: once closing, every answer closes its connection,
 * so keep-alive clients reconnect elsewhere instead of sending into a process about to exit;
 * the close waits until the last request in flight has been answered.
 */
import type { Foreground } from '../../platform/foreground.ts';

export class InFlight {
  private count = 0;
  private drained: (() => void) | null = null;
  /** The listener is closing: answers close their connections. */
  closing = false;

  /** `foreground`: the API's load, which webhook delivery keeps out of the way of. */
  constructor(private readonly foreground?: Foreground) {}

  enter(): void {
    this.count += 1;
    this.foreground?.enter();
  }

  leave(): void {
    this.count -= 1;
    this.foreground?.leave();
    if (this.count === 0 && this.drained) this.drained();
  }

  /** Closed and drained: a request that comes now is refused. */
  get over(): boolean {
    return this.drained !== null && this.count === 0;
  }

  /** Calls `done` when no request is in flight: at once, or when the last one is answered. */
  drain(done: () => void): void {
    this.drained = done;
    if (this.count === 0) done();
  }
}

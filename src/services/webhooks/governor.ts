import type { Foreground } from '../../platform/foreground.ts';

/** The API counts as busy when it had requests in flight more than this share of the last window. */
const BUSY_SHARE = 0.05;
const WINDOW_MS = 100;

/**
 * How many webhook deliveries may start now. A delivery mostly waits on its receiver, but
 * collecting, signing, sending and recording it costs CPU here and in Postgres, on the
 * machine the API's requests need. While the API is busy, deliveries start at most
 * `busyRate` a second, in batches of half a second's worth (a token bucket), so
 * requests keep their latency; once it quietens, the backlog goes out at full speed.
 * `busyRate` is also the floor that keeps webhooks moving under sustained load.
 */
export class Governor {
  private share = 0;
  private sampledAt = performance.now();
  private sampledBusy = 0;
  private tokens: number;
  private tokensAt = performance.now();
  private timer: NodeJS.Timeout | null = null;
  private readonly burst: number;

  constructor(
    private readonly foreground: Foreground | null,
    private readonly busyRate: number,
  ) {
    this.burst = Math.max(1, busyRate / 2);
    this.tokens = this.burst;
  }

  /** Samples the API's load every window (only processes that deliver need it). */
  start(): void {
    if (!this.foreground || this.timer) return;
    this.sampledBusy = this.foreground.busyMs();
    this.timer = setInterval(() => this.sample(), WINDOW_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  get busy(): boolean {
    return this.share > BUSY_SHARE;
  }

  /**
   * Deliveries that may start now: unbounded while the API is quiet; while it is busy, half
   * a second's worth at once or none, so each round's claim, sends and outcome transaction
   * serve a batch rather than one delivery.
   */
  allowance(): number {
    this.refill();
    if (!this.busy) return Number.POSITIVE_INFINITY;
    return this.tokens >= this.burst ? Math.floor(this.tokens) : 0;
  }

  spend(count: number): void {
    this.tokens = Math.max(0, this.tokens - count);
  }

  /** Milliseconds until the next batch may start (when the allowance is 0). */
  waitMs(): number {
    return Math.min(WINDOW_MS, Math.ceil(((this.burst - this.tokens) * 1000) / this.busyRate));
  }

  private refill(): void {
    const now = performance.now();
    this.tokens = Math.min(
      this.burst,
      this.tokens + ((now - this.tokensAt) * this.busyRate) / 1000,
    );
    this.tokensAt = now;
  }

  private sample(): void {
    const now = performance.now();
    const busy = this.foreground!.busyMs();
    this.share = (busy - this.sampledBusy) / Math.max(1, now - this.sampledAt);
    this.sampledAt = now;
    this.sampledBusy = busy;
  }
}

/**
 * How busy the API is: the time this process has had at least one request in flight. Work
 * that can wait (webhook delivery) reads it to keep out of the requests' way.
 */
export class Foreground {
  private active = 0;
  private since = 0;
  private busy = 0;

  enter(): void {
    if (this.active++ === 0) this.since = performance.now();
  }

  leave(): void {
    if (--this.active === 0) this.busy += performance.now() - this.since;
  }

  /** Milliseconds spent so far with a request in flight. */
  busyMs(): number {
    return this.busy + (this.active > 0 ? performance.now() - this.since : 0);
  }
}

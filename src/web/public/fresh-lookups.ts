/**
 * Coalesced look-ups that are never stale: a caller joins the next look-up of its key to
 * start, never one already under way, so every answer reflects every commit that finished
 * before the caller arrived (an unpublish in any process is seen at the very next request),
 * while any number of concurrent callers of one key cost at most two look-ups at a time.
 */
export class FreshLookups<T> {
  private readonly running = new Map<string, Promise<T>>();
  private readonly queued = new Map<string, Promise<T>>();

  constructor(private readonly lookUp: (key: string) => Promise<T>) {}

  get(key: string): Promise<T> {
    const queued = this.queued.get(key);
    if (queued) return queued;
    const running = this.running.get(key);
    if (!running) return this.start(key);
    const next = running.then(noop, noop).then(() => {
      this.queued.delete(key);
      return this.start(key);
    });
    this.queued.set(key, next);
    return next;
  }

  private start(key: string): Promise<T> {
    const lookUp = this.lookUp(key);
    this.running.set(key, lookUp);
    const done = () => {
      if (this.running.get(key) === lookUp) this.running.delete(key);
    };
    lookUp.then(done, done);
    return lookUp;
  }
}

function noop(): void {}

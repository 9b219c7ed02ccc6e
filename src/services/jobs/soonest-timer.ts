/**
 * At most one pending call of `fire`, at the soonest moment asked for: asking for a later one
 * while a sooner is pending changes nothing, asking for a sooner one moves it. The timer does
 * not keep the process alive.
 */
export class SoonestTimer {
  private timer: NodeJS.Timeout | null = null;
  private at = 0;

  constructor(private readonly fire: () => void) {}

  in(ms: number): void {
    const at = performance.now() + ms;
    if (this.timer && this.at <= at) return;
    this.cancel();
    this.at = at;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.fire();
    }, ms);
    this.timer.unref();
  }

  cancel(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}

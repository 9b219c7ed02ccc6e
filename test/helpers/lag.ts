/** How late this process's timers ran while something was measured. */
import { monitorEventLoopDelay } from 'node:perf_hooks';

/**
 * Runs `measure` and returns its value with the longest the event loop was held up meanwhile
 * (ms). A server in this process fires its timers at least that late on a loaded machine, so a
 * test of "on time" allows for it instead of failing on a busy machine.
 */
export async function withLoopLag<T>(measure: () => Promise<T>): Promise<{ value: T; lagMs: number }> {
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  try {
    const value = await measure();
    return { value, lagMs: delay.max / 1e6 };
  } finally {
    delay.disable();
  }
}

/** How late this process's timers and its database ran while something was measured. */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Sql } from '../../src/storage/db.ts';

/**
 * Runs `measure` and returns its value with the longest the event loop was held up meanwhile
 * (ms) and, given `sql`, the slowest round trip of a trivial query sent every 50 ms (ms). A
 * server in this process fires its timers at least the lag late on a loaded machine, and each
 * query it makes takes about the round trip, so a test of "on time" allows for both instead of
 * failing on a busy machine.
 */
export async function withLoopLag<T>(
  measure: () => Promise<T>,
  sql?: Sql,
): Promise<{ value: T; lagMs: number; roundTripMs: number }> {
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  let roundTripMs = 0;
  let probing = sql !== undefined;
  const probe = (async () => {
    while (probing) {
      const started = performance.now();
      await sql!`select 1`;
      roundTripMs = Math.max(roundTripMs, performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  })();
  try {
    const value = await measure();
    return { value, lagMs: delay.max / 1e6, roundTripMs };
  } finally {
    probing = false;
    await probe;
    delay.disable();
  }
}

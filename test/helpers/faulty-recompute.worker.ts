/**
 * A recompute worker that fails on cue, for the pool-fault tests: a flow of 13 tasks kills
 * its worker thread (an uncaught error, as a native fault would end it), a flow of 17 tasks
 * never finishes (a busy loop the timeout must end), a flow of 19 takes 1.5 s; any other runs
 * the real worker.
 */
import run from '../../workers/recompute.worker.ts';
import type { RecomputeInput } from '../../src/engine/recompute.ts';
import { markStarted, type Started } from '../../src/platform/worker-pool.ts';

export default function faulty(
  input: RecomputeInput & Started,
): ReturnType<typeof run> | Promise<never> {
  markStarted(input);
  if (input.n === 13) {
    return new Promise(() => {
      setImmediate(() => {
        throw new Error('worker crashed on cue');
      });
    });
  }
  if (input.n === 17) {
    for (;;) if (Date.now() < 0) break;
  }
  if (input.n === 19) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1500);
  return run(input);
}

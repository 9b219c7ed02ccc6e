/**
 * Where a recompute runs: in this thread for small flows, on the worker pool from
 * OFFLOAD_TASKS tasks up, so a large flow never stalls the event loop; a change derived
 * from the version before always runs in this thread. Timed, each by where it ran.
 */
import { recompute as recomputeInThread, type RecomputeInput, type RecomputeOutput } from '../../engine/recompute.ts';
import type { Histogram } from 'prom-client';
import type { RecomputePool } from './recompute-pool.ts';
import type { Recompute } from './snapshot.ts';

export function recomputeStrategy(pool: RecomputePool, offloadTasks: number, seconds: Histogram): Recompute {
  const whole = async (input: RecomputeInput): Promise<RecomputeOutput> => {
    const inThread = input.n < offloadTasks;
    const stop = seconds.startTimer({ where: inThread ? 'thread' : 'pool' });
    try {
      if (inThread) return recomputeInThread(input);
      // The pool takes the buffers by transfer; the snapshot keeps its own input.
      return await pool.run({
        ...input,
        from: input.from.slice(), to: input.to.slice(), progress: input.progress.slice(), duration: input.duration.slice(),
      });
    } finally {
      stop();
    }
  };
  const incremental = <T>(derive: () => T): T => {
    const stop = seconds.startTimer({ where: 'incremental' });
    try {
      return derive();
    } finally {
      stop();
    }
  };
  return Object.assign(whole, { incremental });
}

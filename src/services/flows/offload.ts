/**
 * Where a recompute runs: in this thread for small flows, on the worker pool from
 * OFFLOAD_TASKS tasks up (in the flow's workspace's turn), so a large flow never stalls the
 * event loop; a change derived from the version before always runs in this thread. Timed, each
 * by where it ran.
 */
import {
  recompute as recomputeInThread,
  type RecomputeInput,
  type RecomputeOutput,
} from '../../engine/recompute.ts';
import { Histogram } from 'prom-client';
import type { Metrics } from '../../platform/metrics.ts';
import type { RecomputePool } from './recompute-pool.ts';
import type { Recompute } from './snapshot.ts';

export function recomputeStrategy(
  pool: RecomputePool,
  offloadTasks: number,
  metrics: Metrics,
): Recompute {
  const seconds = new Histogram({
    name: 'flowplan_recompute_duration_seconds',
    help: 'Flow derivation time by where: a whole flow in this thread or offloaded to the pool, or incremental (a change derived from the version before, in this thread); its count is the number of derivations',
    labelNames: ['where'] as const,
    buckets: [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
    registers: [metrics.registry],
  });
  const whole = async (input: RecomputeInput, workspaceId: string): Promise<RecomputeOutput> => {
    const inThread = input.n < offloadTasks;
    const stop = seconds.startTimer({ where: inThread ? 'thread' : 'pool' });
    try {
      if (inThread) return recomputeInThread(input);
      // The pool takes the buffers by transfer; the snapshot keeps its own input.
      return await pool.run(
        {
          ...input,
          from: input.from.slice(),
          to: input.to.slice(),
          progress: input.progress.slice(),
          duration: input.duration.slice(),
        },
        workspaceId,
      );
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

/**
 * Worker-thread pool for recomputes of large flows, so a 100k-task recompute does
 * not stall the event loop. Piscina is created lazily on the first run: most
 * processes (CLI, small flows computed in-thread) never pay for worker start-up.
 */
import { Piscina } from 'piscina';
import type { Logger } from 'pino';
import { ApiError } from '../errors.ts';
import type { RecomputeInput } from '../graph/recompute.ts';
import type { WorkerOutput } from '../../workers/recompute.worker.ts';

export type { WorkerOutput as PooledRecomputeOutput };

const WORKER_URL = new URL('../../workers/recompute.worker.ts', import.meta.url);
const IDLE_TIMEOUT_MS = 30_000;

export interface RecomputePoolOptions {
  threads: number;
  timeoutMs: number;
  /** Runs allowed pending (queued or running) at once; more are refused, not queued. */
  maxInFlight: number;
  log?: Logger;
  /** The worker module (tests give one that fails on cue). */
  worker?: URL;
}

/** A refused or failed run: the client retries shortly, nothing was changed. */
const unavailable = (message: string) => new ApiError('SERVICE_UNAVAILABLE', message, undefined, { 'Retry-After': '1' });

export class RecomputePool {
  readonly #opts: RecomputePoolOptions;
  #pool: Piscina<RecomputeInput, WorkerOutput> | null = null;
  #inFlight = 0;
  #completed = 0;
  #failed = 0;

  constructor(opts: RecomputePoolOptions) {
    this.#opts = opts;
  }

  /**
   * Recompute in a worker. The input's typed-array buffers are TRANSFERRED, not
   * copied: afterwards they are detached (length 0) in the caller. A caller that
   * still needs them must pass copies (e.g. `from.slice()`). The result carries the
   * worker's `threadId`, which differs from the main thread's when the pool ran it.
   *
   * Refuses with SERVICE_UNAVAILABLE when maxInFlight runs are already pending, or
   * when a run exceeds timeoutMs: an unbounded queue would only turn overload into
   * ever-growing latency and memory, so clients are told to retry instead. A worker that
   * dies mid-run (a crash, running out of memory) or is stopped at the timeout is replaced
   * by Piscina; its run answers SERVICE_UNAVAILABLE too, since a retry may well succeed.
   */
  async run(input: RecomputeInput): Promise<WorkerOutput> {
    if (this.#inFlight >= this.#opts.maxInFlight) {
      throw unavailable('Recompute pool is saturated, retry shortly');
    }
    this.#inFlight++;
    try {
      const pool = (this.#pool ??= new Piscina({
        filename: (this.#opts.worker ?? WORKER_URL).href,
        maxThreads: this.#opts.threads,
        minThreads: 0,
        idleTimeout: IDLE_TIMEOUT_MS,
      }));
      const { from, to, progress, duration } = input;
      const transferList = [...new Set([from.buffer, to.buffer, progress.buffer, duration.buffer])] as ArrayBuffer[];
      const result = await pool.run(input, { transferList, signal: AbortSignal.timeout(this.#opts.timeoutMs) });
      this.#completed++;
      return result;
    } catch (err) {
      this.#failed++;
      if (err instanceof Error && (err.name === 'AbortError' || err.name === 'TimeoutError')) {
        this.#opts.log?.error({ n: input.n, timeoutMs: this.#opts.timeoutMs }, 'recompute timed out: its worker was stopped and is replaced');
        throw unavailable('Recompute timed out, retry shortly');
      }
      this.#opts.log?.error({ err, n: input.n }, 'recompute worker failed: it is replaced');
      throw unavailable('Recompute failed in its worker, retry shortly');
    } finally {
      this.#inFlight--;
    }
  }

  stats(): { inFlight: number; completed: number; failed: number; utilization: number; queueSize: number } {
    return {
      inFlight: this.#inFlight,
      completed: this.#completed,
      failed: this.#failed,
      utilization: this.#pool?.utilization ?? 0,
      queueSize: this.#pool?.queueSize ?? 0,
    };
  }

  /** Waits for running tasks, then stops the workers; the pool restarts lazily if used again. */
  async close(): Promise<void> {
    const pool = this.#pool;
    this.#pool = null;
    if (pool) await pool.close();
  }
}

/**
 * Worker-thread pool for recomputes of large flows, so a 100k-task recompute does
 * not stall the event loop. The server starts and warms its workers at boot (`start`), so
 * no request pays for a thread's start-up; a pool used without `start` (tests, benchmarks)
 * creates them on its first run. Workers stay up for the life of the pool.
 */
import { performance } from 'node:perf_hooks';
import { Piscina } from 'piscina';
import type { Logger } from 'pino';
import { DomainError } from '../../platform/errors.ts';
import type { Metrics } from '../../platform/metrics.ts';
import type { RecomputeInput, RecomputeOutput } from '../../engine/recompute.ts';
import type { ForecastModel, ForecastPart, ForecastRun } from '../../engine/forecast.ts';
import {
  runTimed,
  workerModule,
  type FromWorker,
  type Started,
} from '../../platform/worker-pool.ts';

type WorkerOutput = FromWorker<RecomputeOutput>;

export type { WorkerOutput as PooledRecomputeOutput };

const WORKER_URL = workerModule('../../../workers/recompute.worker.ts', import.meta.url);

/** A two-task chain: enough for a worker to load the engine and run each of its passes once. */
const warmUpInput = (): RecomputeInput => ({
  n: 2,
  from: Uint32Array.of(0),
  to: Uint32Array.of(1),
  progress: new Uint8Array(2),
  duration: Uint32Array.of(1, 1),
  withCounts: true,
});

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
const unavailable = (message: string) =>
  new DomainError('SERVICE_UNAVAILABLE', message, undefined, { retryAfterSeconds: 1 });

export class RecomputePool {
  readonly #opts: RecomputePoolOptions;
  #pool: Piscina<RecomputeInput & Started, WorkerOutput> | null = null;
  #inFlight = 0;
  #completed = 0;
  #failed = 0;

  constructor(opts: RecomputePoolOptions) {
    this.#opts = opts;
  }

  /**
   * Starts every worker and has each run a tiny recompute, so the module is loaded and
   * compiled before the first request; resolves with the time that took.
   */
  async start(): Promise<{ threads: number; ms: number }> {
    const began = performance.now();
    const pool = this.#piscina();
    await Promise.all(Array.from({ length: this.#opts.threads }, () => pool.run(warmUpInput())));
    return { threads: this.#opts.threads, ms: Math.round(performance.now() - began) };
  }

  #piscina(): Piscina<RecomputeInput & Started, WorkerOutput> {
    return (this.#pool ??= new Piscina({
      filename: (this.#opts.worker ?? WORKER_URL).href,
      maxThreads: this.#opts.threads,
      minThreads: this.#opts.threads,
      idleTimeout: Infinity,
    }));
  }

  /**
   * Recompute in a worker. The input's typed-array buffers are TRANSFERRED, not
   * copied: afterwards they are detached (length 0) in the caller. A caller that
   * still needs them must pass copies (e.g. `from.slice()`). The result carries the
   * worker's `threadId`, which differs from the main thread's when the pool ran it.
   *
   * Refuses with SERVICE_UNAVAILABLE when maxInFlight runs are already pending, or
   * when a run exceeds timeoutMs from the moment its worker began it: an unbounded queue would only turn overload into
   * ever-growing latency and memory, so clients are told to retry instead. A worker that
   * dies mid-run (a crash, running out of memory) or is stopped at the timeout is replaced
   * by Piscina; its run answers SERVICE_UNAVAILABLE too, since a retry may well succeed.
   */
  async run(input: RecomputeInput): Promise<WorkerOutput> {
    const { from, to, progress, duration } = input;
    const transferList = [
      ...new Set([from.buffer, to.buffer, progress.buffer, duration.buffer]),
    ] as ArrayBuffer[];
    return this.#dispatch(undefined, input, transferList, 'Recompute', { n: input.n });
  }

  /**
   * Samples of a forecast in a worker (the model is copied to it, not transferred: the other
   * parts' workers take it too). Refused and failed as `run` is.
   */
  async forecast(model: ForecastModel, run: ForecastRun): Promise<FromWorker<ForecastPart>> {
    return this.#dispatch('forecast', { model, run }, [], 'Forecast', {
      tasks: model.m,
      samples: run.count,
    });
  }

  /** The worker threads the pool runs: how many parts a forecast is split into. */
  get threads(): number {
    return this.#opts.threads;
  }

  async #dispatch<T extends object, R>(
    name: string | undefined,
    task: T,
    transferList: ArrayBuffer[],
    /** The run's name in messages, capitalised. */
    what: string,
    size: Record<string, number>,
  ): Promise<R> {
    if (this.#inFlight >= this.#opts.maxInFlight) {
      throw unavailable('Recompute pool is saturated, retry shortly');
    }
    this.#inFlight++;
    try {
      const result = (await runTimed(
        this.#piscina() as unknown as Piscina<T & Started, R>,
        task,
        this.#opts.timeoutMs,
        transferList,
        name,
      )) as R;
      this.#completed++;
      return result;
    } catch (err) {
      this.#failed++;
      if (err instanceof Error && err.name === 'AbortError') {
        this.#opts.log?.error(
          { ...size, timeoutMs: this.#opts.timeoutMs },
          `${what.toLowerCase()} timed out: its worker was stopped and is replaced`,
        );
        throw unavailable(`${what} timed out, retry shortly`);
      }
      this.#opts.log?.error(
        { err, ...size },
        `${what.toLowerCase()} worker failed: it is replaced`,
      );
      throw unavailable(`${what} failed in its worker, retry shortly`);
    } finally {
      this.#inFlight--;
    }
  }

  /** Its instruments, read when scraped. */
  registerMetrics(metrics: Metrics): void {
    metrics.gauge(
      'flowplan_pool_threads',
      'Recompute worker threads running (started at boot; a failed one is replaced)',
      () => this.stats().threads,
    );
    metrics.gauge(
      'flowplan_pool_utilization',
      'Recompute pool utilisation (0–1)',
      () => this.stats().utilization,
    );
    metrics.gauge(
      'flowplan_pool_queue_depth',
      'Recomputes waiting for a worker',
      () => this.stats().queueSize,
    );
    metrics.gauge(
      'flowplan_pool_in_flight',
      'Recomputes pending on the pool',
      () => this.stats().inFlight,
    );
    metrics.gauge(
      'flowplan_pool_failed_runs',
      'Recomputes whose worker crashed or timed out since start (each answered 503; the worker was replaced)',
      () => this.stats().failed,
    );
  }

  stats(): {
    threads: number;
    inFlight: number;
    completed: number;
    failed: number;
    utilization: number;
    queueSize: number;
  } {
    return {
      threads: this.#pool?.threads.length ?? 0,
      inFlight: this.#inFlight,
      completed: this.#completed,
      failed: this.#failed,
      utilization: this.#pool?.utilization ?? 0,
      queueSize: this.#pool?.queueSize ?? 0,
    };
  }

  /** Waits for running tasks, then stops the workers; a later run starts them again. */
  async close(): Promise<void> {
    const pool = this.#pool;
    this.#pool = null;
    if (pool) await pool.close();
  }
}

/**
 * Worker threads for the work that would stall the event loop, shared fairly among workspaces
 * (src/platform/fair-pool.ts): recomputes of large flows and the parts of forecasts on one set
 * of `threads`, and large what-ifs' and batches' command lists on a lane of their own, so a list
 * that takes seconds never holds a worker that recomputes and forecasts wait for. The server starts and warms the
 * workers at boot (`start`), so no request pays for a thread's start-up; a pool used without
 * `start` (tests, benchmarks) creates them on its first run. Workers stay up for the life of
 * the pool.
 */
import type { Logger } from 'pino';
import type { Metrics } from '../../platform/metrics.ts';
import type { RecomputeInput, RecomputeOutput } from '../../engine/recompute.ts';
import type { ForecastModel, ForecastPart, ForecastRun } from '../../engine/forecast.ts';
import { FairPool } from '../../platform/fair-pool.ts';
import { workerModule, type FromWorker } from '../../platform/worker-pool.ts';
import { buffersOf, type AnswerTo, type CommandsTask } from './commands-task.ts';

type WorkerOutput = FromWorker<RecomputeOutput>;

export type { WorkerOutput as PooledRecomputeOutput };

const WORKER_URL = workerModule('../../../workers/recompute.worker.ts', import.meta.url);
const COMMANDS_URL = workerModule('../../../workers/commands.worker.ts', import.meta.url);

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
  /** Runs allowed pending (queued or running) at once; more are refused, not queued. One workspace may hold half of them. */
  maxInFlight: number;
  /** The commands lane: its threads and its runs' timeout (one thread, and `timeoutMs`, unless given). */
  commands?: { threads: number; timeoutMs: number };
  log?: Logger;
  /** The worker module (tests give one that fails on cue). */
  worker?: URL;
}

/** One workspace's share of a lane's runs: half, so another workspace always finds room. */
const shareOf = (maxInFlight: number) => Math.max(1, Math.floor(maxInFlight / 2));

export class RecomputePool {
  readonly #recompute: FairPool;
  readonly #commands: FairPool;

  constructor(opts: RecomputePoolOptions) {
    this.#recompute = new FairPool({
      worker: opts.worker ?? WORKER_URL,
      threads: opts.threads,
      timeoutMs: opts.timeoutMs,
      maxInFlight: opts.maxInFlight,
      maxPerTenant: shareOf(opts.maxInFlight),
      what: 'Recompute',
      log: opts.log,
    });
    const commands = opts.commands ?? { threads: 1, timeoutMs: opts.timeoutMs };
    const listsInFlight = commands.threads * 16;
    this.#commands = new FairPool({
      worker: COMMANDS_URL,
      threads: commands.threads,
      timeoutMs: commands.timeoutMs,
      maxInFlight: listsInFlight,
      maxPerTenant: shareOf(listsInFlight),
      what: 'Command list',
      log: opts.log,
    });
  }

  /**
   * Starts every recompute worker and has each run a tiny recompute, so the module is loaded
   * and compiled before the first request; resolves with the time that took. The commands
   * lane's threads start on its first list: most processes never see one that large.
   */
  start(): Promise<{ threads: number; ms: number }> {
    return this.#recompute.start(warmUpInput);
  }

  /**
   * Recompute of `workspaceId`'s flow in a worker. The input's typed-array buffers are
   * TRANSFERRED, not copied: afterwards they are detached (length 0) in the caller. A caller
   * that still needs them must pass copies (e.g. `from.slice()`). The result carries the
   * worker's `threadId`, which differs from the main thread's when the pool ran it.
   *
   * Refused (FairPool.run) when the pool or the workspace's share of it is full; a run past the
   * timeout, or whose worker dies (a crash, running out of memory), answers SERVICE_UNAVAILABLE:
   * Piscina replaces the worker, and a retry may well succeed.
   */
  async run(input: RecomputeInput, workspaceId: string): Promise<WorkerOutput> {
    const { from, to, progress, duration } = input;
    const transferList = [
      ...new Set([from.buffer, to.buffer, progress.buffer, duration.buffer]),
    ] as ArrayBuffer[];
    return this.#recompute.run(workspaceId, { n: input.n }, (job) =>
      job<WorkerOutput>(input, transferList),
    );
  }

  /**
   * The parts of one forecast of `workspaceId`'s flow, each in a worker in the workspace's
   * turn (the model is copied to each, not transferred: the other parts take it too): one run
   * against the bounds, however many parts. Refused and failed as `run` is; a part that fails
   * fails the forecast once every part has settled.
   */
  async forecast(
    model: ForecastModel,
    runs: readonly ForecastRun[],
    workspaceId: string,
  ): Promise<FromWorker<ForecastPart>[]> {
    const samples = runs.reduce((sum, run) => sum + run.count, 0);
    return this.#recompute.run(workspaceId, { tasks: model.m, samples }, async (job) => {
      const parts = await Promise.allSettled(
        runs.map((run) => job<FromWorker<ForecastPart>>({ model, run }, [], 'forecast')),
      );
      const failed = parts.find((part) => part.status === 'rejected');
      if (failed) throw failed.reason;
      return parts.map((part) => (part as PromiseFulfilledResult<FromWorker<ForecastPart>>).value);
    });
  }

  /** A what-if's or batch's list on `workspaceId`'s flow, on the commands lane; its state chunks are moved. */
  async commands<T extends CommandsTask>(task: T, workspaceId: string): Promise<AnswerTo<T>> {
    return this.#commands.run(
      workspaceId,
      { tasks: task.size, commands: task.commands.length },
      (job) => job<AnswerTo<T>>(task, buffersOf(task.chunks)),
    );
  }

  /** The recompute worker threads: how many parts a forecast is split into at least. */
  get threads(): number {
    return this.#recompute.threads;
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
      'Recomputes and forecast parts waiting for a worker (each workspace served in turn)',
      () => this.stats().queueSize,
    );
    metrics.gauge(
      'flowplan_pool_in_flight',
      'Recomputes and forecasts pending on the pool',
      () => this.stats().inFlight,
    );
    metrics.gauge(
      'flowplan_pool_failed_runs',
      'Recomputes whose worker crashed or timed out since start (each answered 503; the worker was replaced)',
      () => this.stats().failed,
    );
    metrics.gauge(
      'flowplan_commands_pool_in_flight',
      'Large what-ifs and batches pending on their lane of the pool (running or waiting for its worker)',
      () => this.#commands.stats().inFlight,
    );
  }

  stats(): ReturnType<FairPool['stats']> {
    return this.#recompute.stats();
  }

  /** The commands lane's figures (as `stats`). */
  commandsStats(): ReturnType<FairPool['stats']> {
    return this.#commands.stats();
  }

  /** Waits for running tasks, then stops the workers; a later run starts them again. */
  async close(): Promise<void> {
    await Promise.all([this.#recompute.close(), this.#commands.close()]);
  }
}

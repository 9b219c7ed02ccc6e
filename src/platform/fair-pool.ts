/**
 * A Piscina pool whose work is shared fairly among tenants (workspaces). Runs are admitted
 * under two bounds, the whole pool's and one tenant's share of it, and refused past them rather
 * than queued without end. A run's jobs (a recompute, a forecast's parts) wait in a FairQueue
 * and are handed to Piscina only as workers come free, so Piscina's own queue stays empty and
 * the fair queue alone decides what runs next.
 */
import { performance } from 'node:perf_hooks';
import type { Transferable } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { Logger } from 'pino';
import { DomainError } from './errors.ts';
import { FairQueue } from './fair-queue.ts';
import { runTimed } from './worker-pool.ts';

export interface FairPoolOptions {
  /** The worker module. */
  worker: URL;
  threads: number;
  /** How long a job may run, counted from the moment its worker begins it. */
  timeoutMs: number;
  /** Runs admitted at once (waiting or running), every tenant's; more are refused 503. */
  maxInFlight: number;
  /** Of them, one tenant's at most; more of its are refused 429, so another always finds room. */
  maxPerTenant: number;
  /** The runs' name in messages, capitalised (`Recompute`). */
  what: string;
  log?: Logger;
}

/** What a run hands its jobs to: one task for a worker, run when the tenant's turn comes. */
export type Job = <R>(task: object, transferList?: Transferable[], name?: string) => Promise<R>;

interface Waiting {
  start(): void;
  refuse(error: Error): void;
}

/** A refused or failed job: the client retries shortly, nothing was changed. */
const unavailable = (message: string) =>
  new DomainError('SERVICE_UNAVAILABLE', message, undefined, { retryAfterSeconds: 1 });

export class FairPool {
  readonly #opts: FairPoolOptions;
  #pool: Piscina | null = null;
  readonly #queue = new FairQueue<Waiting>();
  /** Runs admitted, in all and by tenant. */
  #inFlight = 0;
  readonly #inFlightOf = new Map<string, number>();
  /** Jobs handed to Piscina and not yet settled. */
  #running = 0;
  #completed = 0;
  #failed = 0;

  constructor(opts: FairPoolOptions) {
    this.#opts = opts;
  }

  get threads(): number {
    return this.#opts.threads;
  }

  /** Starts every worker and has each run `warmUp` (loading and compiling its module); resolves with the time that took. */
  async start(warmUp: () => object): Promise<{ threads: number; ms: number }> {
    const began = performance.now();
    const pool = this.#piscina();
    await Promise.all(Array.from({ length: this.#opts.threads }, () => pool.run(warmUp())));
    return { threads: this.#opts.threads, ms: Math.round(performance.now() - began) };
  }

  #piscina(): Piscina {
    return (this.#pool ??= new Piscina({
      filename: this.#opts.worker.href,
      maxThreads: this.#opts.threads,
      minThreads: this.#opts.threads,
      idleTimeout: Infinity,
    }));
  }

  /**
   * Admits a run of `tenant`'s and calls `body` with what takes its jobs; the run counts against
   * the bounds until `body` settles. Refused at once with 503 SERVICE_UNAVAILABLE when the pool
   * holds maxInFlight runs, and with 429 RATE_LIMITED when the tenant holds its maxPerTenant.
   * `size` describes the run in the log when a job fails.
   */
  async run<T>(
    tenant: string,
    size: Record<string, number>,
    body: (job: Job) => Promise<T>,
  ): Promise<T> {
    const { what, maxInFlight, maxPerTenant } = this.#opts;
    const held = this.#inFlightOf.get(tenant) ?? 0;
    if (held >= maxPerTenant)
      throw new DomainError(
        'RATE_LIMITED',
        `This workspace has ${held} ${what.toLowerCase()}s waiting or running, its share of the pool: retry shortly`,
        { limit: maxPerTenant, retryAfter: 1 },
        { retryAfterSeconds: 1 },
      );
    if (this.#inFlight >= maxInFlight)
      throw unavailable(`${what} pool is saturated, retry shortly`);
    this.#inFlight++;
    this.#inFlightOf.set(tenant, held + 1);
    try {
      return await body((task, transferList, name) =>
        this.#job(tenant, size, task, transferList, name),
      );
    } finally {
      this.#inFlight--;
      const left = (this.#inFlightOf.get(tenant) ?? 1) - 1;
      if (left > 0) this.#inFlightOf.set(tenant, left);
      else this.#inFlightOf.delete(tenant);
    }
  }

  /** One job: queued under its tenant, run on a worker in its turn. */
  #job<R>(
    tenant: string,
    size: Record<string, number>,
    task: object,
    transferList: Transferable[] = [],
    name?: string,
  ): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.#queue.push(tenant, {
        start: () => {
          this.#running++;
          runTimed(
            this.#piscina() as Piscina<object, R>,
            task,
            this.#opts.timeoutMs,
            transferList,
            name,
          )
            .then(
              (result) => {
                this.#completed++;
                resolve(result);
              },
              (error: unknown) => {
                this.#failed++;
                reject(this.#failure(error, size));
              },
            )
            .finally(() => {
              this.#running--;
              this.#queue.done(tenant);
              this.#pump();
            });
        },
        refuse: reject,
      });
      this.#pump();
    });
  }

  /** Hands waiting jobs to free workers, each from the tenant whose turn it is. */
  #pump(): void {
    while (this.#running < this.#opts.threads) {
      const next = this.#queue.shift();
      if (!next) return;
      next.job.start();
    }
  }

  /**
   * A job that timed out (its worker was stopped) or whose worker died (a crash, out of
   * memory): Piscina replaces the worker, and the run answers SERVICE_UNAVAILABLE, since a
   * retry may well succeed.
   */
  #failure(error: unknown, size: Record<string, number>): DomainError {
    const { what, timeoutMs, log } = this.#opts;
    if (error instanceof Error && error.name === 'AbortError') {
      log?.error(
        { ...size, timeoutMs },
        `${what.toLowerCase()} timed out: its worker was stopped and is replaced`,
      );
      return unavailable(`${what} timed out, retry shortly`);
    }
    log?.error({ err: error, ...size }, `${what.toLowerCase()} worker failed: it is replaced`);
    return unavailable(`${what} failed in its worker, retry shortly`);
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
      queueSize: this.#queue.size + (this.#pool?.queueSize ?? 0),
    };
  }

  /**
   * Refuses the jobs still waiting (503), waits for the running ones, then stops the workers;
   * a later run starts them again.
   */
  async close(): Promise<void> {
    for (const waiting of this.#queue.drain())
      waiting.refuse(unavailable(`${this.#opts.what} refused: the server is shutting down`));
    const pool = this.#pool;
    this.#pool = null;
    if (pool) await pool.close();
  }
}

/**
 * Background jobs on pg-boss: one instance per process, on the same database, in its own
 * schema `pgboss`, which pg-boss creates (and upgrades) at start under its own advisory lock.
 * Why pg-boss and not our migrations: its schema belongs to its version — pg-boss ships the
 * migration from each release to the next, and copying them into sql/ would let the two drift.
 * Its check on an installed database is two small queries, so start-up stays cheap.
 *
 * pg-boss runs its queries through a `postgres` client of its own (no column transform: it
 * reads snake_case rows); `send(…, { tx })` runs the insert in the caller's transaction, so a
 * job exists exactly when the change that asked for it committed.
 */
import PgBoss from 'pg-boss';
import postgres from 'postgres';
import type { Logger } from 'pino';
import { Counter, Gauge, Histogram } from 'prom-client';
import type { Metrics } from '../../platform/metrics.ts';
import type { Db, Sql } from '../../storage/db.ts';
import { jobCounts, outboxBacklog } from '../../storage/jobs.store.ts';
import { OutboxDrainer, type OutboxHandler } from './outbox.ts';

export const JOBS_SCHEMA = 'pgboss';

export interface QueueOptions {
  /** Attempts after the first failure (default 5). */
  retryLimit?: number;
  /** Seconds before the first retry (default 5). */
  retryDelay?: number;
  /** Doubles the delay on each retry (default true). */
  retryBackoff?: boolean;
  /** A job running longer is failed and retried (default 300 s). */
  expireInSeconds?: number;
  /** pg-boss's queue policy (default `standard`); `short` keeps at most one job waiting per singleton key. */
  policy?: 'standard' | 'short';
}

export interface SendOptions {
  /** Enqueue inside this transaction: the job exists only if it commits. */
  tx?: Db;
  startAfter?: Date | number;
  /** With singletonSeconds: at most one job per key in each slot of that many seconds. */
  singletonKey?: string;
  singletonSeconds?: number;
}

export interface WorkOptions {
  batchSize?: number;
  /** How often an idle worker polls (seconds, at least 0.5; default 2). */
  pollingIntervalSeconds?: number;
}

export type JobHandler<T> = (job: { id: string; data: T; retryCount: number }) => Promise<void>;

interface Registered {
  queue: string;
  handler: JobHandler<never>;
  options: WorkOptions;
}

export class Jobs {
  private readonly boss: PgBoss;
  private readonly bossSql: postgres.Sql;
  private readonly queues = new Map<string, QueueOptions>();
  private readonly created = new Map<string, Promise<void>>();
  private readonly workers: Registered[] = [];
  private readonly schedules: { queue: string; cron: string }[] = [];
  /** Every worker of a queue (a queue may have several, to run jobs side by side). */
  private readonly workerIds = new Map<string, string[]>();
  private readonly drainer: OutboxDrainer;
  private readonly latency: Histogram;
  private readonly duration: Histogram;
  private readonly failures: Counter;
  private started = false;
  private stopRequested = false;
  /** pg-boss's client is closed (stop() ended it). */
  private closed = false;

  constructor(
    databaseUrl: string,
    sql: Sql,
    private readonly log: Logger,
    metrics: Metrics,
    /** False: enqueue only; no workers, no maintenance, no schedules, no outbox drain. */
    private readonly runWorkers: boolean,
    /** pg-boss's timekeeper: how often schedules are checked, and how soon a due one is turned into its job. */
    private readonly cronCheckSeconds = 30,
    /** The outbox drain's idle poll, behind the wake-up every event write sends. */
    outboxPollMs = 1000,
  ) {
    this.bossSql = postgres(databaseUrl, {
      max: 4,
      onnotice: () => {},
      connection: { application_name: 'flowplan-jobs' },
    });
    const db = executor(this.bossSql);
    this.boss = new PgBoss({
      // After stop() ended this client, pg-boss still has stragglers: complete()/fail() it fires
      // without awaiting (manager.js onFetch) when a handler outlived the graceful wait, and the
      // timekeeper's send-it worker, which its stop does not wait for. Their writes would reject
      // unhandled; they are left unanswered instead (the stop failed those jobs: they run again).
      db: {
        executeSql: (text, values) =>
          this.closed ? new Promise<never>(() => {}) : db.executeSql(text, values),
      },
      schema: JOBS_SCHEMA,
      supervise: runWorkers,
      schedule: runWorkers,
      cronMonitorIntervalSeconds: cronCheckSeconds,
      cronWorkerIntervalSeconds: Math.min(5, cronCheckSeconds),
      // Maintenance (expiry, archiving) every minute is plenty; pg-boss's default is the same.
      maintenanceIntervalSeconds: 60,
    });
    this.boss.on('error', (error: unknown) => log.error({ err: error }, 'job system error'));
    this.drainer = new OutboxDrainer(sql, log, outboxPollMs);
    const labelNames = ['queue'] as const;
    const registers = [metrics.registry];
    this.latency = new Histogram({
      name: 'flowplan_job_latency_seconds',
      help: 'Time from a job becoming due to a worker starting it',
      labelNames,
      registers,
      buckets: [0.05, 0.1, 0.5, 1, 2, 5, 10, 30, 60, 300],
    });
    this.duration = new Histogram({
      name: 'flowplan_job_duration_seconds',
      help: 'Time a job handler ran',
      labelNames,
      registers,
      buckets: [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30],
    });
    this.failures = new Counter({
      name: 'flowplan_job_failures_total',
      help: 'Job attempts that threw (each is retried until its limit)',
      labelNames,
      registers,
    });
    metrics.gaugeByLabels(
      'flowplan_job_queue_depth',
      'Jobs per queue and state (created, retry, active, failed…), across every process',
      ['queue', 'state'],
      async () =>
        (await jobCounts(sql)).map(({ queue, state, count }) => ({
          labels: { queue, state },
          value: count,
        })),
    );
    const backlog: Gauge = new Gauge({
      name: 'flowplan_outbox_backlog',
      help: 'Domain events not yet handed to jobs',
      registers,
      collect: async (): Promise<void> => backlog.set(await outboxBacklog(sql)),
    });
  }

  /** Declares a queue's retry rules (the queue is created in pg-boss, idempotently, on first use). */
  queue(name: string, options: QueueOptions = {}): void {
    this.queues.set(name, options);
  }

  /** Runs `handler` for each job of `queue` in this process (when workers run here). */
  work<T>(queue: string, handler: JobHandler<T>, options: WorkOptions = {}): void {
    if (!this.queues.has(queue)) this.queue(queue);
    this.workers.push({ queue, handler: handler as JobHandler<never>, options });
    if (this.started && this.runWorkers) void this.startWorker(this.workers.at(-1)!);
  }

  /** Sends a job to `queue` on a cron schedule (UTC), from one process at a time (pg-boss's timekeeper). */
  schedule(queue: string, cron: string): void {
    if (!this.queues.has(queue)) this.queue(queue);
    this.schedules.push({ queue, cron });
  }

  /** A subscriber to domain events: each batch arrives inside the transaction that marks it processed. */
  onOutbox(name: string, handler: OutboxHandler): void {
    this.drainer.subscribe(name, handler);
  }

  async send(queue: string, data: object, options: SendOptions = {}): Promise<string | null> {
    const { tx, ...rest } = options;
    if (this.closed) throw new Error('the job system is stopped');
    await this.ensureQueue(queue);
    const id = await this.boss.send(queue, data, { ...rest, ...(tx ? { db: executor(tx) } : {}) });
    // Wake this process's worker at once instead of waiting for its next poll; a job sent
    // inside a transaction is only visible after the commit, so that wake-up may find nothing.
    if (!tx && !options.startAfter) this.wake(queue);
    return id;
  }

  /** Makes every local worker of `queue` poll now (after a transaction that enqueued a job committed). */
  wake(queue: string): void {
    for (const id of this.workerIds.get(queue) ?? []) this.boss.notifyWorker(id);
  }

  async start(): Promise<void> {
    await this.boss.start();
    this.started = true;
    if (!this.runWorkers) return;
    // Queues are created when first sent to (a worker may poll one that does not exist yet),
    // which keeps start-up to pg-boss's own check; a schedule needs its queue now.
    for (const worker of this.workers) await this.startWorker(worker);
    for (const { queue, cron } of this.schedules) {
      await this.ensureQueue(queue);
      await this.boss.schedule(queue, cron, {}, { tz: 'UTC' });
    }
    this.drainer.start();
  }

  /** Whether this process runs job handlers (false: it only enqueues). */
  get runsWorkers(): boolean {
    return this.runWorkers;
  }

  /** True once stop() began: handlers that go on from job to job should finish what they hold and return. */
  get stopping(): boolean {
    return this.stopRequested;
  }

  async stop(): Promise<void> {
    this.stopRequested = true;
    await this.drainer.stop();
    // Graceful: running handlers finish (bounded), then pg-boss fails what is left so it is retried.
    await this.boss.stop({ graceful: true, wait: true, timeout: 5000, close: false });
    this.closed = true;
    await this.bossSql.end({ timeout: 5 });
  }

  /** Drains the outbox once now (tests and `flowplan jobs` use it; the loop runs it too). */
  drainOutbox(): Promise<number> {
    return this.drainer.drainAll();
  }

  /** Creates each queue once per process; concurrent callers share the one attempt. */
  private ensureQueue(name: string): Promise<void> {
    let creating = this.created.get(name);
    if (!creating) {
      creating = this.createQueue(name);
      this.created.set(name, creating);
      creating.catch(() => this.created.delete(name));
    }
    return creating;
  }

  private async createQueue(name: string): Promise<void> {
    const options = this.queues.get(name) ?? {};
    for (let attempt = 1; ; attempt++) {
      try {
        await this.boss.createQueue(name, {
          name,
          retryLimit: options.retryLimit ?? 5,
          retryDelay: options.retryDelay ?? 5,
          retryBackoff: options.retryBackoff ?? true,
          expireInSeconds: options.expireInSeconds ?? 300,
          policy: options.policy ?? 'standard',
        });
        return;
      } catch (error) {
        // Two processes creating one queue at once can deadlock (or collide) in pg-boss's DDL;
        // the loser tries again and then finds the queue there.
        const code = (error as { code?: string }).code;
        if (attempt >= 5 || (code !== '40P01' && code !== '23505')) throw error;
        await new Promise((resolve) => setTimeout(resolve, 50 * attempt));
      }
    }
  }

  private async startWorker({ queue, handler, options }: Registered): Promise<void> {
    const id = await this.boss.work<object>(
      queue,
      {
        batchSize: options.batchSize ?? 1,
        // A scheduled queue's worker polls no slower than schedules are checked.
        pollingIntervalSeconds: Math.min(
          options.pollingIntervalSeconds ?? 2,
          this.schedules.some((s) => s.queue === queue) ? this.cronCheckSeconds : Infinity,
        ),
        includeMetadata: true,
      },
      async (jobs) => {
        for (const job of jobs) {
          this.latency
            .labels(queue)
            .observe(
              Math.max(
                0,
                (job.startedOn.getTime() -
                  Math.max(job.createdOn.getTime(), job.startAfter.getTime())) /
                  1000,
              ),
            );
          const end = this.duration.labels(queue).startTimer();
          try {
            await handler({ id: job.id, data: job.data as never, retryCount: job.retryCount });
          } catch (error) {
            this.failures.labels(queue).inc();
            this.log.warn(
              { err: error, queue, jobId: job.id, retryCount: job.retryCount },
              'job failed',
            );
            throw error;
          } finally {
            end();
          }
        }
      },
    );
    this.workerIds.set(queue, [...(this.workerIds.get(queue) ?? []), id]);
  }
}

/** pg-boss's database interface over a `postgres` client or transaction. */
function executor(db: Db): {
  executeSql(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
} {
  return {
    executeSql: async (text, values) => {
      if (values)
        return {
          rows: [
            ...(await db.unsafe(
              text,
              values.map((value) => toParameter(db, value)),
            )),
          ],
        };
      // pg-boss's schema plans are scripts with their own BEGIN … COMMIT: postgres.js runs
      // those only on a connection reserved for them.
      if ('reserve' in db && /^\s*BEGIN;/.test(text)) {
        const connection = await db.reserve();
        let reusable = true;
        try {
          return { rows: [...(await connection.unsafe(text))] };
        } catch (error) {
          // A script that failed midway (another process created the schema first: pg-boss
          // expects that error) leaves its transaction open and aborted: end it before reuse.
          reusable = await connection.unsafe('ROLLBACK').then(
            () => true,
            () => false,
          );
          throw error;
        } finally {
          // A ROLLBACK fails only when the connection closed, and postgres.js has then taken it
          // back already: released as well, it would stay in the pool dead (porsager/postgres#1199).
          if (reusable) connection.release();
        }
      }
      return { rows: [...(await db.unsafe(text))] };
    },
  };
}

/** Postgres's `unknown`: a parameter declared so has its type inferred, like one left undeclared. */
const UNKNOWN_OID = 705;

/**
 * A parameter as pg-boss's own driver, node-postgres, would send it. pg-boss passes undefined
 * for unset options (postgres.js wants null), and some values already encoded, such as
 * insert()'s jobs as a JSON string for a json parameter: node-postgres sends a string as it is,
 * while postgres.js serialises a value by the type the server infers for its parameter (a
 * string for json, JSON-encoded once more, arrived as a scalar). `sql.typed` sends a string
 * already serialised; declared `unknown`, it still takes the type the server infers.
 */
function toParameter(db: Db, value: unknown): postgres.ParameterOrJSON<never> {
  if (value === undefined) return null;
  if (typeof value === 'string') return db.typed(value, UNKNOWN_OID);
  return value as postgres.ParameterOrJSON<never>;
}

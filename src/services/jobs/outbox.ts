/**
 * The outbox drainer: hands each batch of new domain events (table `outbox`, written in the
 * command's own transaction) to every subscriber inside the transaction that marks them
 * processed. A subscriber that enqueues jobs with that `tx` therefore turns each event into
 * its jobs exactly once: if anything throws, the marks and the jobs roll back together.
 *
 * One drainer runs at a time across every process (a transaction-scoped advisory lock; the
 * others skip the round). `for update skip locked` would let two processes drain adjacent
 * batches at once, and a flow's events could then reach subscribers out of commit order;
 * the drain is only a few statements per batch, so one drainer keeps up. Within a flow,
 * commits are serialised by the flow's version, so ordering by id is commit order. (Webhooks,
 * which promise that order to receivers, read events by the positions given here, after
 * commit: see src/services/webhooks/collector.ts.)
 */
import type { Logger } from 'pino';
import type { Sql, Tx } from '../../storage/db.ts';
import { listenDurably } from '../../storage/listen.ts';
import { SoonestTimer } from './soonest-timer.ts';
import { OUTBOX_CHANNEL } from '../../storage/flows.store.ts';
import {
  countDrainFailure,
  markOutboxProcessed,
  nextOutboxBatch,
  tryDrainLock,
  type OutboxRow,
} from '../../storage/jobs.store.ts';

export type OutboxEvent = OutboxRow;
export type OutboxHandler = (events: readonly OutboxEvent[], tx: Tx) => Promise<void>;

const BATCH = 200;
/**
 * Drain passes start at most this often: under a stream of commits, the events of this long
 * go as one batch (a few statements each) instead of one pass per commit. An event committed
 * after a quiet spell is drained at once.
 */
const MIN_GAP_MS = 20;
/** An event that failed this often on its own is set aside (logged, kept with its error). */
const MAX_ATTEMPTS = 5;

export class OutboxDrainer {
  private readonly subscribers: { name: string; handler: OutboxHandler }[] = [];
  private readonly timer = new SoonestTimer(() => this.poke());
  private lastStart = 0;
  private running: Promise<void> | null = null;
  private stopped = true;
  private again = false;
  private failures = 0;
  private unlisten: (() => Promise<void>) | null = null;

  constructor(
    private readonly sql: Sql,
    private readonly log: Logger,
    /** Polled this often when idle, a safety net only: every event written wakes it at commit (OUTBOX_CHANNEL). */
    private readonly idlePollMs = 1000,
  ) {}

  subscribe(name: string, handler: OutboxHandler): void {
    this.subscribers.push({ name, handler });
  }

  start(): void {
    this.stopped = false;
    listenDurably(
      this.sql,
      OUTBOX_CHANNEL,
      () => this.poke(),
      () => this.poke(),
    ).then(
      (unlisten) => {
        this.unlisten = unlisten;
      },
      (error: unknown) => this.log.warn({ err: error }, 'outbox: LISTEN failed; polling only'),
    );
    this.poke();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.timer.cancel();
    await this.running;
    await this.unlisten?.().catch(() => {});
  }

  /**
   * Drains until nothing is left (or another process holds the drain). A batch that fails is
   * retried one event at a time, so one bad event cannot hold back the rest for long.
   */
  async drainAll(): Promise<number> {
    let total = 0;
    let limit = BATCH;
    for (;;) {
      let n: number;
      try {
        n = await this.drainBatch(limit);
      } catch (error) {
        if (limit === 1) throw error;
        limit = 1;
        continue;
      }
      total += Math.max(n, 0);
      // A short batch took everything committed when it began; later commits poke again.
      if (n < limit) return total;
    }
  }

  private poke(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    const wait = this.lastStart + MIN_GAP_MS - Date.now();
    if (wait > 0) {
      this.timer.in(wait);
      return;
    }
    this.timer.cancel();
    this.lastStart = Date.now();
    this.running = this.drainAll()
      .then(
        () => {
          this.failures = 0;
        },
        (error: unknown) => {
          this.failures++;
          this.log.error({ err: error, failures: this.failures }, 'outbox drain failed; retrying');
        },
      )
      .finally(() => {
        this.running = null;
        if (this.stopped) return;
        // Back off after failures (1 s, 2 s, … up to 30 s); otherwise poll when idle.
        const delay =
          this.again && this.failures === 0
            ? 0
            : this.failures > 0
              ? Math.min(30_000, 1000 * 2 ** (this.failures - 1))
              : this.idlePollMs;
        this.again = false;
        this.timer.in(delay);
      });
  }

  /** One batch; returns how many events were handed over (0: none, or another drainer runs). */
  private async drainBatch(limit: number): Promise<number> {
    let batch: OutboxRow[] = [];
    try {
      return await this.sql.begin(async (tx) => {
        if (!(await tryDrainLock(tx))) return 0;
        batch = await nextOutboxBatch(tx, limit);
        if (batch.length === 0) return 0;
        for (const { handler } of this.subscribers) await handler(batch, tx);
        await markOutboxProcessed(tx, batch);
        return batch.length;
      });
    } catch (error) {
      if (batch.length !== 1) throw error;
      const attempts = await countDrainFailure(this.sql, [batch[0]!.id]);
      if (attempts >= MAX_ATTEMPTS) {
        // A poison event must not stop every later one: set it aside, with its error, for an operator.
        await this.sql.begin((tx) =>
          markOutboxProcessed(tx, [batch[0]!], String((error as Error).message ?? error)),
        );
        this.log.error(
          { err: error, event: batch[0] },
          'outbox event set aside after repeated failures',
        );
        return 1;
      }
      throw error;
    }
  }
}

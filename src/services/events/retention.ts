/**
 * The event log's retention: day partitions are made a week ahead (at start and every hour,
 * so a write never finds its day missing), and those past EVENT_RETENTION_DAYS are dropped
 * whole by a pg-boss job; nothing scans to delete.
 */
import type { Logger } from 'pino';
import type { Sql } from '../../storage/db.ts';
import { dropExpiredPartitions, ensureEventPartitions } from '../../storage/event-log.store.ts';
import type { Jobs } from '../jobs/jobs.ts';

const QUEUE = 'event-log-retention';
const DAYS_AHEAD = 7;

export class EventLogRetention {
  constructor(
    private readonly sql: Sql,
    private readonly retentionDays: number,
    private readonly log: Logger,
  ) {}

  /** Runs every hour on some process that runs jobs. */
  schedule(jobs: Jobs): void {
    jobs.queue(QUEUE, { retryLimit: 2 });
    jobs.work(
      QUEUE,
      async () => {
        await this.run();
      },
      { pollingIntervalSeconds: 30 },
    );
    jobs.schedule(QUEUE, '7 * * * *');
  }

  /** At start: the partitions writes need, whether or not this process runs jobs. */
  async prepare(): Promise<void> {
    const created = await ensureEventPartitions(this.sql, DAYS_AHEAD);
    if (created.length > 0) this.log.info({ created }, 'event log partitions created');
  }

  async run(now = new Date()): Promise<{ created: string[]; dropped: string[] }> {
    const created = await ensureEventPartitions(this.sql, DAYS_AHEAD, now);
    const { dropped, keptUndrained } = await dropExpiredPartitions(
      this.sql,
      this.retentionDays,
      now,
    );
    if (created.length > 0 || dropped.length > 0)
      this.log.info({ created, dropped }, 'event log retention');
    if (keptUndrained)
      this.log.warn(
        { partition: keptUndrained },
        'event log partition past retention still holds undrained events: kept',
      );
    return { created, dropped };
  }
}

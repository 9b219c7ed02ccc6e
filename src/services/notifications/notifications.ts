/**
 * Notification emails, assembled: deliveries (claim → send → sent/failed, retries), batch
 * emails from the outbox, the morning digest, and a maintenance job that fails stale claims
 * (the outbox itself is kept by the event log's retention: src/services/events).
 */
import type { Logger } from 'pino';
import type { Config } from '../../platform/config.ts';
import type { SessionRegistry } from '../flows/registry.ts';
import type { Jobs } from '../jobs/jobs.ts';
import type { Mailer } from '../mail/mailer.ts';
import type { Sql } from '../../storage/db.ts';
import { failStaleClaims } from '../../storage/notification-deliveries.store.ts';
import { BatchEmails } from './batch.job.ts';
import { Deliveries } from './deliveries.service.ts';
import { DigestEmails } from './digest.job.ts';

const MAINTENANCE_QUEUE = 'notify-maintenance';
/** A claim older than this outlived any send (SMTP timeouts are 10–30 s): its process died. */
const STALE_CLAIM_SECONDS = 15 * 60;

export class Notifications {
  readonly deliveries: Deliveries;
  readonly batches: BatchEmails;
  readonly digests: DigestEmails;

  constructor(
    private readonly deps: {
      sql: Sql;
      registry: SessionRegistry;
      jobs: Jobs;
      mailer: Mailer;
      config: Config;
      log: Logger;
    },
  ) {
    const { sql, registry, jobs, mailer, config, log } = deps;
    this.deliveries = new Deliveries(sql, mailer, jobs, config, log);
    this.batches = new BatchEmails(sql, jobs, mailer, this.deliveries, config);
    this.digests = new DigestEmails(sql, registry, jobs, mailer, this.deliveries, config);
    jobs.queue(MAINTENANCE_QUEUE, { retryLimit: 0 });
    jobs.work(MAINTENANCE_QUEUE, () => this.maintain(STALE_CLAIM_SECONDS), {
      pollingIntervalSeconds: 30,
    });
    jobs.schedule(MAINTENANCE_QUEUE, '*/5 * * * *');
  }

  async maintain(staleClaimSeconds: number): Promise<void> {
    const failed = await failStaleClaims(this.deps.sql, staleClaimSeconds);
    if (failed) this.deps.log.info({ failedStaleClaims: failed }, 'notification maintenance');
  }
}

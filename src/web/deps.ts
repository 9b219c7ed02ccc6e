/** What route modules are built from: the shared services main.ts (or a test) assembles. */
import type { Logger } from 'pino';
import type { Authenticator } from '../services/auth/authenticate.ts';
import type { Config } from '../platform/config.ts';
import type { Metrics } from '../platform/metrics.ts';
import type { Mailer } from '../services/mail/mailer.ts';
import type { Jobs } from '../services/jobs/jobs.ts';
import type { Notifications } from '../services/notifications/notifications.ts';
import type { SessionRegistry } from '../services/flows/registry.ts';
import type { RecomputePool } from '../services/flows/recompute-pool.ts';
import type { RenderService } from '../services/exports/render.service.ts';
import type { Sql } from '../platform/database.ts';
import type { WorkIndexes } from '../services/work/workspace-index.ts';
import type { WebhookDeps } from '../services/webhooks/webhooks.service.ts';
import type { Files } from '../services/files/files.service.ts';
import type { EventHub } from '../services/events/hub.ts';

export interface Services {
  readonly config: Config;
  readonly sql: Sql;
  readonly auth: Authenticator;
  readonly metrics: Metrics;
  readonly log: Logger;
  readonly registry: SessionRegistry;
  /** The worker pool: recomputes of large flows, and forecasts' samples. */
  readonly pool: RecomputePool;
  readonly work: WorkIndexes;
  /** Outgoing mail: SMTP_URL, or the local maildir. */
  readonly mailer: Mailer;
  /** pg-boss queues and the outbox drain (send, work, onOutbox). */
  readonly jobs: Jobs;
  /** Notification emails: deliveries, batches, the digest. */
  readonly notifications: Notifications;
  /** The render pool: diagram SVG, PNG and PDF drawn in worker threads. */
  readonly render: RenderService;
  /** What webhook endpoints, their deliveries and manual retries need (the dispatcher reopens retried ones). */
  readonly webhooks: WebhookDeps;
  /** Uploaded files: bounded-chunk storage and the per-workspace quota. */
  readonly files: Files;
  /** The event log's live side in this process: streams and long polls. */
  readonly events: EventHub;
}

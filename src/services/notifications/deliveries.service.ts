/**
 * Sending a delivery: the row is `claimed` (committed) before the SMTP send and becomes
 * `sent` or `failed` after, so a process that dies mid-send leaves a claim — later marked
 * failed, never resent — rather than a second copy. A failed send is retried as a new
 * delivery row (each attempt is a row), with back-off, re-checking the member's switches.
 */
import type { Static } from '@sinclair/typebox';
import type { Logger } from 'pino';
import type { DeliverySchema } from '../../contract/notification.schema.ts';
import { newId } from '../../platform/ids.ts';
import type { Config } from '../../platform/config.ts';
import type { Jobs } from '../jobs/jobs.ts';
import type { Mailer } from '../mail/mailer.ts';
import type { Sql } from '../../storage/db.ts';
import {
  finishDelivery,
  insertDelivery,
  lockDelivery,
  type DeliveryRow,
} from '../../storage/notification-deliveries.store.ts';
import { loadSettings } from '../../storage/notification-preferences.store.ts';

export const RETRY_QUEUE = 'notify-retry';
/** Attempts per email, the first included: back-off base × 4^n gives 1, 4, 16, 64 min by default. */
export const MAX_ATTEMPTS = 5;

export class Deliveries {
  constructor(
    private readonly sql: Sql,
    private readonly mailer: Mailer,
    private readonly jobs: Jobs,
    private readonly config: Config,
    private readonly log: Logger,
  ) {
    jobs.work<{ deliveryId: string }>(RETRY_QUEUE, (job) => this.retry(job.data.deliveryId));
  }

  /** Sends a claimed delivery and records the outcome; a failure schedules the next attempt. */
  async send(row: DeliveryRow): Promise<void> {
    try {
      const sent = await this.mailer.send(row.message!, row.messageId ?? undefined);
      await finishDelivery(this.sql, row.workspaceId, row.id, {
        status: 'sent',
        transport: sent.transport,
      });
    } catch (error) {
      const reason = String((error as Error).message ?? error).slice(0, 500);
      this.log.warn(
        { err: error, delivery: row.id, attempt: row.attempt },
        'notification email failed',
      );
      await finishDelivery(this.sql, row.workspaceId, row.id, { status: 'failed', reason });
      if (row.attempt < MAX_ATTEMPTS) {
        const delay = this.config.notifyRetryBaseSeconds * 4 ** (row.attempt - 1);
        await this.jobs.send(
          RETRY_QUEUE,
          { deliveryId: row.id },
          { startAfter: delay > 0 ? new Date(Date.now() + delay * 1000) : undefined },
        );
      }
    }
  }

  /** The next attempt of a failed delivery: at most once per failed row (retry_of is unique). */
  async retry(deliveryId: string): Promise<void> {
    const next = await this.sql.begin(async (tx) => {
      const failed = await lockDelivery(tx, deliveryId);
      if (!failed || failed.status !== 'failed' || !failed.message) return null;
      const settings = await loadSettings(tx, failed.workspaceId, failed.memberId);
      const wanted =
        settings.email &&
        (failed.kind === 'digest' ? settings.digest : settings.assigned || settings.unlocked);
      return insertDelivery(tx, {
        id: newId('ntd'),
        workspaceId: failed.workspaceId,
        memberId: failed.memberId,
        kind: failed.kind,
        status: wanted ? 'claimed' : 'skipped',
        reason: wanted ? null : 'switched off or unsubscribed before the retry',
        recipient: failed.recipient,
        subject: failed.subject,
        itemCount: wanted ? failed.itemCount : 0,
        flowIds: failed.flowIds,
        suppressed: wanted ? failed.suppressed : failed.suppressed + failed.itemCount,
        messageId: failed.messageId,
        message: failed.message,
        attempt: failed.attempt + 1,
        retryOf: failed.id,
      });
    });
    if (next?.status === 'claimed') await this.send(next);
  }
}

/** The public shape of a delivery (spec §2 NotificationDelivery, plus attempt details). */
export function deliveryView(row: DeliveryRow): Static<typeof DeliverySchema> {
  return {
    id: row.id,
    kind: row.kind,
    status: row.status,
    sentAt: row.createdAt.toISOString(),
    finishedAt: row.finishedAt?.toISOString() ?? null,
    subject: row.subject,
    itemCount: row.itemCount,
    flowIds: row.flowIds,
    suppressed: row.suppressed,
    reason: row.reason,
    transport: row.transport,
    messageId: row.messageId,
    attempt: row.attempt,
    retryOf: row.retryOf,
    digestDate: row.digestDate,
  };
}

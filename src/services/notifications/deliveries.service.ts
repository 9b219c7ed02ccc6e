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
  deliveryWorkspace,
  finishDelivery,
  insertDelivery,
  lockDelivery,
  type DeliveryRow,
} from '../../storage/notification-deliveries.store.ts';
import { loadSettings } from '../../storage/notification-preferences.store.ts';

export const RETRY_QUEUE = 'notify-retry';
/** Attempts per email, the first included: back-off base × 4^n gives 1, 4, 16, 64 min by default. */
export const MAX_ATTEMPTS = 5;

/**
 * A retry job's data: the failed delivery and its workspace, so the retry reads the row in its
 * workspace (one shard on a cluster, docs/scale.md). `workspaceId` is absent from jobs queued
 * before it was added (by a process of an earlier version, during or before an upgrade).
 */
export interface RetryJob {
  deliveryId: string;
  workspaceId?: string;
}

export class Deliveries {
  constructor(
    private readonly sql: Sql,
    private readonly mailer: Mailer,
    private readonly jobs: Jobs,
    private readonly config: Config,
    private readonly log: Logger,
  ) {
    jobs.work<RetryJob>(RETRY_QUEUE, (job) => this.retry(job.data));
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
        const job: RetryJob = { deliveryId: row.id, workspaceId: row.workspaceId };
        await this.jobs.send(RETRY_QUEUE, job, {
          startAfter: delay > 0 ? new Date(Date.now() + delay * 1000) : undefined,
        });
      }
    }
  }

  /** The next attempt of a failed delivery: at most once per failed row (retry_of is unique). */
  async retry({ deliveryId, workspaceId }: RetryJob): Promise<void> {
    const next = await this.sql.begin(async (tx) => {
      // A job from before the upgrade names the delivery by id only: its workspace is looked up
      // by that id first (the one read of a retry not routed by workspace, allowed by name in
      // test/routing/unroutable.json), then the row is read and retried like any other. Such
      // jobs are gone once the last one queued has run (the longest back-off is 64 times
      // NOTIFY_RETRY_BASE_SECONDS, 64 minutes by default): the fallback is for the hour after
      // an upgrade, and can go in a later release.
      const workspace = workspaceId ?? (await deliveryWorkspace(tx, deliveryId));
      const failed = workspace === null ? null : await lockDelivery(tx, workspace, deliveryId);
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

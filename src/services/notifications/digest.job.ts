/**
 * The morning digest: a tick (every minute, from pg-boss's cron in one process) finds members
 * whose local time has passed their digest hour plus their spread offset, and enqueues a job
 * per member; the job builds the digest with the same builder as the API and claims the
 * (member, local day) delivery row — unique, so at most one digest per local day, even across
 * restarts and duplicate jobs. An empty digest is recorded as `skipped-empty`, never sent.
 * Time zones and DST are Postgres's (its tz database); the clock is a parameter, for tests.
 */
import { createHash } from 'node:crypto';
import { newId } from '../../platform/ids.ts';
import type { Config } from '../../platform/config.ts';
import type { SessionRegistry } from '../flows/registry.ts';
import type { Jobs } from '../jobs/jobs.ts';
import type { Mailer } from '../mail/mailer.ts';
import type { Sql } from '../../storage/db.ts';
import { digestCandidates } from '../../storage/notification-digests.store.ts';
import { insertDelivery } from '../../storage/notification-deliveries.store.ts';
import { loadSettings } from '../../storage/notification-preferences.store.ts';
import { memberEmail } from '../../storage/members.store.ts';
import type { Deliveries } from './deliveries.service.ts';
import { buildDigest } from './digest.ts';
import { digestEmail, settingsUrl } from './email.ts';
import { unsubscribeUrl } from './unsubscribe.ts';

export const DIGEST_TICK_QUEUE = 'notify-digest-tick';
export const DIGEST_QUEUE = 'notify-digest';

interface DigestJob {
  workspaceId: string;
  memberId: string;
  localDate: string;
}

/**
 * Seconds into the digest hour this member's digest is due: a stable spread over the hour,
 * so a workspace's digests do not all leave (and hit SMTP) at one instant.
 */
export function spreadSeconds(workspaceId: string, memberId: string): number {
  return createHash('sha256').update(`${workspaceId}:${memberId}`).digest().readUInt32BE(0) % 3600;
}

export class DigestEmails {
  constructor(
    private readonly sql: Sql,
    private readonly registry: SessionRegistry,
    private readonly jobs: Jobs,
    private readonly mailer: Mailer,
    private readonly deliveries: Deliveries,
    private readonly config: Config,
  ) {
    jobs.queue(DIGEST_TICK_QUEUE, { retryLimit: 0, expireInSeconds: 120 });
    // Cron jobs appear once a minute: a slow poll is plenty.
    jobs.work(DIGEST_TICK_QUEUE, () => this.tick(new Date()).then(() => {}), {
      pollingIntervalSeconds: 10,
    });
    jobs.work<DigestJob>(DIGEST_QUEUE, (job) => this.sendDigest(job.data, new Date()));
    jobs.schedule(DIGEST_TICK_QUEUE, '* * * * *');
  }

  /** Enqueues the digests due at `now`; returns them (tests drive this with their own clock). */
  async tick(now: Date): Promise<DigestJob[]> {
    const due: DigestJob[] = [];
    for (const c of await digestCandidates(this.sql, now)) {
      // Wall-clock seconds since the digest hour began, in the member's zone.
      const sinceHour =
        (Date.parse(`${c.localNow}Z`) - Date.parse(`${c.localDate}T00:00:00Z`)) / 1000 -
        c.digestHour * 3600;
      if (sinceHour >= spreadSeconds(c.workspaceId, c.memberId))
        due.push({ workspaceId: c.workspaceId, memberId: c.memberId, localDate: c.localDate });
    }
    // The tick repeats every minute until the day's row exists: one queued job per member and day is enough.
    for (const job of due) {
      await this.jobs.send(DIGEST_QUEUE, job, {
        singletonKey: `${job.workspaceId}:${job.memberId}:${job.localDate}`,
        singletonSeconds: 3600,
      });
    }
    return due;
  }

  /** Builds and claims one member's digest for one local day; a second call for that day does nothing. */
  async sendDigest({ workspaceId, memberId, localDate }: DigestJob, now: Date): Promise<void> {
    const person = await memberEmail(this.sql, workspaceId, memberId);
    if (!person) return;
    const settings = await loadSettings(this.sql, workspaceId, memberId);
    const digest = await buildDigest(this.sql, this.registry, workspaceId, memberId, now);
    const base = {
      id: newId('ntd'),
      workspaceId,
      memberId,
      kind: 'digest' as const,
      recipient: person.email,
      digestDate: localDate,
    };
    const itemCount =
      digest.ready.length +
      digest.inProgress.length +
      digest.blocked.length +
      digest.available.length +
      digest.completed.length +
      digest.atRisk.length;
    const flowIds = [
      ...new Set(
        [
          ...digest.ready,
          ...digest.inProgress,
          ...digest.blocked,
          ...digest.available,
          ...digest.completed,
          ...digest.atRisk,
        ].map((i) => i.questId),
      ),
    ];
    let row;
    if (!settings.email || !settings.digest) {
      row = await insertDelivery(this.sql, {
        ...base,
        status: 'skipped',
        reason: 'switched off or unsubscribed',
      });
    } else if (!digest.wouldSend) {
      row = await insertDelivery(this.sql, {
        ...base,
        status: 'skipped-empty',
        reason: 'nothing worth mailing',
      });
    } else {
      const message = digestEmail(digest, {
        to: person.email,
        name: person.name,
        unsubscribeUrl: await unsubscribeUrl(
          this.sql,
          this.config.baseUrl,
          workspaceId,
          memberId,
          'digest',
        ),
        settingsUrl: settingsUrl(this.config.appUrl, workspaceId),
        appUrl: this.config.appUrl,
      });
      row = await insertDelivery(this.sql, {
        ...base,
        status: 'claimed',
        subject: message.subject,
        itemCount,
        flowIds,
        messageId: this.mailer.newMessageId(),
        message,
      });
    }
    if (row?.status === 'claimed') await this.deliveries.send(row);
  }
}

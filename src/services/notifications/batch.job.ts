/**
 * Batch emails: `task.assigned` (to the new assignee) and `task.unblocked` (to the task's
 * assignee) wait per member until NOTIFY_QUIET_SECONDS pass without a new one, and at most
 * NOTIFY_MAX_WAIT_SECONDS after the first, then go out as one email. Switches, event flags
 * and muted flows are applied when it is sent: events the member no longer wants are dropped
 * and counted in `suppressed`; a task unassigned (or reassigned, or deleted) in the meantime
 * is not mentioned at all.
 */
import { newId } from '../../platform/ids.ts';
import type { Config } from '../../platform/config.ts';
import type { Jobs } from '../jobs/jobs.ts';
import type { OutboxEvent } from '../jobs/outbox.ts';
import type { Sql, Tx } from '../../storage/db.ts';
import {
  addPending,
  currentAssignees,
  dropPendingForTask,
  extendBatchWindow,
  takeDueBatch,
  taskFacts,
} from '../../storage/notification-batches.store.ts';
import { insertDelivery, type DeliveryRow } from '../../storage/notification-deliveries.store.ts';
import { loadSettings, mutedFlows } from '../../storage/notification-preferences.store.ts';
import { memberEmail } from '../../storage/members.store.ts';
import type { Mailer } from '../mail/mailer.ts';
import type { Deliveries } from './deliveries.service.ts';
import { batchEmail, settingsUrl, type BatchItem } from './email.ts';
import { unsubscribeUrl } from './unsubscribe.ts';

export const BATCH_QUEUE = 'notify-batch';

interface Member {
  workspaceId: string;
  memberId: string;
}

export class BatchEmails {
  constructor(
    private readonly sql: Sql,
    private readonly jobs: Jobs,
    private readonly mailer: Mailer,
    private readonly deliveries: Deliveries,
    private readonly config: Config,
  ) {
    jobs.onOutbox('notification-batches', (events, tx) => this.collect(events, tx));
    jobs.work<Member>(BATCH_QUEUE, (job) => this.sendDue(job.data), {
      pollingIntervalSeconds: 0.5,
    });
  }

  /** Outbox subscriber: records the events each member will hear about and (re)times their batch. */
  async collect(events: readonly OutboxEvent[], tx: Tx): Promise<void> {
    const rows: {
      workspaceId: string;
      memberId: string;
      kind: string;
      flowId: string;
      taskId: string;
    }[] = [];
    const unblocked = events.filter((e) => e.type === 'task.unblocked');
    const assignees = await currentAssignees(
      tx,
      unblocked.map((e) => String(e.data.taskId)),
    );
    for (const e of events) {
      const flowId = String(e.data.flowId ?? e.flowId);
      const taskId = String(e.data.taskId);
      if (e.type === 'task.assigned') {
        const { assigneeId, previousAssigneeId } = e.data as {
          assigneeId: string | null;
          previousAssigneeId: string | null;
        };
        // Assigned, then unassigned before the batch went: nothing to tell the first person.
        if (previousAssigneeId) {
          await dropPendingForTask(tx, taskId, previousAssigneeId);
          for (let i = rows.length - 1; i >= 0; i--)
            if (rows[i]!.taskId === taskId && rows[i]!.memberId === previousAssigneeId)
              rows.splice(i, 1);
        }
        // Nobody is emailed about what they did themselves.
        if (assigneeId && assigneeId !== e.actorId)
          rows.push({
            workspaceId: e.workspaceId,
            memberId: assigneeId,
            kind: 'assigned',
            flowId,
            taskId,
          });
      } else if (e.type === 'task.unblocked') {
        const assigneeId = assignees.get(taskId);
        if (assigneeId)
          rows.push({
            workspaceId: e.workspaceId,
            memberId: assigneeId,
            kind: 'unlocked',
            flowId,
            taskId,
          });
      } else if (e.type === 'task.deleted') {
        await dropPendingForTask(tx, taskId, null);
        for (let i = rows.length - 1; i >= 0; i--)
          if (rows[i]!.taskId === taskId) rows.splice(i, 1);
      }
    }
    if (rows.length === 0) return;
    await addPending(tx, rows);
    const members = new Map(
      rows.map((r) => [
        `${r.workspaceId}:${r.memberId}`,
        { workspaceId: r.workspaceId, memberId: r.memberId },
      ]),
    );
    for (const member of members.values()) {
      const dueAt = await extendBatchWindow(
        tx,
        member.workspaceId,
        member.memberId,
        this.config.notifyQuietSeconds,
        this.config.notifyMaxWaitSeconds,
      );
      // One job per extension: earlier jobs find the window not yet due and do nothing.
      await this.jobs.send(BATCH_QUEUE, member, { tx, startAfter: dueAt });
    }
  }

  /** The batch job: if the member's window is due, claim its events as one delivery and send it. */
  async sendDue(member: Member): Promise<void> {
    const claimed = await this.sql.begin((tx) => this.claim(tx, member));
    if (claimed?.status === 'claimed') await this.deliveries.send(claimed);
  }

  private async claim(tx: Tx, { workspaceId, memberId }: Member): Promise<DeliveryRow | null> {
    const pending = await takeDueBatch(tx, workspaceId, memberId);
    if (!pending || pending.length === 0) return null;
    const person = await memberEmail(tx, workspaceId, memberId);
    const facts = await taskFacts(
      tx,
      pending.map((p) => p.taskId),
    );
    // Still theirs, still live, and each task once per kind.
    const seen = new Set<string>();
    const current = pending.filter((p) => {
      const task = facts.get(p.taskId);
      const key = `${p.kind}:${p.taskId}`;
      if (!task || task.assigneeId !== memberId || task.archived || seen.has(key)) return false;
      seen.add(key);
      return true;
    });
    if (current.length === 0) return null;
    const settings = await loadSettings(tx, workspaceId, memberId);
    const muted = await mutedFlows(tx, workspaceId, memberId);
    const wanted = current.filter(
      (p) => person && settings.email && settings[p.kind] && !muted.has(p.flowId),
    );
    const suppressed = current.length - wanted.length;
    const flowIds = [...new Set(wanted.map((p) => p.flowId))];
    const base = {
      id: newId('ntd'),
      workspaceId,
      memberId,
      kind: 'batch' as const,
      recipient: person?.email ?? null,
      flowIds,
      suppressed,
    };
    if (wanted.length === 0) {
      return insertDelivery(tx, {
        ...base,
        status: 'skipped',
        reason: person
          ? 'switched off, unsubscribed or muted since the events were queued'
          : 'no longer a member',
      });
    }
    const items: BatchItem[] = wanted.map((p) => ({
      kind: p.kind,
      taskId: p.taskId,
      taskName: facts.get(p.taskId)!.name,
      flowId: p.flowId,
      flowName: facts.get(p.taskId)!.flowName,
    }));
    const message = batchEmail(items, {
      to: person!.email,
      name: person!.name,
      unsubscribeUrl: await unsubscribeUrl(tx, this.config.baseUrl, workspaceId, memberId, 'batch'),
      settingsUrl: settingsUrl(this.config.appUrl, workspaceId),
      appUrl: this.config.appUrl,
    });
    return insertDelivery(tx, {
      ...base,
      status: 'claimed',
      subject: message.subject,
      itemCount: wanted.length,
      messageId: this.mailer.newMessageId(),
      message,
    });
  }
}

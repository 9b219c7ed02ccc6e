/** Notification deliveries: one row per email, claimed before the send and finished after it. */
import type { Db, Tx } from './db.ts';
import type { Page, PageRequest } from '../platform/paging.ts';
import { pageOf } from './paging.ts';

export type DeliveryStatus = 'claimed' | 'sent' | 'failed' | 'skipped' | 'skipped-empty';

export interface StoredMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
  headers: Record<string, string>;
}

export interface DeliveryRow {
  id: string;
  workspaceId: string;
  memberId: string;
  kind: 'batch' | 'digest';
  status: DeliveryStatus;
  reason: string | null;
  recipient: string | null;
  subject: string | null;
  itemCount: number;
  flowIds: string[];
  suppressed: number;
  messageId: string | null;
  transport: string | null;
  message: StoredMessage | null;
  attempt: number;
  retryOf: string | null;
  digestDate: string | null;
  createdAt: Date;
  finishedAt: Date | null;
}

export interface NewDelivery {
  id: string;
  workspaceId: string;
  memberId: string;
  kind: 'batch' | 'digest';
  status: DeliveryStatus;
  reason?: string | null;
  recipient?: string | null;
  subject?: string | null;
  itemCount?: number;
  flowIds?: string[];
  suppressed?: number;
  messageId?: string | null;
  message?: StoredMessage | null;
  attempt?: number;
  retryOf?: string | null;
  digestDate?: string | null;
}

const DELIVERY_COLUMNS =
  'id, workspace_id, member_id, kind, status, reason, recipient, subject, item_count, flow_ids, suppressed, message_id, transport, message, attempt, retry_of, digest_date::text as digest_date, created_at, finished_at';

/**
 * Inserts a delivery; a second digest for the same member and local day, or a second retry of
 * one attempt, inserts nothing and answers null (the unique keys make both at most once).
 */
export async function insertDelivery(sql: Db, d: NewDelivery): Promise<DeliveryRow | null> {
  const [row] = await sql<
    DeliveryRow[]
  >`insert into notification_deliveries (id, workspace_id, member_id, kind, status, reason, recipient, subject,
      item_count, flow_ids, suppressed, message_id, message, attempt, retry_of, digest_date, finished_at)
    values (${d.id}, ${d.workspaceId}, ${d.memberId}, ${d.kind}, ${d.status}, ${d.reason ?? null}, ${d.recipient ?? null}, ${d.subject ?? null},
      ${d.itemCount ?? 0}, ${d.flowIds ?? []}, ${d.suppressed ?? 0}, ${d.messageId ?? null}, ${d.message ? sql.json(d.message as never) : null},
      ${d.attempt ?? 1}, ${d.retryOf ?? null}, ${d.digestDate ?? null}, ${d.status === 'claimed' ? null : sql`now()`})
    on conflict do nothing
    returning ${sql.unsafe(DELIVERY_COLUMNS)}`;
  return row ?? null;
}

export async function finishDelivery(
  sql: Db,
  workspaceId: string,
  id: string,
  outcome: { status: 'sent'; transport: string } | { status: 'failed'; reason: string },
): Promise<boolean> {
  const result = await sql`update notification_deliveries set status = ${outcome.status},
      transport = ${outcome.status === 'sent' ? outcome.transport : null}, reason = ${outcome.status === 'failed' ? outcome.reason : null},
      finished_at = now()
    where id = ${id} and workspace_id = ${workspaceId} and status = 'claimed'`;
  return result.count === 1;
}

export async function lockDelivery(
  tx: Tx,
  workspaceId: string,
  id: string,
): Promise<DeliveryRow | null> {
  const [row] = await tx<
    DeliveryRow[]
  >`select ${tx.unsafe(DELIVERY_COLUMNS)} from notification_deliveries
    where id = ${id} and workspace_id = ${workspaceId} for update`;
  return row ?? null;
}

/**
 * The workspace of a delivery known by id alone (a retry job queued before jobs carried the
 * workspace): not routed by workspace, a probe of the primary key (id first) on every shard.
 */
export async function deliveryWorkspace(sql: Db, id: string): Promise<string | null> {
  const [row] = await sql<
    { workspaceId: string }[]
  >`select workspace_id from notification_deliveries where id = ${id}`;
  return row?.workspaceId ?? null;
}

/**
 * Claims that outlived any send (the process died between claim and send, or mid-send) become
 * failed, never retried: whether the mail left is unknown, and a second copy is worse than none.
 */
export async function failStaleClaims(sql: Db, olderThanSeconds: number): Promise<number> {
  const result =
    await sql`update notification_deliveries set status = 'failed', finished_at = now(),
      reason = 'interrupted: the process stopped during the send; not retried, so it is never sent twice'
    where status = 'claimed' and created_at < now() - make_interval(secs => ${olderThanSeconds})`;
  return result.count;
}

export async function pageDeliveries(
  sql: Db,
  workspaceId: string,
  memberId: string,
  page: PageRequest,
): Promise<Page<DeliveryRow>> {
  return pageOf<DeliveryRow>(
    sql,
    {
      columns: sql.unsafe(DELIVERY_COLUMNS),
      source: sql`from notification_deliveries where workspace_id = ${workspaceId} and member_id = ${memberId}`,
      order: sql`created_at desc, id desc`,
    },
    page,
  );
}

/**
 * Batch emails: the events waiting for a member (task assigned, task unblocked) and the window
 * that gathers them, with the facts of their tasks read when the batch is sent.
 */
import type { Db, Tx } from './db.ts';

export interface PendingRow {
  id: string;
  kind: 'assigned' | 'unlocked';
  flowId: string;
  taskId: string;
  createdAt: Date;
}

export async function currentAssignees(
  sql: Db,
  taskIds: readonly string[],
): Promise<Map<string, string | null>> {
  if (taskIds.length === 0) return new Map();
  const rows = await sql<
    { id: string; assigneeId: string | null }[]
  >`select id, assignee_id from tasks where id in ${sql([...new Set(taskIds)])}`;
  return new Map(rows.map((r) => [r.id, r.assigneeId]));
}

export async function addPending(
  tx: Tx,
  rows: readonly {
    workspaceId: string;
    memberId: string;
    kind: string;
    flowId: string;
    taskId: string;
  }[],
): Promise<void> {
  if (rows.length === 0) return;
  await tx`insert into notification_pending ${tx(rows.map((r) => ({ workspace_id: r.workspaceId, member_id: r.memberId, kind: r.kind, flow_id: r.flowId, task_id: r.taskId })))}`;
}

/** Drops a task's waiting events for one member (unassigned) or everyone (deleted). */
export async function dropPendingForTask(
  tx: Tx,
  taskId: string,
  memberId: string | null,
): Promise<void> {
  await tx`delete from notification_pending where task_id = ${taskId} ${memberId ? tx`and member_id = ${memberId}` : tx``}`;
}

/** Opens or extends the member's batch window; returns when it is due. */
export async function extendBatchWindow(
  tx: Tx,
  workspaceId: string,
  memberId: string,
  quietSeconds: number,
  maxWaitSeconds: number,
): Promise<Date> {
  const [row] = await tx<
    { dueAt: Date }[]
  >`insert into notification_batches (workspace_id, member_id, first_event_at, due_at)
    values (${workspaceId}, ${memberId}, now(), now() + make_interval(secs => ${quietSeconds}))
    on conflict (workspace_id, member_id) do update set
      due_at = least(now() + make_interval(secs => ${quietSeconds}), notification_batches.first_event_at + make_interval(secs => ${maxWaitSeconds}))
    returning due_at`;
  return row!.dueAt;
}

/** Closes a due window and takes its events; null while the window is still open (or gone). */
export async function takeDueBatch(
  tx: Tx,
  workspaceId: string,
  memberId: string,
): Promise<PendingRow[] | null> {
  const [window] = await tx<
    { due: boolean }[]
  >`select due_at <= now() as due from notification_batches
    where workspace_id = ${workspaceId} and member_id = ${memberId} for update`;
  if (!window?.due) return null;
  await tx`delete from notification_batches where workspace_id = ${workspaceId} and member_id = ${memberId}`;
  return tx<
    PendingRow[]
  >`delete from notification_pending where workspace_id = ${workspaceId} and member_id = ${memberId}
    returning id, kind, flow_id, task_id, created_at`;
}

export interface TaskFacts {
  id: string;
  name: string;
  flowId: string;
  flowName: string;
  assigneeId: string | null;
  archived: boolean;
  estimateHours: number | null;
}

export async function taskFacts(
  sql: Db,
  taskIds: readonly string[],
): Promise<Map<string, TaskFacts>> {
  if (taskIds.length === 0) return new Map();
  const rows = await sql<
    TaskFacts[]
  >`select t.id, t.name, t.flow_id, f.name as flow_name, t.assignee_id, f.archived, t.estimate_hours
    from tasks t join flows f on f.id = t.flow_id where t.id in ${sql([...new Set(taskIds)])}`;
  return new Map(rows.map((r) => [r.id, r]));
}

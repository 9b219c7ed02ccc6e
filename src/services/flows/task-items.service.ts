/**
 * What hangs off a task: comments, attachments (bytes in Postgres, in chunks) and required
 * deliverables. Deliverables and the files that satisfy them change the Flow, so they go
 * through the flow's session; comments and reference files do not touch its version.
 */
import type { Static } from '@sinclair/typebox';
import type {
  AttachmentQuery,
  AttachmentSchema,
  CommentSchema,
} from '../../contract/task.schema.ts';
import { DomainError, notFound, validationFailed } from '../../platform/errors.ts';
import type { Principal } from '../auth/principal.ts';
import { newId } from '../../platform/ids.ts';
import type { Files } from '../files/files.service.ts';
import type { StagedBlob } from '../../storage/blobs.store.ts';
import type { Db } from '../../storage/db.ts';
import { insertDeliverable, insertEvents } from '../../storage/flows.store.ts';
import { personName } from '../../storage/members.store.ts';
import {
  attachmentContent,
  insertAttachment,
  insertComment,
  pageAttachments,
  pageComments,
  type AttachmentRow,
  type CommentRow,
} from '../../storage/task-items.store.ts';
import { actorId } from './actor.ts';
import type { FlowContext } from './flows.service.ts';
import { PROGRESS } from './model.ts';
import { requireTask } from './tasks.service.ts';
import type { PageRequest } from '../../platform/paging.ts';

/** The task, checked to exist in a flow of the caller's workspace. */
export async function taskOf(ctx: FlowContext, flowId: string, taskId: string) {
  const snapshot = await ctx.registry.snapshot(ctx.principal.workspaceId, flowId);
  return requireTask(snapshot, taskId);
}

async function authorName(ctx: FlowContext, principal: Principal): Promise<string | null> {
  return principal.userId ? personName(ctx.sql, principal.userId) : principal.credentialName;
}

const commentView = (row: CommentRow): Static<typeof CommentSchema> => ({
  id: row.id,
  taskId: row.taskId,
  authorId: row.authorId,
  authorName: row.authorName,
  body: row.body,
  createdAt: row.createdAt.toISOString(),
});

export async function addComment(ctx: FlowContext, flowId: string, taskId: string, body: string) {
  await taskOf(ctx, flowId, taskId);
  const name = await authorName(ctx, ctx.principal);
  const row = await ctx.sql.begin(async (tx) => {
    const created = await insertComment(tx, {
      id: newId('cmt'),
      workspaceId: ctx.principal.workspaceId,
      taskId,
      flowId,
      authorId: actorId(ctx.principal),
      authorName: name,
      body,
    });
    await insertEvents(tx, ctx.principal.workspaceId, flowId, actorId(ctx.principal), [
      { type: 'comment.created', data: { flowId, taskId, commentId: created.id } },
    ]);
    return created;
  });
  return commentView(row);
}

export async function listComments(
  ctx: FlowContext,
  flowId: string,
  taskId: string,
  page: PageRequest,
) {
  await taskOf(ctx, flowId, taskId);
  const { total, items } = await pageComments(ctx.sql, ctx.principal.workspaceId, taskId, page);
  return { total, items: items.map(commentView) };
}

export async function listAttachments(
  ctx: FlowContext,
  flowId: string,
  taskId: string,
  page: PageRequest,
) {
  await taskOf(ctx, flowId, taskId);
  const { total, items } = await pageAttachments(ctx.sql, ctx.principal.workspaceId, taskId, page);
  return { total, items: items.map(attachmentView) };
}

export async function attachmentFile(
  ctx: FlowContext,
  flowId: string,
  taskId: string,
  attachmentId: string,
) {
  await taskOf(ctx, flowId, taskId);
  const file = await attachmentContent(ctx.sql, ctx.principal.workspaceId, taskId, attachmentId);
  if (!file) throw notFound('Attachment');
  return file;
}

const attachmentView = (row: AttachmentRow): Static<typeof AttachmentSchema> => ({
  id: row.id,
  name: row.name,
  mimeType: row.mimeType,
  sizeBytes: row.sizeBytes,
  kind: row.kind,
  deliverableId: row.deliverableId,
  uploadedAt: row.uploadedAt.toISOString(),
});

export interface Upload extends Static<typeof AttachmentQuery> {
  mimeType: string;
  /** The bytes, already written to storage as they arrived; the attachment row takes them over. */
  blob: StagedBlob;
}

export async function addAttachment(
  ctx: FlowContext,
  files: Files,
  flowId: string,
  taskId: string,
  upload: Upload,
) {
  const row = (id: string) => ({
    id,
    workspaceId: ctx.principal.workspaceId,
    taskId,
    flowId,
    name: upload.name,
    mimeType: upload.mimeType,
    sizeBytes: upload.blob.sizeBytes,
    kind: upload.kind,
    deliverableId: upload.deliverableId ?? null,
    blobId: upload.blob.blobId,
    uploadedBy: actorId(ctx.principal),
  });
  const store = async (tx: Db) => {
    await files.claimRoom(tx, ctx.principal.workspaceId, upload.blob.sizeBytes);
    return insertAttachment(tx, row(newId('att')));
  };
  if (upload.kind === 'reference') {
    if (upload.deliverableId !== undefined)
      throw validationFailed([
        { in: 'query', pointer: '/deliverableId', message: 'goes with kind=deliverable' },
      ]);
    await taskOf(ctx, flowId, taskId);
    return attachmentView(await ctx.sql.begin(store));
  }
  // Handing in a deliverable changes the task's requiredDeliverables: a new flow version.
  const session = await ctx.registry.get(ctx.principal.workspaceId, flowId);
  return session.run((current) => {
    const task = requireTask(current, taskId);
    const deliverable = task.deliverables.find((d) => d.id === upload.deliverableId);
    if (!deliverable)
      throw validationFailed([
        {
          in: 'query',
          pointer: '/deliverableId',
          message: 'names no required deliverable of this task',
        },
      ]);
    const updated = {
      ...task,
      deliverables: task.deliverables.map((d) =>
        d.id === deliverable.id ? { ...d, satisfied: true } : d,
      ),
    };
    let created: AttachmentRow | null = null;
    return {
      next: current.next({ replace: [updated] }),
      write: async (tx) => {
        created = await store(tx);
      },
      events: [
        { type: 'task.updated', data: { flowId, taskId, changes: ['requiredDeliverables'] } },
      ],
      result: () => attachmentView(created!),
    };
  }, actorId(ctx.principal));
}

export async function addDeliverable(
  ctx: FlowContext,
  flowId: string,
  taskId: string,
  name: string,
) {
  const session = await ctx.registry.get(ctx.principal.workspaceId, flowId);
  const id = newId('dlv');
  return session.run((current) => {
    const task = requireTask(current, taskId);
    if (task.progress === PROGRESS.done)
      throw new DomainError('INVALID_TRANSITION', 'The task is done: reopen it to require more', {
        status: 'done',
      });
    const deliverable = { id, name, satisfied: false };
    const updated = { ...task, deliverables: [...task.deliverables, deliverable] };
    return {
      next: current.next({ replace: [updated] }),
      write: (tx) => insertDeliverable(tx, current.flow.workspaceId, flowId, taskId, deliverable),
      events: [
        { type: 'task.updated', data: { flowId, taskId, changes: ['requiredDeliverables'] } },
      ],
      result: () => deliverable,
    };
  }, actorId(ctx.principal));
}

/** Comments and attachments of tasks. */
import { readBlob } from './blobs.store.ts';
import type { Db } from './db.ts';
import type { Page, PageRequest } from '../platform/paging.ts';
import { pageOf } from './paging.ts';

export interface CommentRow {
  id: string;
  taskId: string;
  authorId: string;
  authorName: string | null;
  body: string;
  createdAt: Date;
}

export async function insertComment(
  sql: Db,
  row: Omit<CommentRow, 'createdAt'> & { workspaceId: string; flowId: string },
): Promise<CommentRow> {
  const [created] = await sql<
    CommentRow[]
  >`insert into comments (id, workspace_id, task_id, flow_id, author_id, author_name, body)
    values (${row.id}, ${row.workspaceId}, ${row.taskId}, ${row.flowId}, ${row.authorId}, ${row.authorName}, ${row.body})
    returning id, task_id, author_id, author_name, body, created_at`;
  return created!;
}

export async function pageComments(
  sql: Db,
  workspaceId: string,
  taskId: string,
  page: PageRequest,
): Promise<Page<CommentRow>> {
  return pageOf<CommentRow>(
    sql,
    {
      columns: sql`id, task_id, author_id, author_name, body, created_at`,
      source: sql`from comments where task_id = ${taskId} and workspace_id = ${workspaceId}`,
      order: sql`created_at, id`,
    },
    page,
  );
}

export interface AttachmentRow {
  id: string;
  taskId: string;
  name: string;
  mimeType: string;
  sizeBytes: number;
  kind: 'reference' | 'deliverable';
  deliverableId: string | null;
  uploadedAt: Date;
}

const attachmentColumns = (sql: Db) =>
  sql`id, task_id, name, mime_type, size_bytes::int as size_bytes, kind, deliverable_id, uploaded_at`;

export async function insertAttachment(
  sql: Db,
  /** `blobId`: the staged upload (blobs.store.ts) this row takes over. */
  row: Omit<AttachmentRow, 'uploadedAt'> & {
    workspaceId: string;
    flowId: string;
    blobId: string;
    uploadedBy: string;
  },
): Promise<AttachmentRow> {
  const [created] = await sql<AttachmentRow[]>`insert into attachments
      (id, workspace_id, task_id, flow_id, name, mime_type, size_bytes, kind, deliverable_id, blob_id, uploaded_by)
    values (${row.id}, ${row.workspaceId}, ${row.taskId}, ${row.flowId}, ${row.name}, ${row.mimeType}, ${row.sizeBytes}, ${row.kind},
            ${row.deliverableId}, ${row.blobId}, ${row.uploadedBy})
    returning ${attachmentColumns(sql)}`;
  return created!;
}

export async function pageAttachments(
  sql: Db,
  workspaceId: string,
  taskId: string,
  page: PageRequest,
): Promise<Page<AttachmentRow>> {
  return pageOf<AttachmentRow>(
    sql,
    {
      columns: attachmentColumns(sql),
      source: sql`from attachments where task_id = ${taskId} and workspace_id = ${workspaceId}`,
      order: sql`uploaded_at, id`,
    },
    page,
  );
}

export async function attachmentContent(
  sql: Db,
  workspaceId: string,
  taskId: string,
  id: string,
): Promise<{ name: string; mimeType: string; content: Buffer } | null> {
  const [row] = await sql<
    { name: string; mimeType: string; content: Buffer | null; blobId: string | null }[]
  >`select name, mime_type, content, blob_id
    from attachments where id = ${id} and task_id = ${taskId} and workspace_id = ${workspaceId}`;
  if (!row) return null;
  return {
    name: row.name,
    mimeType: row.mimeType,
    content: row.content ?? (await readBlob(sql, workspaceId, row.blobId ?? '')),
  };
}

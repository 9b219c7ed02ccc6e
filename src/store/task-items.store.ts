/** Comments and attachments of tasks. */
import type { Db } from './db.ts';

export interface CommentRow {
  id: string;
  taskId: string;
  authorId: string;
  authorName: string | null;
  body: string;
  createdAt: Date;
}

export async function insertComment(sql: Db, row: Omit<CommentRow, 'createdAt'> & { flowId: string }): Promise<CommentRow> {
  const [created] = await sql<CommentRow[]>`insert into comments (id, task_id, flow_id, author_id, author_name, body)
    values (${row.id}, ${row.taskId}, ${row.flowId}, ${row.authorId}, ${row.authorName}, ${row.body})
    returning id, task_id, author_id, author_name, body, created_at`;
  return created!;
}

export async function pageComments(sql: Db, taskId: string, size: number, from: number): Promise<{ total: number; items: CommentRow[] }> {
  const [count] = await sql<{ total: number }[]>`select count(*)::int as total from comments where task_id = ${taskId}`;
  const items = await sql<CommentRow[]>`select id, task_id, author_id, author_name, body, created_at from comments
    where task_id = ${taskId} order by created_at, id limit ${size} offset ${from}`;
  return { total: count!.total, items };
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

const attachmentColumns = (sql: Db) => sql`id, task_id, name, mime_type, size_bytes::int as size_bytes, kind, deliverable_id, uploaded_at`;

export async function insertAttachment(
  sql: Db,
  row: Omit<AttachmentRow, 'uploadedAt'> & { flowId: string; content: Buffer; uploadedBy: string },
): Promise<AttachmentRow> {
  const [created] = await sql<AttachmentRow[]>`insert into attachments
      (id, task_id, flow_id, name, mime_type, size_bytes, kind, deliverable_id, content, uploaded_by)
    values (${row.id}, ${row.taskId}, ${row.flowId}, ${row.name}, ${row.mimeType}, ${row.sizeBytes}, ${row.kind},
            ${row.deliverableId}, ${row.content}, ${row.uploadedBy})
    returning ${attachmentColumns(sql)}`;
  return created!;
}

export async function pageAttachments(sql: Db, taskId: string, size: number, from: number): Promise<{ total: number; items: AttachmentRow[] }> {
  const [count] = await sql<{ total: number }[]>`select count(*)::int as total from attachments where task_id = ${taskId}`;
  const items = await sql<AttachmentRow[]>`select ${attachmentColumns(sql)} from attachments
    where task_id = ${taskId} order by uploaded_at, id limit ${size} offset ${from}`;
  return { total: count!.total, items };
}

export async function attachmentContent(sql: Db, taskId: string, id: string): Promise<{ name: string; mimeType: string; content: Buffer } | null> {
  const [row] = await sql<{ name: string; mimeType: string; content: Buffer }[]>`select name, mime_type, content
    from attachments where id = ${id} and task_id = ${taskId}`;
  return row ?? null;
}

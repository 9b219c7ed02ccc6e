/**
 * Uploaded bytes, written in bounded chunks as they arrive: a 25 MiB file never sits whole in
 * the process while it is received. A blob is staged first (`stageBlob`), then taken over by
 * the file row that names it (`blob_id` of attachments and idea_attachments) in that row's own
 * transaction; `discardUnadopted` removes a staged blob no row took (a refused or failed
 * request), `sweepOrphanBlobs` what no row names any more: left by a process that died
 * mid-upload, or by a file deleted with its task, idea or flow.
 */
import { createHash } from 'node:crypto';
import { newId } from '../platform/ids.ts';
import type { Db, Sql } from './db.ts';

/** Bytes per stored chunk: what one upload holds in memory before it is written. */
export const BLOB_CHUNK_BYTES = 1024 * 1024;

export interface StagedBlob {
  blobId: string;
  sizeBytes: number;
  /** Of the whole content, hex: the request hash of an upload with an Idempotency-Key. */
  sha256: string;
}

export async function stageBlob(
  sql: Sql,
  workspaceId: string,
  source: AsyncIterable<Buffer> | Iterable<Buffer>,
): Promise<StagedBlob> {
  const blobId = newId('blb');
  const digest = createHash('sha256');
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let seq = 0;
  let sizeBytes = 0;
  const flush = async () => {
    const data = pending.length === 1 ? pending[0]! : Buffer.concat(pending);
    pending = [];
    pendingBytes = 0;
    await sql`insert into blob_chunks (blob_id, workspace_id, seq, data)
      values (${blobId}, ${workspaceId}, ${seq++}, ${data})`;
  };
  try {
    for await (const chunk of source) {
      digest.update(chunk);
      sizeBytes += chunk.length;
      pending.push(chunk);
      pendingBytes += chunk.length;
      if (pendingBytes >= BLOB_CHUNK_BYTES) await flush();
    }
    if (pendingBytes > 0 || seq === 0) await flush();
  } catch (error) {
    await sql`delete from blob_chunks where blob_id = ${blobId} and workspace_id = ${workspaceId}`.catch(
      () => {},
    );
    throw error;
  }
  return { blobId, sizeBytes, sha256: digest.digest('hex') };
}

export async function readBlob(sql: Db, workspaceId: string, blobId: string): Promise<Buffer> {
  const rows = await sql<
    { data: Buffer }[]
  >`select data from blob_chunks where blob_id = ${blobId} and workspace_id = ${workspaceId}
    order by seq`;
  return rows.length === 1 ? rows[0]!.data : Buffer.concat(rows.map((row) => row.data));
}

/** Removes a staged blob unless a file row took it over. */
export async function discardUnadopted(
  sql: Db,
  workspaceId: string,
  blobId: string,
): Promise<void> {
  await sql`delete from blob_chunks c where c.blob_id = ${blobId} and c.workspace_id = ${workspaceId}
    and not exists (select 1 from attachments a where a.blob_id = ${blobId} and a.workspace_id = c.workspace_id)
    and not exists (select 1 from idea_attachments i where i.blob_id = ${blobId} and i.workspace_id = c.workspace_id)`;
}

/** Removes blobs staged longer ago than `olderThanSeconds` that no file row took over; returns how many. */
export async function sweepOrphanBlobs(sql: Db, olderThanSeconds: number): Promise<number> {
  const removed = await sql`delete from blob_chunks c using (
      select f.blob_id, f.workspace_id from blob_chunks f
      where f.seq = 0 and f.created_at < now() - make_interval(secs => ${olderThanSeconds})
        and not exists (select 1 from attachments a where a.blob_id = f.blob_id and a.workspace_id = f.workspace_id)
        and not exists (select 1 from idea_attachments i where i.blob_id = f.blob_id and i.workspace_id = f.workspace_id)
    ) o where c.blob_id = o.blob_id and c.workspace_id = o.workspace_id returning 1`;
  return removed.length;
}

/** Bytes of files a workspace stores: its flows' attachments and its brainstorms' idea files. */
export async function workspaceFileBytes(sql: Db, workspaceId: string): Promise<number> {
  const [row] = await sql<{ bytes: string }[]>`select
      coalesce((select sum(a.size_bytes) from attachments a where a.workspace_id = ${workspaceId}), 0)
    + coalesce((select sum(i.size_bytes) from idea_attachments i where i.workspace_id = ${workspaceId}), 0) as bytes`;
  return Number(row!.bytes);
}

/** Holds the workspace's row until the transaction ends, so concurrent uploads judge the quota one at a time. */
export async function lockWorkspaceFiles(tx: Db, workspaceId: string): Promise<void> {
  await tx`select 1 from workspaces where id = ${workspaceId} for update`;
}

/** Every workspace's stored file bytes, largest first (for /metrics). */
export async function fileBytesByWorkspace(
  sql: Db,
  limit: number,
): Promise<{ workspaceId: string; bytes: number }[]> {
  const rows = await sql<
    { workspaceId: string; bytes: string }[]
  >`select workspace_id, sum(bytes) as bytes from (
      select a.workspace_id, a.size_bytes as bytes from attachments a
      union all
      select i.workspace_id, i.size_bytes from idea_attachments i
    ) files group by workspace_id order by 2 desc limit ${limit}`;
  return rows.map((row) => ({ workspaceId: row.workspaceId, bytes: Number(row.bytes) }));
}

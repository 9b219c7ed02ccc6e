/** The public views' look-up: which flow a published token names, right now. */
import type { Db } from './db.ts';

export interface PublishedFlowRow {
  id: string;
  workspaceId: string;
  version: number;
}

/**
 * The live flow published under the token whose sha256 is `tokenHash`, or null. Run on every
 * public request (one probe of a unique index), so an unpublish or an archive in any process
 * is seen at the next one. An archived flow keeps its token: a restore brings the link back.
 */
export async function publishedFlow(sql: Db, tokenHash: string): Promise<PublishedFlowRow | null> {
  const [row] = await sql<PublishedFlowRow[]>`select id, workspace_id, version::int as version
    from flows where public_token_hash = ${tokenHash} and not archived`;
  return row ?? null;
}

/** The public views' look-up: which flow a published token names, right now. */
import type { Db } from './db.ts';

export interface PublishedFlowRow {
  id: string;
  workspaceId: string;
  version: number;
}

/**
 * The flow published under `token`, or null. Run on every public request (one probe of the
 * unique index on `public_token`), so an unpublish in any process is seen at the next one.
 */
export async function publishedFlow(sql: Db, token: string): Promise<PublishedFlowRow | null> {
  const [row] = await sql<PublishedFlowRow[]>`select id, workspace_id, version::int as version
    from flows where public_token = ${token}`;
  return row ?? null;
}

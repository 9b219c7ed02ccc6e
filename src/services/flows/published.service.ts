/**
 * Published flows as the public views read them: which flow a token's hash names (and at what
 * version), and that flow at that version or newer, from the hot session when it is current.
 */
import type { Sql } from '../../storage/db.ts';
import { loadFlowState } from '../../storage/flows.store.ts';
import { publishedFlow, type PublishedFlowRow } from '../../storage/public.store.ts';
import type { SessionRegistry } from './registry.ts';
import type { Snapshot } from './snapshot.ts';

export type { PublishedFlowRow };

/** The flow published under the token whose sha256 is `tokenHash`, or null. */
export function findPublishedFlow(sql: Sql, tokenHash: string): Promise<PublishedFlowRow | null> {
  return publishedFlow(sql, tokenHash);
}

/** The flow at the version Postgres just reported, or newer (this process may not have heard of it yet). */
export async function publishedSnapshot(
  sql: Sql,
  registry: SessionRegistry,
  row: PublishedFlowRow,
): Promise<Snapshot | null> {
  const hot = await registry.snapshot(row.workspaceId, row.id);
  if (hot.version >= row.version) return hot;
  const state = await loadFlowState(sql, row.workspaceId, row.id);
  return state ? registry.derive(state) : null;
}

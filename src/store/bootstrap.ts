/** The first start on an empty database creates the Demo workspace and its admin key (CONTRACT §0). */
import { SCOPES } from '../auth/principal.ts';
import { createKey, createWorkspace } from '../auth/provision.ts';
import type { Sql } from './db.ts';

const LOCK_KEY = 7_046_231_902; // arbitrary, fixed: "flowplan bootstrap"

/** Returns the new admin key, or null when the database already had a workspace. */
export async function bootstrapDemo(sql: Sql): Promise<{ workspaceId: string; key: string } | null> {
  return sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${LOCK_KEY})`;
    const [existing] = await tx`select 1 from workspaces limit 1`;
    if (existing) return null;
    const { id } = await createWorkspace(tx, { name: 'Demo', plan: 'pro' });
    const { key } = await createKey(tx, { workspaceId: id, role: 'admin', scopes: [...SCOPES], name: 'Demo admin key' });
    return { workspaceId: id, key };
  });
}

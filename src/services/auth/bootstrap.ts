/**
 * The first start on an empty database creates the Demo workspace, its admin key (CONTRACT §0)
 * and a demo person who owns it, so that the web app has someone to sign in as.
 */
import { randomBytes } from 'node:crypto';
import { SCOPES } from './principal.ts';
import { createKey, createUser, createWorkspace } from './provision.ts';
import { hashPassword } from './secrets.ts';
import type { Sql } from '../../storage/db.ts';

const LOCK_KEY = 7_046_231_902; // arbitrary, fixed: "flowplan bootstrap"

/** `.localhost` never reaches anyone's mailbox (RFC 6761), and the app accepts it as an address. */
export const DEMO_EMAIL = 'demo@flowplan.localhost';

export interface Demo {
  workspaceId: string;
  /** The admin API key, every scope. */
  key: string;
  /** The owner of the Demo workspace, for the web app; null when the start was asked not to create one. */
  person: { email: string; password: string } | null;
}

/**
 * Returns what it created, or null when the database already had a workspace. Secrets are
 * returned once: only their hashes are stored.
 */
export async function bootstrapDemo(
  sql: Sql,
  options: { person?: boolean } = {},
): Promise<Demo | null> {
  // A password hash at the floor costs 1-2 s of CPU: made only when this looks like a first
  // start, and before the transaction, so that the lock is held for milliseconds. Two first
  // starts at once both hash; one of them creates.
  const [seen] = await sql`select 1 from workspaces limit 1`;
  if (seen) return null;
  const password = options.person === false ? null : randomBytes(12).toString('base64url');
  const passwordHash = password === null ? null : await hashPassword(password);
  return sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(${LOCK_KEY})`;
    const [existing] = await tx`select 1 from workspaces limit 1`;
    if (existing) return null;
    const { id } = await createWorkspace(tx, { name: 'Demo', plan: 'pro' });
    const { key } = await createKey(tx, {
      workspaceId: id,
      role: 'admin',
      scopes: [...SCOPES],
      name: 'Demo admin key',
    });
    let person: Demo['person'] = null;
    if (password !== null && passwordHash !== null) {
      const { created } = await createUser(tx, {
        email: DEMO_EMAIL,
        name: 'Demo Owner',
        passwordHash,
        workspaceId: id,
        role: 'owner',
      });
      // An account kept from before (every workspace deleted since) keeps its own password.
      if (created) person = { email: DEMO_EMAIL, password };
    }
    return { workspaceId: id, key, person };
  });
}

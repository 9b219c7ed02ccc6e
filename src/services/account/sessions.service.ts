/**
 * The web app's sign-in sessions as stored: only the hash of a session id is kept, so a leaked
 * table signs no one in. The cookies that carry the id are the web app's (src/web/app/session.ts).
 */
import { notMember } from '../../platform/errors.ts';
import type { Db } from '../../storage/db.ts';
import {
  deleteSession,
  findSession,
  insertSession,
  memberRole,
  setSessionWorkspace,
  type SessionRow,
} from '../../storage/people.store.ts';
import { newSecret, sha256 } from '../auth/secrets.ts';

export type { SessionRow };

export const SESSION_SECONDS = 12 * 3600;

/** The live session a presented id names, with its hash; null for a malformed, unknown or expired id. */
export async function liveSession(
  sql: Db,
  id: string | undefined,
): Promise<{ sessionHash: string; session: SessionRow } | null> {
  if (!id || !/^fpx_[A-Za-z0-9_-]{43}$/.test(id)) return null;
  const sessionHash = sha256(id);
  const session = await findSession(sql, sessionHash);
  return session ? { sessionHash, session } : null;
}

/** A new session for the person, ending the one the browser had (rotation); returns the new id. */
export async function openSession(
  sql: Db,
  previousHash: string | null,
  userId: string,
  workspaceId: string | null,
): Promise<string> {
  if (previousHash) await deleteSession(sql, previousHash);
  const id = newSecret('fpx');
  await insertSession(sql, {
    idHash: sha256(id),
    userId,
    workspaceId,
    expiresAt: new Date(Date.now() + SESSION_SECONDS * 1000),
  });
  return id;
}

/** Points the session at another of the person's workspaces; 404 for one they do not belong to. */
export async function chooseWorkspace(
  sql: Db,
  sessionHash: string,
  userId: string,
  workspaceId: string,
): Promise<void> {
  if (!(await memberRole(sql, workspaceId, userId))) throw notMember();
  await setSessionWorkspace(sql, sessionHash, workspaceId);
}

export async function closeSession(sql: Db, sessionHash: string): Promise<void> {
  await deleteSession(sql, sessionHash);
}

/**
 * One-click unsubscribe (RFC 8058): an opaque link per member and kind. `batch` turns off
 * `assigned` and `unlocked`; `digest` turns off `digest`. The link is the only credential.
 */
import { randomBytes } from 'node:crypto';
import type { Db, Sql } from '../../storage/db.ts';
import { findUnsubscribe, unsubscribeToken } from '../../storage/notification-unsubscribe.store.ts';
import { lockSettings, saveSettings } from '../../storage/notification-preferences.store.ts';

export type UnsubscribeKind = 'batch' | 'digest';

export async function unsubscribeUrl(
  sql: Db,
  baseUrl: string,
  workspaceId: string,
  memberId: string,
  kind: UnsubscribeKind,
): Promise<string> {
  const token = await unsubscribeToken(
    sql,
    workspaceId,
    memberId,
    kind,
    randomBytes(24).toString('base64url'),
  );
  return `${baseUrl}/unsubscribe/${token}`;
}

/** What a link unsubscribes from (for the confirmation page), or null for an unknown link. */
export async function describeUnsubscribe(
  sql: Sql,
  token: string,
): Promise<{ kind: UnsubscribeKind; email: string } | null> {
  const found = await findUnsubscribe(sql, token);
  return found ? { kind: found.kind, email: found.email } : null;
}

/** Applies the link; repeating it is harmless. Null for an unknown link. */
export async function unsubscribe(
  sql: Sql,
  token: string,
): Promise<{ kind: UnsubscribeKind; email: string } | null> {
  const found = await findUnsubscribe(sql, token);
  if (!found) return null;
  await sql.begin(async (tx) => {
    const current = await lockSettings(tx, found.workspaceId, found.memberId);
    await saveSettings(
      tx,
      found.workspaceId,
      found.memberId,
      found.kind === 'batch'
        ? { ...current, assigned: false, unlocked: false }
        : { ...current, digest: false },
    );
  });
  return { kind: found.kind, email: found.email };
}

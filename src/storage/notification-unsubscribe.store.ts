/** Unsubscribe links: one token per member and kind of email, kept across emails. */
import type { Db } from './db.ts';

export async function unsubscribeToken(
  sql: Db,
  workspaceId: string,
  memberId: string,
  kind: 'batch' | 'digest',
  fresh: string,
): Promise<string> {
  const [row] = await sql<
    { token: string }[]
  >`insert into notification_unsubscribe (token, workspace_id, member_id, kind)
    values (${fresh}, ${workspaceId}, ${memberId}, ${kind})
    on conflict (workspace_id, member_id, kind) do update set kind = excluded.kind
    returning token`;
  return row!.token;
}

export async function findUnsubscribe(
  sql: Db,
  token: string,
): Promise<{
  workspaceId: string;
  memberId: string;
  kind: 'batch' | 'digest';
  email: string;
} | null> {
  const [row] = await sql<
    { workspaceId: string; memberId: string; kind: 'batch' | 'digest'; email: string }[]
  >`select n.workspace_id, n.member_id, n.kind, u.email
    from notification_unsubscribe n join users u on u.id = n.member_id where n.token = ${token}`;
  return row ?? null;
}

/**
 * People: authorization requests and codes, token families with rotating refresh tokens,
 * web-app sessions and sign-in throttling. Secrets are looked up by their sha256 only.
 */
import type { Db } from './db.ts';
import type {
  InviteStatus,
  MemberRole,
  Plan,
  Role,
  Scope,
  ShareRole,
} from '../contract/vocabulary.ts';
import { AUTH_CHANNEL } from './credentials.store.ts';

// ── authorization requests ───────────────────────────────────────────────────────────

export interface AuthRequestRow {
  clientId: string;
  clientName: string | null;
  redirectUri: string;
  codeChallenge: string;
  state: string | null;
  scopes: Scope[];
}

export async function insertAuthRequest(
  sql: Db,
  row: Omit<AuthRequestRow, 'clientName'> & { handleHash: string; expiresAt: Date },
): Promise<void> {
  await sql`insert into oauth_requests (handle_hash, client_id, redirect_uri, code_challenge, state, scopes, expires_at)
    values (${row.handleHash}, ${row.clientId}, ${row.redirectUri}, ${row.codeChallenge}, ${row.state}, ${row.scopes}, ${row.expiresAt})`;
  // Expired requests are cleared by whoever writes the next one: they hold nothing secret.
  await sql`delete from oauth_requests where expires_at < now() - interval '1 hour'`;
}

/** A live request of a client that still exists and is not revoked; null otherwise. */
export async function findAuthRequest(sql: Db, handleHash: string): Promise<AuthRequestRow | null> {
  const [row] = await sql<
    AuthRequestRow[]
  >`select r.client_id, c.name as client_name, r.redirect_uri, r.code_challenge, r.state, r.scopes
    from oauth_requests r join credentials c on c.id = r.client_id
    where r.handle_hash = ${handleHash} and r.expires_at > now() and c.revoked_at is null`;
  return row ?? null;
}

/** Consumes the request (one consent or refusal per authorize call). */
export async function takeAuthRequest(sql: Db, handleHash: string): Promise<AuthRequestRow | null> {
  const [row] = await sql<AuthRequestRow[]>`delete from oauth_requests r using credentials c
    where r.handle_hash = ${handleHash} and c.id = r.client_id and r.expires_at > now() and c.revoked_at is null
    returning r.client_id, c.name as client_name, r.redirect_uri, r.code_challenge, r.state, r.scopes`;
  return row ?? null;
}

// ── families, codes, refresh tokens ─────────────────────────────────────────────────

export async function insertFamily(
  sql: Db,
  row: { id: string; clientId: string; userId: string },
): Promise<void> {
  await sql`insert into token_families (id, client_id, user_id) values (${row.id}, ${row.clientId}, ${row.userId})`;
}

/** Ends a family: every refresh and access token of it stops working; other processes hear it. */
export async function revokeFamily(sql: Db, familyId: string): Promise<void> {
  await sql`update token_families set revoked_at = coalesce(revoked_at, now()) where id = ${familyId}`;
  await sql`update refresh_tokens set revoked_at = coalesce(revoked_at, now()) where family_id = ${familyId}`;
  await sql`update access_tokens set revoked_at = coalesce(revoked_at, now()) where family_id = ${familyId}`;
  await sql`select pg_notify(${AUTH_CHANNEL}, '')`;
}

export interface CodeRow {
  familyId: string;
  clientId: string;
  userId: string;
  workspaceId: string;
  redirectUri: string;
  codeChallenge: string;
  scopes: Scope[];
  expiresAt: Date;
  usedAt: Date | null;
}

export async function insertCode(
  sql: Db,
  row: Omit<CodeRow, 'usedAt'> & { codeHash: string },
): Promise<void> {
  await sql`insert into oauth_codes (code_hash, family_id, client_id, user_id, workspace_id, redirect_uri, code_challenge, scopes, expires_at)
    values (${row.codeHash}, ${row.familyId}, ${row.clientId}, ${row.userId}, ${row.workspaceId}, ${row.redirectUri},
            ${row.codeChallenge}, ${row.scopes}, ${row.expiresAt})`;
  // A day after expiry a code can no longer be replayed usefully: its family is long settled.
  await sql`delete from oauth_codes where expires_at < now() - interval '1 day'`;
}

/** The code, locked until the transaction ends, with the time it was first used (if it was). */
export async function lockCode(sql: Db, codeHash: string): Promise<CodeRow | null> {
  const [row] = await sql<
    CodeRow[]
  >`select family_id, client_id, user_id, workspace_id, redirect_uri, code_challenge, scopes,
      expires_at, used_at
    from oauth_codes where code_hash = ${codeHash} for update`;
  return row ?? null;
}

export async function markCodeUsed(sql: Db, codeHash: string): Promise<void> {
  await sql`update oauth_codes set used_at = now() where code_hash = ${codeHash}`;
}

export interface RefreshRow {
  id: string;
  familyId: string;
  clientId: string;
  userId: string;
  workspaceId: string;
  scopes: Scope[];
  rotatedAt: Date | null;
  revokedAt: Date | null;
  familyRevokedAt: Date | null;
  clientRevokedAt: Date | null;
  expiresAt: Date;
}

export async function insertRefreshToken(
  sql: Db,
  row: {
    id: string;
    hash: string;
    familyId: string;
    workspaceId: string;
    scopes: Scope[];
    expiresAt: Date;
  },
): Promise<void> {
  await sql`insert into refresh_tokens (id, token_hash, family_id, workspace_id, scopes, expires_at)
    values (${row.id}, ${row.hash}, ${row.familyId}, ${row.workspaceId}, ${row.scopes}, ${row.expiresAt})`;
}

/** The refresh token, locked until the transaction ends (two racing refreshes serialize here). */
export async function lockRefreshToken(sql: Db, hash: string): Promise<RefreshRow | null> {
  const [row] = await sql<
    RefreshRow[]
  >`select r.id, r.family_id, f.client_id, f.user_id, r.workspace_id, r.scopes,
      r.rotated_at, r.revoked_at, f.revoked_at as family_revoked_at, c.revoked_at as client_revoked_at, r.expires_at
    from refresh_tokens r join token_families f on f.id = r.family_id join credentials c on c.id = f.client_id
    where r.token_hash = ${hash} for update of r`;
  return row ?? null;
}

export async function markRefreshRotated(sql: Db, id: string): Promise<void> {
  await sql`update refresh_tokens set rotated_at = now() where id = ${id}`;
}

/** The family of a refresh token, when the given client issued it. */
export async function findFamilyOfToken(
  sql: Db,
  hash: string,
  clientId: string,
): Promise<string | null> {
  const [row] = await sql<{ familyId: string }[]>`
    select r.family_id from refresh_tokens r join token_families f on f.id = r.family_id
    where r.token_hash = ${hash} and f.client_id = ${clientId}`;
  return row?.familyId ?? null;
}

// ── people and memberships ──────────────────────────────────────────────────────────

export async function memberRole(
  sql: Db,
  workspaceId: string,
  userId: string,
): Promise<MemberRole | null> {
  const [row] = await sql<
    { role: MemberRole }[]
  >`select role from memberships where workspace_id = ${workspaceId} and user_id = ${userId}`;
  return row?.role ?? null;
}

export interface PersonRow {
  id: string;
  email: string;
  name: string;
}

export async function findPerson(sql: Db, id: string): Promise<PersonRow | null> {
  const [row] = await sql<PersonRow[]>`select id, email, name from users where id = ${id}`;
  return row ?? null;
}

// ── web-app sessions ────────────────────────────────────────────────────────────────

export interface SessionRow {
  userId: string;
  workspaceId: string | null;
  email: string;
  name: string;
}

export async function insertSession(
  sql: Db,
  row: { idHash: string; userId: string; workspaceId: string | null; expiresAt: Date },
): Promise<void> {
  await sql`insert into app_sessions (id_hash, user_id, workspace_id, expires_at)
    values (${row.idHash}, ${row.userId}, ${row.workspaceId}, ${row.expiresAt})`;
  // Expired sessions of this person go when they sign in again.
  await sql`delete from app_sessions where user_id = ${row.userId} and expires_at < now()`;
}

export async function findSession(sql: Db, idHash: string): Promise<SessionRow | null> {
  const [row] = await sql<SessionRow[]>`select s.user_id, s.workspace_id, u.email, u.name
    from app_sessions s join users u on u.id = s.user_id
    where s.id_hash = ${idHash} and s.expires_at > now()`;
  return row ?? null;
}

export async function setSessionWorkspace(
  sql: Db,
  idHash: string,
  workspaceId: string,
): Promise<void> {
  await sql`update app_sessions set workspace_id = ${workspaceId} where id_hash = ${idHash}`;
}

export async function deleteSession(sql: Db, idHash: string): Promise<void> {
  await sql`delete from app_sessions where id_hash = ${idHash}`;
}

// ── invite links ────────────────────────────────────────────────────────────────────

export interface InviteLinkRow {
  id: string;
  workspaceId: string;
  workspaceName: string;
  email: string;
  role: Role;
  status: InviteStatus;
  expiresAt: Date | null;
  hasAccount: boolean;
}

export async function findInviteByToken(sql: Db, tokenHash: string): Promise<InviteLinkRow | null> {
  const [row] = await sql<
    InviteLinkRow[]
  >`select i.id, i.workspace_id, w.name as workspace_name, i.email, i.role, i.status, i.expires_at,
      exists (select 1 from users u where lower(u.email) = lower(i.email)) as has_account
    from invites i join workspaces w on w.id = i.workspace_id
    where i.token_hash = ${tokenHash}`;
  return row ?? null;
}

/** Gives a pending invite a new single-use link (the previous link stops working). */
export async function setInviteToken(
  sql: Db,
  inviteId: string,
  tokenHash: string,
  expiresAt: Date,
): Promise<void> {
  await sql`update invites set token_hash = ${tokenHash}, expires_at = ${expiresAt} where id = ${inviteId}`;
}

// ── guests ──────────────────────────────────────────────────────────────────────────

export interface FlowShareRow {
  workspaceId: string;
  workspaceName: string;
  plan: Plan;
  pastDue: boolean;
  /** The person's share of the flow (by their account's email); null when they have none. */
  role: ShareRole | null;
}

export async function flowShareOf(
  sql: Db,
  flowId: string,
  userId: string,
): Promise<FlowShareRow | null> {
  const [row] = await sql<
    FlowShareRow[]
  >`select f.workspace_id, w.name as workspace_name, w.plan, w.past_due,
      (select s.role from shares s join users u on lower(u.email) = lower(s.email)
        where s.flow_id = f.id and u.id = ${userId}) as role
    from flows f join workspaces w on w.id = f.workspace_id
    where f.id = ${flowId}`;
  return row ?? null;
}

/** A flow of another workspace shared with a person (by their account's email), as their guest list shows it. */
export interface SharedFlowRow {
  flowId: string;
  flowName: string;
  workspaceName: string;
  role: ShareRole;
}

/** The live flows shared with a person outside the workspaces they belong to, by name. */
export async function sharedFlowsOf(sql: Db, userId: string): Promise<SharedFlowRow[]> {
  return sql<
    SharedFlowRow[]
  >`select f.id as flow_id, f.name as flow_name, w.name as workspace_name, s.role
    from users u
    join shares s on lower(s.email) = lower(u.email)
    join flows f on f.id = s.flow_id and not f.archived
    join workspaces w on w.id = f.workspace_id
    where u.id = ${userId}
      and not exists (select 1 from memberships m where m.user_id = u.id and m.workspace_id = f.workspace_id)
    order by lower(f.name), f.id`;
}

// ── ending a person's sign-ins (flowplan user set-password) ─────────────────────────

/**
 * Ends everything a person signed in with: web-app sessions, every token family (so no refresh
 * token issues more, rotated ones included), their person tokens, and codes not yet exchanged.
 * Returns how many were live: sessions, and sign-ins (families with a usable refresh token).
 */
export async function endSigninsOf(
  sql: Db,
  userId: string,
): Promise<{ sessions: number; signins: number }> {
  const sessions = await sql<
    { live: boolean }[]
  >`delete from app_sessions where user_id = ${userId} returning expires_at > now() as live`;
  const [live] = await sql<{ count: number }[]>`select count(distinct r.family_id)::int as count
    from refresh_tokens r join token_families f on f.id = r.family_id
    where f.user_id = ${userId} and f.revoked_at is null and r.revoked_at is null and r.rotated_at is null and r.expires_at > now()`;
  await sql`update token_families set revoked_at = now() where user_id = ${userId} and revoked_at is null`;
  await sql`update refresh_tokens set revoked_at = now()
    where family_id in (select id from token_families where user_id = ${userId}) and revoked_at is null`;
  await sql`update access_tokens set revoked_at = now() where user_id = ${userId} and revoked_at is null`;
  // A code is exchanged without looking at its family: one issued a moment ago must not outlive this.
  await sql`update oauth_codes set expires_at = least(expires_at, now()) where user_id = ${userId} and used_at is null`;
  await sql`select pg_notify(${AUTH_CHANNEL}, '')`;
  return { sessions: sessions.filter((row) => row.live).length, signins: live!.count };
}

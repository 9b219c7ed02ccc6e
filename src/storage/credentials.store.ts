/** Credentials (API keys, OAuth clients), access tokens and the principals they resolve to. */
import type { Db, Sql } from './db.ts';
import type { Plan, Role, Scope, MemberRole } from '../contract/vocabulary.ts';

export interface CredentialRow {
  id: string;
  workspaceId: string;
  kind: 'key' | 'client';
  name: string | null;
  role: Role;
  scopes: Scope[];
  secretHash: string | null;
  firstParty: boolean;
  redirectUris: string[];
  revokedAt: Date | null;
}

export interface PrincipalRow {
  workspaceId: string;
  workspaceName: string;
  plan: Plan;
  pastDue: boolean;
  credentialId: string;
  credentialName: string | null;
  credentialKind: 'key' | 'client';
  credentialRole: Role;
  credentialRevokedAt: Date | null;
  scopes: Scope[];
  tokenId: string | null;
  tokenRevokedAt: Date | null;
  expiresAt: Date | null;
  userId: string | null;
  memberRole: MemberRole | null;
}

/** Channel on which every process drops its cached principals (revocation, plan change). */
export const AUTH_CHANNEL = 'flowplan_auth';

export async function announceAuthChange(sql: Db): Promise<void> {
  await sql`select pg_notify(${AUTH_CHANNEL}, '')`;
}

export async function insertCredential(
  sql: Db,
  row: Omit<CredentialRow, 'revokedAt'>,
): Promise<void> {
  await sql`insert into credentials (id, workspace_id, kind, name, role, scopes, secret_hash, first_party, redirect_uris)
    values (${row.id}, ${row.workspaceId}, ${row.kind}, ${row.name}, ${row.role}, ${row.scopes},
            ${row.secretHash}, ${row.firstParty}, ${row.redirectUris})`;
}

/** Revokes a credential and every token it issued; false when no such credential. */
export async function revokeCredential(sql: Sql, id: string): Promise<boolean> {
  return sql.begin(async (tx) => {
    const rows =
      await tx`update credentials set revoked_at = coalesce(revoked_at, now()) where id = ${id} returning id`;
    if (rows.length === 0) return false;
    await tx`update access_tokens set revoked_at = coalesce(revoked_at, now()) where credential_id = ${id}`;
    await tx`select pg_notify(${AUTH_CHANNEL}, '')`;
    return true;
  });
}

export async function findClient(sql: Db, id: string): Promise<CredentialRow | null> {
  const [row] = await sql<
    CredentialRow[]
  >`select id, workspace_id, kind, name, role, scopes, secret_hash,
      first_party, redirect_uris, revoked_at
    from credentials where id = ${id} and kind = 'client'`;
  return row ?? null;
}

export async function findKeyPrincipal(sql: Db, hash: string): Promise<PrincipalRow | null> {
  const [row] = await sql<
    PrincipalRow[]
  >`select w.id as workspace_id, w.name as workspace_name, w.plan, w.past_due,
      c.id as credential_id, c.name as credential_name, c.kind as credential_kind, c.role as credential_role,
      c.revoked_at as credential_revoked_at, c.scopes, null as token_id, null as token_revoked_at,
      null as expires_at, null as user_id, null as member_role
    from credentials c join workspaces w on w.id = c.workspace_id
    where c.kind = 'key' and c.secret_hash = ${hash}`;
  return row ?? null;
}

export async function findTokenPrincipal(sql: Db, hash: string): Promise<PrincipalRow | null> {
  const [row] = await sql<
    PrincipalRow[]
  >`select w.id as workspace_id, w.name as workspace_name, w.plan, w.past_due,
      c.id as credential_id, c.name as credential_name, c.kind as credential_kind, c.role as credential_role,
      c.revoked_at as credential_revoked_at, t.scopes, t.id as token_id, t.revoked_at as token_revoked_at,
      t.expires_at, t.user_id, m.role as member_role
    from access_tokens t
      join credentials c on c.id = t.credential_id
      join workspaces w on w.id = t.workspace_id
      left join memberships m on m.workspace_id = t.workspace_id and m.user_id = t.user_id
    where t.token_hash = ${hash}`;
  return row ?? null;
}

export async function insertAccessToken(
  sql: Db,
  token: {
    id: string;
    hash: string;
    workspaceId: string;
    credentialId: string;
    userId: string | null;
    scopes: Scope[];
    expiresAt: Date;
    /** Person tokens: the sign-in's token family, so revoking the family ends them. */
    familyId?: string;
  },
): Promise<void> {
  await sql`insert into access_tokens (id, token_hash, workspace_id, credential_id, user_id, scopes, expires_at, family_id)
    values (${token.id}, ${token.hash}, ${token.workspaceId}, ${token.credentialId}, ${token.userId},
            ${token.scopes}, ${token.expiresAt}, ${token.familyId ?? null})`;
}

/** Revokes the access token with this hash, if it belongs to the given client. */
export async function revokeAccessToken(sql: Db, hash: string, clientId: string): Promise<boolean> {
  const rows = await sql`update access_tokens set revoked_at = coalesce(revoked_at, now())
    where token_hash = ${hash} and credential_id = ${clientId} returning id`;
  if (rows.length > 0) await announceAuthChange(sql);
  return rows.length > 0;
}

/** A person token's live state: whether it (or its client) was revoked, and the person's role now. */
export async function personTokenState(
  sql: Db,
  tokenId: string,
): Promise<{ revoked: boolean; memberRole: MemberRole | null } | null> {
  const [row] = await sql<{ revoked: boolean; memberRole: MemberRole | null }[]>`
    select (t.revoked_at is not null or c.revoked_at is not null) as revoked, m.role as member_role
    from access_tokens t
      join credentials c on c.id = t.credential_id
      left join memberships m on m.workspace_id = t.workspace_id and m.user_id = t.user_id
    where t.id = ${tokenId}`;
  return row ?? null;
}

export interface CredentialListRow {
  id: string;
  kind: 'key' | 'client';
  name: string | null;
  role: Role;
  scopes: Scope[];
  firstParty: boolean;
  redirectUris: string[];
  createdAt: Date;
}

/**
 * The workspace's live keys and clients, oldest first (the app's API access page). First-party
 * clients are not among them: they belong to the installation (listFirstPartyClients).
 */
export async function listCredentials(sql: Db, workspaceId: string): Promise<CredentialListRow[]> {
  return sql<
    CredentialListRow[]
  >`select id, kind, name, role, scopes, first_party, redirect_uris, created_at
    from credentials where workspace_id = ${workspaceId} and revoked_at is null and not first_party order by created_at, id`;
}

/** The installation's live first-party clients, oldest first: people of every workspace sign in through them. */
export async function listFirstPartyClients(sql: Db): Promise<CredentialListRow[]> {
  return sql<
    CredentialListRow[]
  >`select id, kind, name, role, scopes, first_party, redirect_uris, created_at
    from credentials where kind = 'client' and first_party and revoked_at is null order by created_at, id`;
}

/** Who a live credential belongs to: the workspace that registered it, and whether it is first-party. */
export async function credentialOwner(
  sql: Db,
  id: string,
): Promise<{ workspaceId: string; firstParty: boolean } | null> {
  const [row] = await sql<
    { workspaceId: string; firstParty: boolean }[]
  >`select workspace_id, first_party
    from credentials where id = ${id} and revoked_at is null`;
  return row ?? null;
}

/**
 * Ends the sign-ins of one workspace through a client: every token family (one sign-in and its
 * rotations) of the client that has acted there, whole. A family moves between a person's
 * workspaces (`org_id` at the token endpoint), so one signed in here may hold its live tokens in
 * another workspace by now and come back with them: ending only what sits here would leave it.
 * Its codes not exchanged yet expire with it, and so do the client's person tokens here. The
 * client, and families that never acted here, are untouched. Person tokens are re-checked on
 * every request, so they stop at once in every process; the NOTIFY drops cached principals as
 * well. Returns how many people had a sign-in ended.
 */
export async function revokeClientSignins(
  sql: Sql,
  clientId: string,
  workspaceId: string,
): Promise<number> {
  return sql.begin(async (tx) => {
    const families = await tx<{ id: string }[]>`update token_families f set revoked_at = now()
      where f.client_id = ${clientId} and f.revoked_at is null and (
        exists (select 1 from refresh_tokens r where r.family_id = f.id and r.workspace_id = ${workspaceId})
        or exists (select 1 from access_tokens a where a.family_id = f.id and a.workspace_id = ${workspaceId})
        or exists (select 1 from oauth_codes c where c.family_id = f.id and c.workspace_id = ${workspaceId}))
      returning f.id`;
    const ids = families.map((f) => f.id);
    // Rotated tokens too: presenting one again is refused either way, the family being ended.
    const refresh = await tx<
      { userId: string; live: boolean }[]
    >`update refresh_tokens r set revoked_at = now()
      from token_families f where f.id = r.family_id and r.family_id = any(${ids}) and r.revoked_at is null
      returning f.user_id, r.rotated_at is null and r.expires_at > now() as live`;
    await tx`update oauth_codes set expires_at = least(expires_at, now()) where family_id = any(${ids}) and used_at is null`;
    const access = await tx<
      { userId: string; live: boolean }[]
    >`update access_tokens set revoked_at = now()
      where revoked_at is null and credential_id = ${clientId} and user_id is not null
        and (family_id = any(${ids}) or workspace_id = ${workspaceId})
      returning user_id, expires_at > now() as live`;
    await tx`select pg_notify(${AUTH_CHANNEL}, '')`;
    // Who was signed in: a family with a token that still worked.
    return new Set([...refresh, ...access].filter((row) => row.live).map((row) => row.userId)).size;
  });
}

/** A key or client as the operator lists it: never its secret's hash. */
export interface CredentialAdminRow {
  id: string;
  workspaceId: string;
  name: string | null;
  role: Role;
  scopes: Scope[];
  firstParty: boolean;
  redirectUris: string[];
  createdAt: Date;
  revokedAt: Date | null;
}

/** The workspace's API keys, revoked ones too, oldest first. */
export async function listKeysOf(sql: Db, workspaceId: string): Promise<CredentialAdminRow[]> {
  return sql<
    CredentialAdminRow[]
  >`select id, workspace_id, name, role, scopes, first_party, redirect_uris, created_at, revoked_at
    from credentials where kind = 'key' and workspace_id = ${workspaceId} order by created_at, id`;
}

/**
 * OAuth clients, deleted ones too, oldest first: every client, or those that act in one
 * workspace (its own, and the installation's first-party clients, which serve every workspace).
 */
export async function listClientsFor(sql: Db, workspaceId?: string): Promise<CredentialAdminRow[]> {
  return sql<
    CredentialAdminRow[]
  >`select id, workspace_id, name, role, scopes, first_party, redirect_uris, created_at, revoked_at
    from credentials where kind = 'client' ${workspaceId ? sql`and (workspace_id = ${workspaceId} or first_party)` : sql``}
    order by created_at, id`;
}

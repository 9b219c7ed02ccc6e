/**
 * The app's API access page: a workspace admin lists keys and OAuth clients, creates a key
 * (its secret is shown once), rotates one, and deletes keys or clients (every token they
 * issued answers 401 CREDENTIAL_REVOKED from then on, in every process).
 */
import { ApiError } from '../errors.ts';
import type { Authenticator } from '../auth/authenticate.ts';
import { apiRole, roleAtLeast, type MemberRole, type Role, type Scope } from '../auth/principal.ts';
import { createKey } from '../auth/provision.ts';
import { newSecret, sha256 } from '../auth/secrets.ts';
import type { Sql } from '../store/db.ts';
import { credentialWorkspace, listCredentials, replaceKeySecret, revokeCredential, type CredentialListRow } from '../store/credentials.store.ts';
import { memberRole } from '../store/people.store.ts';

export interface AccessContext {
  readonly sql: Sql;
  readonly auth: Authenticator;
  readonly userId: string;
  readonly workspaceId: string;
}

/** The person's role there; API access is managed by admins (and owners). */
export async function accessRole(ctx: AccessContext): Promise<MemberRole | null> {
  return memberRole(ctx.sql, ctx.workspaceId, ctx.userId);
}

async function requireAdmin(ctx: AccessContext): Promise<Role> {
  const role = await accessRole(ctx);
  if (!role || !roleAtLeast(apiRole(role), 'admin')) throw new ApiError('FORBIDDEN', 'Only workspace admins manage API access');
  return apiRole(role);
}

export async function listAccess(ctx: AccessContext): Promise<CredentialListRow[]> {
  await requireAdmin(ctx);
  return listCredentials(ctx.sql, ctx.workspaceId);
}

export async function createAccessKey(ctx: AccessContext, input: { name: string; role: Role; scopes: Scope[] }): Promise<{ id: string; key: string }> {
  await requireAdmin(ctx);
  if (input.scopes.length === 0) throw new ApiError('VALIDATION_FAILED', 'Choose at least one scope', { field: 'scopes' });
  return createKey(ctx.sql, { workspaceId: ctx.workspaceId, role: input.role, scopes: input.scopes, name: input.name || undefined });
}

/** A new secret for the key; the old secret stops working at once. */
export async function rotateAccessKey(ctx: AccessContext, id: string): Promise<{ id: string; key: string }> {
  await requireAdmin(ctx);
  const key = newSecret('fpk');
  if (!(await replaceKeySecret(ctx.sql, ctx.workspaceId, id, sha256(key)))) throw new ApiError('NOT_FOUND', 'Key not found');
  ctx.auth.invalidate();
  return { id, key };
}

export async function deleteCredential(ctx: AccessContext, id: string): Promise<void> {
  await requireAdmin(ctx);
  // Another workspace's credential is as unknown as a missing one.
  if ((await credentialWorkspace(ctx.sql, id)) !== ctx.workspaceId) throw new ApiError('NOT_FOUND', 'Key or client not found');
  await revokeCredential(ctx.sql, id);
  ctx.auth.invalidate();
}

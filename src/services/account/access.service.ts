/**
 * The app's API access page: a workspace admin lists keys and OAuth clients, creates a key
 * (its secret is shown once), rotates one, and deletes keys or clients (every token they
 * issued answers 401 CREDENTIAL_REVOKED from then on, in every process).
 *
 * First-party clients belong to the installation, not to the workspace that registered them:
 * people of every workspace sign in through them, so only the operator removes one
 * (`flowplan client delete`). A workspace admin sees them and can end their own workspace's
 * sign-ins through one, nothing more.
 */
import { DomainError, notFound, roleRequired } from '../../platform/errors.ts';
import type { Authenticator } from '../auth/authenticate.ts';
import { apiRole, roleAtLeast, type MemberRole, type Role, type Scope } from '../auth/principal.ts';
import { nameProblem } from '../../contract/common.schema.ts';
import { createKey, MAX_NAME_LENGTH } from '../auth/provision.ts';
import type { Sql } from '../../storage/db.ts';
import {
  credentialOwner,
  findClient,
  listCredentials,
  listFirstPartyClients,
  revokeClientSignins,
  revokeCredential,
  type CredentialListRow,
} from '../../storage/credentials.store.ts';
import { memberRole } from '../../storage/people.store.ts';

export type { CredentialListRow } from '../../storage/credentials.store.ts';

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
  if (!role || !roleAtLeast(apiRole(role), 'admin'))
    throw roleRequired('admin', role ? apiRole(role) : null, 'Managing API access');
  return apiRole(role);
}

/** The workspace's own keys and clients, and the installation's first-party clients (read-only). */
export async function listAccess(
  ctx: AccessContext,
): Promise<{ credentials: CredentialListRow[]; firstParty: CredentialListRow[] }> {
  await requireAdmin(ctx);
  const [credentials, firstParty] = await Promise.all([
    listCredentials(ctx.sql, ctx.workspaceId),
    listFirstPartyClients(ctx.sql),
  ]);
  return { credentials, firstParty };
}

export async function createAccessKey(
  ctx: AccessContext,
  input: { name: string; role: Role; scopes: Scope[] },
): Promise<{ id: string; key: string }> {
  await requireAdmin(ctx);
  if (input.scopes.length === 0)
    throw new DomainError('VALIDATION_FAILED', 'Choose at least one scope', { field: 'scopes' });
  // Shown on this page, in the operator's `flowplan key list` and wherever the key acts.
  const problem = input.name ? nameProblem(input.name, MAX_NAME_LENGTH) : null;
  if (problem)
    throw new DomainError('VALIDATION_FAILED', `The key's name ${problem}`, { field: 'name' });
  return createKey(ctx.sql, {
    workspaceId: ctx.workspaceId,
    role: input.role,
    scopes: input.scopes,
    name: input.name || undefined,
  });
}

/**
 * Rotation: a new key with the same name, role and scopes; the old one is revoked at once
 * (it then answers 401 CREDENTIAL_REVOKED, which tells its holder what happened).
 */
export async function rotateAccessKey(
  ctx: AccessContext,
  id: string,
): Promise<{ id: string; key: string }> {
  await requireAdmin(ctx);
  const old = (await listCredentials(ctx.sql, ctx.workspaceId)).find(
    (row) => row.id === id && row.kind === 'key',
  );
  if (!old) throw notFound('Key');
  const created = await createKey(ctx.sql, {
    workspaceId: ctx.workspaceId,
    role: old.role,
    scopes: old.scopes,
    name: old.name ?? undefined,
  });
  await revokeCredential(ctx.sql, id);
  ctx.auth.invalidate();
  return created;
}

export async function deleteCredential(ctx: AccessContext, id: string): Promise<void> {
  await requireAdmin(ctx);
  const owner = await credentialOwner(ctx.sql, id);
  // Another workspace's credential is as unknown as a missing one.
  if (!owner || (!owner.firstParty && owner.workspaceId !== ctx.workspaceId))
    throw notFound('Key or client');
  if (owner.firstParty) {
    throw new DomainError(
      'FORBIDDEN',
      "A first-party client signs in people of every workspace: only the operator removes it (flowplan client delete). End your workspace's sign-ins through it instead.",
    );
  }
  await revokeCredential(ctx.sql, id);
  ctx.auth.invalidate();
}

/**
 * Ends the sign-ins of the admin's workspace through a first-party client: each sign-in that
 * acted there ends whole, also where it has moved on to another of the person's workspaces
 * (which it could come back from). The client, and sign-ins that never acted there, stay.
 */
export async function endClientSignins(
  ctx: AccessContext,
  id: string,
): Promise<{ name: string; people: number }> {
  await requireAdmin(ctx);
  const client = await findClient(ctx.sql, id);
  if (!client || client.revokedAt || !client.firstParty) throw notFound('First-party client');
  const people = await revokeClientSignins(ctx.sql, id, ctx.workspaceId);
  ctx.auth.invalidate();
  return { name: client.name ?? client.id, people };
}

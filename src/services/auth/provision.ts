/**
 * Creating workspaces, people and credentials: what the operator CLI and the first
 * start-up do. Secrets are returned once and stored only as hashes.
 */
import { DomainError, notFound } from '../../platform/errors.ts';
import type { Db, Sql } from '../../storage/db.ts';
import {
  announceAuthChange,
  findClient,
  insertCredential,
  revokeCredential,
} from '../../storage/credentials.store.ts';
import {
  DEFAULT_SEATS,
  findUserByEmail,
  findWorkspace,
  insertUser,
  insertWorkspace,
  updateWorkspace,
  upsertMembership,
  type WorkspaceRow,
} from '../../storage/workspaces.store.ts';
import type { MemberRole, Plan, Role, Scope } from './principal.ts';
import { newId } from '../../platform/ids.ts';
import { hashPassword, newSecret, sha256 } from './secrets.ts';

/**
 * The longest name of a workspace, person, key or client given by a form or the command line
 * (held there to the rules of every one-line name, src/contract/common.schema.ts `nameProblem`).
 */
export const MAX_NAME_LENGTH = 200;

export async function createWorkspace(
  sql: Db,
  input: { name: string; plan?: Plan; seats?: number },
): Promise<{ id: string }> {
  const plan = input.plan ?? 'pro';
  const id = newId('wsp');
  await insertWorkspace(sql, {
    id,
    name: input.name,
    plan,
    seats: input.seats ?? DEFAULT_SEATS[plan],
  });
  return { id };
}

/** Plan, past-due and seats; every process drops its cached credentials on the NOTIFY. */
export async function setWorkspace(
  sql: Sql,
  id: string,
  changes: { plan?: Plan; pastDue?: boolean; seats?: number },
): Promise<WorkspaceRow> {
  const row = await sql.begin(async (tx) => {
    const updated = await updateWorkspace(tx, id, changes);
    if (updated) await announceAuthChange(tx);
    return updated;
  });
  if (!row) throw notFound('Workspace', id);
  return row;
}

export async function requireWorkspace(sql: Db, id: string): Promise<WorkspaceRow> {
  const row = await findWorkspace(sql, id);
  if (!row) throw notFound('Workspace', id);
  return row;
}

/**
 * Creates the person, or finds the existing account with that email; with a workspace,
 * makes them a member there with the role given.
 */
export async function createUser(
  sql: Db,
  /** `passwordHash` instead of `password`: an account that keeps the scrypt hash it already has. */
  input: {
    email: string;
    name?: string;
    password?: string;
    passwordHash?: string;
    workspaceId?: string;
    role?: MemberRole;
  },
): Promise<{ id: string; created: boolean }> {
  if (input.workspaceId) await requireWorkspace(sql, input.workspaceId);
  const existing = await findUserByEmail(sql, input.email);
  let id = existing?.id;
  if (!id) {
    if (!input.name || !(input.password || input.passwordHash))
      throw new DomainError(
        'VALIDATION_FAILED',
        'A new account needs --name and a password (--password-stdin)',
      );
    id = newId('usr');
    const passwordHash = input.passwordHash ?? (await hashPassword(input.password!));
    await insertUser(sql, { id, email: input.email, name: input.name, passwordHash });
  }
  if (input.workspaceId) {
    await upsertMembership(sql, input.workspaceId, id, input.role ?? 'member');
    await announceAuthChange(sql);
  }
  return { id, created: !existing };
}

export async function createKey(
  sql: Db,
  input: { workspaceId: string; role: Role; scopes: Scope[]; name?: string },
): Promise<{ id: string; key: string }> {
  await requireWorkspace(sql, input.workspaceId);
  const id = newId('key');
  const key = newSecret('fpk');
  await insertCredential(sql, {
    id,
    workspaceId: input.workspaceId,
    kind: 'key',
    name: input.name ?? null,
    role: input.role,
    scopes: input.scopes,
    secretHash: sha256(key),
    firstParty: false,
    redirectUris: [],
  });
  return { id, key };
}

export async function createClient(
  sql: Db,
  input: {
    workspaceId: string;
    role: Role;
    scopes: Scope[];
    name?: string;
    firstParty?: boolean;
    redirectUris?: string[];
  },
): Promise<{ clientId: string; clientSecret: string | null }> {
  await requireWorkspace(sql, input.workspaceId);
  const clientId = newId('cli');
  // A first-party client is public (authorization code + PKCE): it has no secret.
  const clientSecret = input.firstParty ? null : newSecret('fps');
  await insertCredential(sql, {
    id: clientId,
    workspaceId: input.workspaceId,
    kind: 'client',
    name: input.name ?? null,
    role: input.role,
    scopes: input.scopes,
    secretHash: clientSecret ? sha256(clientSecret) : null,
    firstParty: input.firstParty ?? false,
    redirectUris: input.redirectUris ?? [],
  });
  return { clientId, clientSecret };
}

/**
 * Removes an OAuth client: every token it issued, and every refresh token of its sign-ins, stops
 * working at once. For a first-party client that is every workspace's sign-ins through it, which
 * is why only the operator does this (the app lets a workspace admin end their own).
 */
export async function deleteClient(sql: Sql, id: string): Promise<{ firstParty: boolean }> {
  const client = await findClient(sql, id);
  if (!client || client.revokedAt) throw notFound('Client', id);
  await revokeCredential(sql, id);
  return { firstParty: client.firstParty };
}

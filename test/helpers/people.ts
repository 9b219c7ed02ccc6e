/**
 * People in tests: accounts with cheaply hashed passwords, and a person token minted in SQL
 * exactly the way the authorization-code grant stores one (a first-party client of the
 * workspace, a hashed `fpa_` token bound to the person).
 */
import { createClient, createUser } from '../../src/services/auth/provision.ts';
import { SCOPES, type Scope } from '../../src/services/auth/principal.ts';
import { newId } from '../../src/platform/ids.ts';
import { hashPassword, newSecret, sha256 } from '../../src/services/auth/secrets.ts';
import type { Db } from '../../src/storage/db.ts';
import { insertAccessToken } from '../../src/storage/credentials.store.ts';
import type { TestServer } from './server.ts';

const cheapHashes = new Map<string, Promise<string>>();

/**
 * createUser with the password stored as a scrypt hash of N=2^10 instead of the floor's 2^17
 * (1-2 s of CPU each here, and again at every sign-in): sign-in verifies it by the parameters
 * stored with it, as it would a hash made at the floor. One hash per password and process.
 */
export async function createPerson(
  sql: Db,
  input: Parameters<typeof createUser>[1],
): ReturnType<typeof createUser> {
  const { password, ...rest } = input;
  if (password === undefined) return createUser(sql, rest);
  let passwordHash = cheapHashes.get(password);
  if (!passwordHash)
    cheapHashes.set(password, (passwordHash = hashPassword(password, { N: 2 ** 10 })));
  return createUser(sql, { ...rest, passwordHash: await passwordHash });
}

export async function personToken(
  s: TestServer,
  userId: string,
  workspaceId = s.workspaceId,
  scopes: Scope[] = [...SCOPES],
): Promise<string> {
  return personTokenOn(
    s,
    await firstPartyClient(s, workspaceId, scopes),
    userId,
    workspaceId,
    scopes,
  );
}

/** A first-party client (the app a person signs in through), registered in `workspaceId`. */
export async function firstPartyClient(
  s: TestServer,
  workspaceId = s.workspaceId,
  scopes: Scope[] = [...SCOPES],
): Promise<string> {
  const { clientId } = await createClient(s.sql, {
    workspaceId,
    role: 'admin',
    scopes,
    name: 'app',
    firstParty: true,
    redirectUris: ['http://127.0.0.1/callback'],
  });
  return clientId;
}

/**
 * A person token issued through this client, acting in `workspaceId`: several people, or one
 * person in several workspaces (org_id), can hold tokens of the same client.
 */
export async function personTokenOn(
  s: TestServer,
  clientId: string,
  userId: string,
  workspaceId = s.workspaceId,
  scopes: Scope[] = [...SCOPES],
): Promise<string> {
  const token = newSecret('fpa');
  await insertAccessToken(s.sql, {
    id: newId('tok'),
    hash: sha256(token),
    workspaceId,
    credentialId: clientId,
    userId,
    scopes,
    expiresAt: new Date(Date.now() + 3_600_000),
  });
  return token;
}

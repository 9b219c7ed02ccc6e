/**
 * People in tests: a person token minted in SQL exactly the way the authorization-code grant
 * stores one (a first-party client of the workspace, a hashed `fpa_` token bound to the person).
 */
import { createClient } from '../../src/auth/provision.ts';
import { SCOPES, type Scope } from '../../src/auth/principal.ts';
import { newId } from '../../src/ids.ts';
import { newSecret, sha256 } from '../../src/auth/secrets.ts';
import { insertAccessToken } from '../../src/store/credentials.store.ts';
import type { TestServer } from './server.ts';

export async function personToken(s: TestServer, userId: string, workspaceId = s.workspaceId, scopes: Scope[] = [...SCOPES]): Promise<string> {
  const { clientId } = await createClient(s.sql, {
    workspaceId, role: 'admin', scopes, name: 'app', firstParty: true, redirectUris: ['http://127.0.0.1/callback'],
  });
  const token = newSecret('fpa');
  await insertAccessToken(s.sql, {
    id: newId('tok'), hash: sha256(token), workspaceId, credentialId: clientId, userId, scopes, expiresAt: new Date(Date.now() + 3_600_000),
  });
  return token;
}

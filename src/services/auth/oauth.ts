/**
 * The token and revoke endpoints' logic (RFC 6749 client credentials, the person grants of
 * grants.ts, RFC 7009 revocation), answering in the spec's envelope with the codes of its table.
 */
import { DomainError, parameterRequired } from '../../platform/errors.ts';
import type { Sql } from '../../storage/db.ts';
import {
  findClient,
  insertAccessToken,
  revokeAccessToken,
  type CredentialRow,
} from '../../storage/credentials.store.ts';
import { findFamilyOfToken, revokeFamily } from '../../storage/people.store.ts';
import { authorizationCodeGrant, refreshTokenGrant, type TokenResponse } from './grants.ts';

export type { TokenResponse };
import { isScope, type Scope } from './principal.ts';
import { newId } from '../../platform/ids.ts';
import { newSecret, sameSecret, sha256 } from './secrets.ts';

export const ACCESS_TOKEN_SECONDS = 3600;

type Form = Record<string, string>;

const invalidClient = (basic: boolean) =>
  new DomainError(
    'INVALID_CLIENT',
    'Client authentication failed',
    undefined,
    basic ? { challenge: 'Basic' } : undefined,
  );

/** Client id and secret from HTTP Basic or the form body, never both (RFC 6749 §2.3.1). */
function clientCredentials(
  form: Form,
  authorization: string | undefined,
): { id: string; secret: string | undefined; basic: boolean } | null {
  if (authorization !== undefined) {
    const match = /^Basic +([A-Za-z0-9+/=]+) *$/i.exec(authorization);
    if (!match) throw invalidClient(true);
    if (form.client_secret !== undefined)
      throw new DomainError('invalid_request', 'Use one client authentication method, not two');
    const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon < 1) throw invalidClient(true);
    const id = decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' '));
    if (form.client_id !== undefined && form.client_id !== id)
      throw new DomainError('invalid_request', 'client_id does not match the Basic credentials');
    return {
      id,
      secret: decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' ')),
      basic: true,
    };
  }
  if (form.client_id === undefined) return null;
  return { id: form.client_id, secret: form.client_secret, basic: false };
}

async function authenticateClient(
  sql: Sql,
  form: Form,
  authorization: string | undefined,
): Promise<CredentialRow> {
  const presented = clientCredentials(form, authorization);
  if (!presented) throw invalidClient(false);
  const client = /^cli_[\w-]{1,60}$/.test(presented.id)
    ? await findClient(sql, presented.id)
    : null;
  if (
    !client ||
    client.revokedAt ||
    !client.secretHash ||
    presented.secret === undefined ||
    !sameSecret(client.secretHash, sha256(presented.secret))
  ) {
    throw invalidClient(presented.basic);
  }
  return client;
}

/**
 * Any client: a confidential one proves its secret; a public (first-party) one is identified
 * by its id alone, and must not send a secret. Null when the caller named no client.
 */
async function identifyClient(
  sql: Sql,
  form: Form,
  authorization: string | undefined,
): Promise<CredentialRow | null> {
  const presented = clientCredentials(form, authorization);
  if (!presented) return null;
  const client = /^cli_[\w-]{1,60}$/.test(presented.id)
    ? await findClient(sql, presented.id)
    : null;
  if (!client || client.revokedAt) throw invalidClient(presented.basic);
  const secret = presented.secret === '' ? undefined : presented.secret;
  if (
    client.secretHash === null
      ? secret !== undefined
      : secret === undefined || !sameSecret(client.secretHash, sha256(secret))
  ) {
    throw invalidClient(presented.basic);
  }
  return client;
}

/** `scope` may only narrow what the credential holds; absent means all of it. */
export function narrowScopes(requested: string | undefined, granted: Scope[]): Scope[] {
  if (requested === undefined) return granted;
  const names = requested.split(' ').filter(Boolean);
  if (names.length === 0) throw new DomainError('INVALID_SCOPE', 'scope is empty');
  const unknown = names.filter((name) => !isScope(name) || !granted.includes(name));
  if (unknown.length > 0) {
    throw new DomainError(
      'INVALID_SCOPE',
      `Scope not granted to this client: ${unknown.join(' ')}`,
      { scopes: unknown },
    );
  }
  return granted.filter((scope) => names.includes(scope));
}

export async function issueToken(
  sql: Sql,
  form: Form,
  authorization: string | undefined,
): Promise<TokenResponse> {
  const grant = form.grant_type;
  if (grant === undefined || grant === '') throw parameterRequired('grant_type');
  if (grant === 'authorization_code') {
    const client = await identifyClient(sql, form, authorization);
    if (!client) throw parameterRequired('client_id');
    return authorizationCodeGrant(sql, form, client, narrowScopes);
  }
  if (grant === 'refresh_token')
    return refreshTokenGrant(
      sql,
      form,
      await identifyClient(sql, form, authorization),
      narrowScopes,
    );
  if (grant !== 'client_credentials')
    throw new DomainError('UNSUPPORTED_GRANT_TYPE', `grant_type ${grant} is not supported`);
  const client = await authenticateClient(sql, form, authorization);
  const scopes = narrowScopes(form.scope, client.scopes);
  const token = newSecret('fpa');
  await insertAccessToken(sql, {
    id: newId('tok'),
    hash: sha256(token),
    workspaceId: client.workspaceId,
    credentialId: client.id,
    userId: null,
    scopes,
    expiresAt: new Date(Date.now() + ACCESS_TOKEN_SECONDS * 1000),
  });
  return {
    access_token: token,
    token_type: 'Bearer',
    expires_in: ACCESS_TOKEN_SECONDS,
    scope: scopes.join(' '),
  };
}

/**
 * RFC 7009: 200 whether or not the token was valid; only the client it was issued to can
 * revoke it. A refresh token takes its whole family with it: the access tokens issued from
 * it (and from its rotations) stop working too.
 */
export async function revokeToken(
  sql: Sql,
  form: Form,
  authorization: string | undefined,
): Promise<boolean> {
  const client = await identifyClient(sql, form, authorization);
  if (!client) throw invalidClient(false);
  if (form.token === undefined || form.token === '') throw parameterRequired('token');
  const hash = sha256(form.token);
  if (form.token.startsWith('fpr_')) {
    const familyId = await findFamilyOfToken(sql, hash, client.id);
    if (familyId) await revokeFamily(sql, familyId);
    return familyId !== null;
  }
  return revokeAccessToken(sql, hash, client.id);
}

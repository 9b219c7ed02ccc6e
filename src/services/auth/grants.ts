/**
 * Person grants of the token endpoint: `authorization_code` (PKCE S256, RFC 7636) and
 * `refresh_token` with rotation and reuse detection (RFC 9700 §4.14.2). Every token of one
 * sign-in belongs to a family; a replayed code or rotated refresh token revokes the family.
 */
import { createHash } from 'node:crypto';
import type { Static } from '@sinclair/typebox';
import type { TokenSchema } from '../../contract/context.schema.ts';
import { DomainError, parameterRequired } from '../../platform/errors.ts';
import type { CredentialRow } from '../../storage/credentials.store.ts';
import { insertAccessToken } from '../../storage/credentials.store.ts';
import type { Db, Sql } from '../../storage/db.ts';
import {
  insertRefreshToken,
  lockCode,
  lockRefreshToken,
  markCodeUsed,
  markRefreshRotated,
  memberRole,
  revokeFamily,
} from '../../storage/people.store.ts';
import type { Scope } from './principal.ts';
import { newId } from '../../platform/ids.ts';
import { newSecret, sha256 } from './secrets.ts';

/** The token endpoint's answer (RFC 6749 §5.1). */
export type TokenResponse = Static<typeof TokenSchema>;

export const PERSON_TOKEN_SECONDS = 3600;
const REFRESH_TOKEN_SECONDS = 30 * 24 * 3600;
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

type Form = Record<string, string>;
type Narrow = (requested: string | undefined, granted: Scope[]) => Scope[];

const invalidGrant = (message: string) => new DomainError('invalid_grant', message);

function required(form: Form, name: string): string {
  const value = form[name];
  if (value === undefined || value === '') throw parameterRequired(name);
  return value;
}

/** A new access token and refresh token of the family, in the given workspace. */
async function issuePair(
  sql: Db,
  grant: {
    familyId: string;
    clientId: string;
    userId: string;
    workspaceId: string;
    granted: Scope[];
    scopes: Scope[];
  },
): Promise<TokenResponse> {
  const access = newSecret('fpa');
  const refresh = newSecret('fpr');
  await insertAccessToken(sql, {
    id: newId('tok'),
    hash: sha256(access),
    workspaceId: grant.workspaceId,
    credentialId: grant.clientId,
    userId: grant.userId,
    scopes: grant.scopes,
    expiresAt: new Date(Date.now() + PERSON_TOKEN_SECONDS * 1000),
    familyId: grant.familyId,
  });
  // The refresh token keeps the scope of the grant, however the access token was narrowed (RFC 6749 §6).
  await insertRefreshToken(sql, {
    id: newId('rft'),
    hash: sha256(refresh),
    familyId: grant.familyId,
    workspaceId: grant.workspaceId,
    scopes: grant.granted,
    expiresAt: new Date(Date.now() + REFRESH_TOKEN_SECONDS * 1000),
  });
  return {
    access_token: access,
    token_type: 'Bearer',
    expires_in: PERSON_TOKEN_SECONDS,
    scope: grant.scopes.join(' '),
    refresh_token: refresh,
  };
}

/**
 * A refusal that must still commit what it did (revoking a family on replay): the
 * transaction returns it and the caller throws it after the commit.
 */
type Outcome = TokenResponse | DomainError;

function settle(outcome: Outcome): TokenResponse {
  if (outcome instanceof DomainError) throw outcome;
  return outcome;
}

export async function authorizationCodeGrant(
  sql: Sql,
  form: Form,
  client: CredentialRow,
  narrow: Narrow,
): Promise<TokenResponse> {
  const code = required(form, 'code');
  const verifier = required(form, 'code_verifier');
  const redirectUri = required(form, 'redirect_uri');
  if (!VERIFIER.test(verifier))
    throw new DomainError(
      'invalid_request',
      'code_verifier must be 43 to 128 unreserved characters',
      { parameter: 'code_verifier' },
    );
  return settle(
    await sql.begin(async (tx): Promise<Outcome> => {
      const row = code.length <= 200 ? await lockCode(tx, sha256(code)) : null;
      if (!row) return invalidGrant('The authorization code is unknown');
      if (row.usedAt) {
        // A code presented twice was intercepted or replayed: nothing issued from it stays valid.
        await revokeFamily(tx, row.familyId);
        return invalidGrant(
          'The authorization code was already used; the tokens issued from it are revoked',
        );
      }
      if (row.expiresAt.getTime() <= Date.now())
        return invalidGrant('The authorization code has expired');
      if (row.clientId !== client.id)
        return invalidGrant('The authorization code was issued to another client');
      if (row.redirectUri !== redirectUri)
        return invalidGrant('redirect_uri does not match the one sent to authorize');
      const challenge = createHash('sha256').update(verifier).digest('base64url');
      if (challenge !== row.codeChallenge)
        return invalidGrant('code_verifier does not match the code challenge');
      if (!(await memberRole(tx, row.workspaceId, row.userId)))
        return invalidGrant('The person is no longer a member of that workspace');
      const scopes = narrow(form.scope, row.scopes);
      await markCodeUsed(tx, sha256(code));
      return issuePair(tx, {
        familyId: row.familyId,
        clientId: row.clientId,
        userId: row.userId,
        workspaceId: row.workspaceId,
        granted: row.scopes,
        scopes,
      });
    }),
  );
}

/**
 * Rotation: the presented token stops working the instant this succeeds. `org_id` moves the
 * pair to another workspace after a live membership check. `client` is the client the caller
 * identified as, when it did; it must be the one the token was issued to.
 */
export async function refreshTokenGrant(
  sql: Sql,
  form: Form,
  client: CredentialRow | null,
  narrow: Narrow,
): Promise<TokenResponse> {
  const token = required(form, 'refresh_token');
  const orgId = form.org_id;
  return settle(
    await sql.begin(async (tx): Promise<Outcome> => {
      const row = token.length <= 200 ? await lockRefreshToken(tx, sha256(token)) : null;
      if (!row) return invalidGrant('The refresh token is unknown');
      if (client && client.id !== row.clientId)
        return invalidGrant('The refresh token was issued to another client');
      if (row.revokedAt || row.familyRevokedAt || row.clientRevokedAt)
        return invalidGrant('The refresh token has been revoked');
      if (row.rotatedAt) {
        // Reuse of a rotated token: one of its holders is not the person (RFC 9700 §4.14.2).
        await revokeFamily(tx, row.familyId);
        return invalidGrant(
          'The refresh token was already used; every token of this sign-in is revoked',
        );
      }
      if (row.expiresAt.getTime() <= Date.now())
        return invalidGrant('The refresh token has expired');
      let workspaceId = row.workspaceId;
      if (orgId !== undefined && orgId !== '') {
        if (orgId.length > 64 || !(await memberRole(tx, orgId, row.userId))) {
          return new DomainError(
            'invalid_target',
            'org_id names a workspace this person does not belong to',
            { org_id: orgId },
          );
        }
        workspaceId = orgId;
      } else if (!(await memberRole(tx, workspaceId, row.userId))) {
        return invalidGrant('The person is no longer a member of this workspace');
      }
      const scopes = narrow(form.scope, row.scopes);
      await markRefreshRotated(tx, row.id);
      return issuePair(tx, {
        familyId: row.familyId,
        clientId: row.clientId,
        userId: row.userId,
        workspaceId,
        granted: row.scopes,
        scopes,
      });
    }),
  );
}

/**
 * The authorization endpoint (RFC 6749 §4.1 with PKCE, RFC 7636) and the consent decision
 * the web app makes. Until the client and its redirect URI are trusted, refusals answer JSON
 * (never a redirect to an address the client may not own); after, they go to the redirect
 * URI as `error=` with `state` and `iss` (RFC 9207).
 */
import type { Static } from '@sinclair/typebox';
import type { AuthorizationServerMetadataSchema } from '../../contract/oauth.schema.ts';
import {
  DomainError,
  notMember,
  parameterRepeated,
  parameterRequired,
  signInRequestExpired,
} from '../../platform/errors.ts';
import type { Db, Sql } from '../../storage/db.ts';
import { findClient } from '../../storage/credentials.store.ts';
import {
  findAuthRequest,
  insertAuthRequest,
  insertCode,
  insertFamily,
  memberRole,
  takeAuthRequest,
  type AuthRequestRow,
} from '../../storage/people.store.ts';
import { narrowScopes } from './oauth.ts';
import type { Scope } from './principal.ts';
import { redirectUriAllowed, withParams } from './redirect-uri.ts';
import { newId } from '../../platform/ids.ts';
import { newSecret, sha256 } from './secrets.ts';

/** How long the person has to sign in and consent after the authorize call. */
const REQUEST_SECONDS = 15 * 60;
export const CODE_SECONDS = 60;

const CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
const PARAMS = [
  'client_id',
  'redirect_uri',
  'response_type',
  'code_challenge',
  'code_challenge_method',
  'state',
  'scope',
] as const;

/** Thrown after the redirect URI is trusted: the edge-independent form of an error redirect. */
export class AuthorizeRedirect {
  constructor(readonly location: string) {}
}

function one(query: Record<string, unknown>, name: string): string | undefined {
  const value = query[name];
  if (Array.isArray(value)) throw parameterRepeated(name);
  return typeof value === 'string' ? value : undefined;
}

export function errorRedirect(
  redirectUri: string,
  issuer: string,
  state: string | null | undefined,
  error: string,
  description: string,
): string {
  return withParams(redirectUri, { error, error_description: description, state, iss: issuer });
}

/**
 * Validates an authorize call and stores it behind an opaque handle; returns the handle.
 * Throws DomainError (JSON) before the redirect URI is trusted, AuthorizeRedirect after.
 */
export async function startAuthorization(
  sql: Db,
  issuer: string,
  query: Record<string, unknown>,
): Promise<string> {
  const clientId = one(query, 'client_id');
  const redirectUri = one(query, 'redirect_uri');
  if (!clientId) throw parameterRequired('client_id');
  const client = /^cli_[\w-]{1,60}$/.test(clientId) ? await findClient(sql, clientId) : null;
  if (!client || client.revokedAt || !client.firstParty) {
    throw new DomainError('INVALID_CLIENT', 'client_id is not a registered first-party client', {
      parameter: 'client_id',
    });
  }
  if (!redirectUri) throw parameterRequired('redirect_uri');
  if (redirectUri.length > 2000 || !redirectUriAllowed(redirectUri, client.redirectUris)) {
    throw new DomainError(
      'invalid_request',
      'redirect_uri is not a loopback redirect URI registered for this client',
      { parameter: 'redirect_uri' },
    );
  }

  // From here on the redirect URI is the client's own: errors go back to it.
  let state: string | undefined;
  const fail = (error: string, description: string) =>
    new AuthorizeRedirect(errorRedirect(redirectUri, issuer, state, error, description));
  try {
    state = one(query, 'state');
    for (const name of PARAMS) one(query, name);
  } catch (error) {
    throw fail('invalid_request', (error as DomainError).message);
  }
  if (state !== undefined && state.length > 1000)
    throw fail('invalid_request', 'state is longer than 1000 characters');
  const responseType = one(query, 'response_type');
  if (!responseType) throw fail('invalid_request', 'response_type is required');
  if (responseType !== 'code')
    throw fail('unsupported_response_type', 'response_type must be code');
  const challenge = one(query, 'code_challenge');
  const method = one(query, 'code_challenge_method');
  if (!challenge) throw fail('invalid_request', 'code_challenge is required (PKCE)');
  if (method !== 'S256')
    throw fail('invalid_request', 'code_challenge_method must be S256; plain is not accepted');
  if (!CHALLENGE.test(challenge))
    throw fail(
      'invalid_request',
      'code_challenge must be the base64url SHA-256 of the verifier (43 characters)',
    );
  const requested = one(query, 'scope');
  if (requested !== undefined && requested.length > 1000)
    throw fail('invalid_scope', 'scope is longer than 1000 characters');
  let scopes: Scope[];
  try {
    scopes = narrowScopes(requested, client.scopes);
  } catch (error) {
    throw fail('invalid_scope', (error as DomainError).message);
  }

  const handle = newSecret('req');
  await insertAuthRequest(sql, {
    handleHash: sha256(handle),
    clientId: client.id,
    redirectUri,
    codeChallenge: challenge,
    state: state ?? null,
    scopes,
    expiresAt: new Date(Date.now() + REQUEST_SECONDS * 1000),
  });
  return handle;
}

/** The pending request behind a handle, for the sign-in and consent pages; null when unknown or expired. */
export async function pendingAuthorization(
  sql: Db,
  handle: string,
): Promise<AuthRequestRow | null> {
  if (!/^req_[A-Za-z0-9_-]{43}$/.test(handle)) return null;
  return findAuthRequest(sql, sha256(handle));
}

/**
 * The person's decision on a request. Approval issues a code for the scopes they kept (a
 * subset of those asked for) in a workspace they belong to; refusal answers `access_denied`.
 * Either way the request is consumed. Returns where to send the browser.
 */
export async function decideAuthorization(
  sql: Sql,
  issuer: string,
  input: {
    handle: string;
    userId: string;
    workspaceId: string;
    approve: boolean;
    scopes: string[];
  },
): Promise<string> {
  return sql.begin(async (tx) => {
    const request = /^req_[A-Za-z0-9_-]{43}$/.test(input.handle)
      ? await takeAuthRequest(tx, sha256(input.handle))
      : null;
    if (!request) throw signInRequestExpired();
    if (!input.approve)
      return errorRedirect(
        request.redirectUri,
        issuer,
        request.state,
        'access_denied',
        'The person declined',
      );
    if (!(await memberRole(tx, input.workspaceId, input.userId))) {
      throw notMember('FORBIDDEN');
    }
    const approved = request.scopes.filter((scope) => input.scopes.includes(scope));
    if (approved.length === 0) {
      return errorRedirect(
        request.redirectUri,
        issuer,
        request.state,
        'access_denied',
        'No scope was approved',
      );
    }
    const familyId = newId('fam');
    await insertFamily(tx, { id: familyId, clientId: request.clientId, userId: input.userId });
    const code = newSecret('fpc');
    await insertCode(tx, {
      codeHash: sha256(code),
      familyId,
      clientId: request.clientId,
      userId: input.userId,
      workspaceId: input.workspaceId,
      redirectUri: request.redirectUri,
      codeChallenge: request.codeChallenge,
      scopes: approved,
      expiresAt: new Date(Date.now() + CODE_SECONDS * 1000),
    });
    return withParams(request.redirectUri, { code, state: request.state, iss: issuer });
  });
}

/** Where an authorize call sends the browser: the app's sign-in with the request's handle, or the client with an error. */
export async function authorizeLocation(
  sql: Db,
  issuer: string,
  signinUrl: string,
  query: Record<string, unknown>,
): Promise<string> {
  try {
    const handle = await startAuthorization(sql, issuer, query);
    return `${signinUrl}?request=${encodeURIComponent(handle)}`;
  } catch (error) {
    if (error instanceof AuthorizeRedirect) return error.location;
    throw error;
  }
}

/** RFC 8414 metadata, so clients (oauth4webapi's discovery) find the endpoints. */
export function authorizationServerMetadata(
  issuer: string,
  scopes: readonly string[],
): Static<typeof AuthorizationServerMetadataSchema> {
  return {
    issuer,
    authorization_endpoint: `${issuer}/v1/oauth/authorize`,
    token_endpoint: `${issuer}/v1/oauth/token`,
    revocation_endpoint: `${issuer}/v1/oauth/revoke`,
    scopes_supported: [...scopes],
    response_types_supported: ['code'],
    grant_types_supported: ['authorization_code', 'refresh_token', 'client_credentials'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
    revocation_endpoint_auth_methods_supported: [
      'client_secret_basic',
      'client_secret_post',
      'none',
    ],
    authorization_response_iss_parameter_supported: true,
  };
}

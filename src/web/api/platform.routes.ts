/** The credential's own context, OAuth token and revoke endpoints, and the operator probes. */
import { json, route, type Route } from '../http/route.ts';
import { issueToken, revokeToken } from '../../services/auth/oauth.ts';
import {
  authorizationServerMetadata,
  authorizeLocation,
} from '../../services/auth/authorization-endpoint.ts';
import { SCOPES } from '../../services/auth/principal.ts';
import { appLink } from '../app-url.ts';
import {
  AuthorizationServerMetadataSchema,
  AuthorizeQuerySchema,
} from '../../contract/oauth.schema.ts';
import { workspacesOf } from '../../services/team/members.service.ts';
import { checkReady } from '../../services/health/readiness.ts';
import {
  ContextSchema,
  RevokeRequestSchema,
  TokenRequestSchema,
  TokenSchema,
} from '../../contract/context.schema.ts';
import type { Services } from '../deps.ts';

const NO_STORE = { 'Cache-Control': 'no-store', Pragma: 'no-cache' };

export function platformRoutes(services: Services): Route[] {
  const { sql, config } = services;
  const issuer = config.baseUrl;
  return [
    route({
      method: 'GET',
      path: '/v1/me',
      operationId: 'getMe',
      summary: 'The calling credential, its workspace, role, scopes and plan',
      tags: ['Context'],
      auth: 'bearer',
      freePlan: true,
      responses: { 200: { description: 'Context', schema: ContextSchema } },
      handler: async ({ principal }) => {
        const p = principal;
        const context = {
          workspaceId: p.workspaceId,
          workspaceName: p.workspaceName,
          credentialId: p.credentialId,
          credentialName: p.credentialName,
          role: p.role,
          scopes: p.scopes,
          plan: p.plan,
        };
        return json(
          200,
          p.userId
            ? {
                ...context,
                userId: p.userId,
                // Field by field: a workspace row carries more (past due) than the Context says.
                orgs: (await workspacesOf(sql, p.userId)).map(({ id, name, role, plan }) => ({
                  id,
                  name,
                  role,
                  plan,
                })),
              }
            : context,
        );
      },
    }),
    route({
      method: 'GET',
      path: '/v1/oauth/authorize',
      operationId: 'authorize',
      summary:
        'Start a sign-in (authorization code with PKCE S256): redirects to the app, which returns a code to redirect_uri',
      tags: ['OAuth'],
      auth: 'none',
      rateLimit: 'address',
      query: AuthorizeQuerySchema,
      errors: ['invalid_request', 'INVALID_CLIENT'],
      responses: {
        302: {
          description:
            'To `{app_url}/signin?request=…` (an opaque handle); once the client and redirect URI are trusted, errors go to redirect_uri as `error`, `error_description`, `state` and `iss` (RFC 9207)',
        },
      },
      handler: async ({ query }) => ({
        status: 302,
        headers: {
          Location: await authorizeLocation(sql, issuer, appLink(config, '/signin'), query),
          ...NO_STORE,
        },
      }),
    }),
    route({
      method: 'GET',
      path: '/.well-known/oauth-authorization-server',
      operationId: 'authorizationServerMetadata',
      summary: 'OAuth 2.0 authorization server metadata (RFC 8414)',
      tags: ['OAuth'],
      auth: 'none',
      responses: { 200: { description: 'Metadata', schema: AuthorizationServerMetadataSchema } },
      handler: () => json(200, authorizationServerMetadata(issuer, SCOPES)),
    }),
    route({
      method: 'POST',
      path: '/v1/oauth/token',
      operationId: 'issueToken',
      summary:
        'Issue tokens: client_credentials, authorization_code (PKCE) or refresh_token (rotating; org_id switches workspace)',
      tags: ['OAuth'],
      auth: 'none',
      rateLimit: 'address',
      bodyKind: 'form',
      body: TokenRequestSchema,
      errors: [
        'invalid_request',
        'UNSUPPORTED_GRANT_TYPE',
        'INVALID_SCOPE',
        'invalid_grant',
        'INVALID_CLIENT',
        'invalid_target',
      ],
      failedCredentials: ['INVALID_CLIENT', 'invalid_grant'],
      responses: { 200: { description: 'Token', schema: TokenSchema } },
      handler: async ({ body, headers }) =>
        json(200, await issueToken(sql, body, headers['authorization']), { headers: NO_STORE }),
    }),
    route({
      method: 'POST',
      path: '/v1/oauth/revoke',
      operationId: 'revokeToken',
      summary: 'Revoke a token (RFC 7009)',
      tags: ['OAuth'],
      auth: 'none',
      rateLimit: 'address',
      bodyKind: 'form',
      body: RevokeRequestSchema,
      errors: ['invalid_request', 'INVALID_CLIENT'],
      failedCredentials: ['INVALID_CLIENT'],
      responses: {
        200: { description: 'Revoked, or already invalid', schema: { type: 'object' } },
      },
      handler: async ({ body, headers }) => {
        // This process drops its cached principals at once; others on the NOTIFY.
        const revoked = await revokeToken(sql, body, headers['authorization']);
        if (revoked) services.auth.invalidate();
        return json(200, {}, { headers: NO_STORE });
      },
    }),
    route({
      method: 'GET',
      path: '/healthz',
      operationId: 'healthz',
      summary: 'The process is up',
      tags: ['Operations'],
      auth: 'none',
      responses: {
        200: {
          description: 'Up',
          schema: { type: 'object', properties: { status: { const: 'ok' } } },
        },
      },
      handler: () => json(200, { status: 'ok' }),
    }),
    route({
      method: 'GET',
      path: '/readyz',
      operationId: 'readyz',
      summary: 'The database is reachable',
      tags: ['Operations'],
      auth: 'none',
      errors: ['SERVICE_UNAVAILABLE'],
      responses: {
        200: {
          description: 'Ready',
          schema: { type: 'object', properties: { status: { const: 'ready' } } },
        },
      },
      handler: async () => {
        await checkReady(sql);
        return json(200, { status: 'ready' });
      },
    }),
  ];
}

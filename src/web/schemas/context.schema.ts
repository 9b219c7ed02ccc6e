/** Context (GET /v1/me) and Token (POST /v1/oauth/token), as the spec's tables give them. */
import { ROLES, SCOPES } from '../../services/auth/principal.ts';
import { Type } from '@sinclair/typebox';
import type { Schema } from '../http/route.ts';
import { StringEnum } from './common.schema.ts';

export const ContextSchema: Schema = {
  type: 'object',
  required: ['workspaceId', 'workspaceName', 'role', 'scopes', 'plan'],
  properties: {
    workspaceId: { type: 'string' },
    workspaceName: { type: 'string' },
    credentialId: { type: 'string' },
    credentialName: { type: ['string', 'null'] },
    role: { type: 'string', enum: [...ROLES].reverse() },
    scopes: { type: 'array', items: { type: 'string', enum: [...SCOPES] } },
    plan: { type: 'string', enum: ['free', 'pro'] },
    userId: { type: 'string', description: 'Person tokens only: the member id of the person acting' },
    orgs: {
      type: 'array',
      description: 'Person tokens only: every workspace the person belongs to',
      items: {
        type: 'object',
        required: ['id', 'name', 'role'],
        properties: {
          id: { type: 'string' },
          name: { type: 'string' },
          role: { type: 'string', enum: ['owner', 'admin', 'member', 'viewer'] },
          plan: { type: 'string', enum: ['free', 'pro'] },
        },
      },
    },
  },
};

// The token and revoke endpoints take forms: these document them (the handler checks the fields).
export const TokenRequestSchema = Type.Object({
  grant_type: StringEnum(['client_credentials', 'authorization_code', 'refresh_token']),
  client_id: Type.Optional(Type.String({ maxLength: 200 })),
  client_secret: Type.Optional(Type.String({ maxLength: 200 })),
  code: Type.Optional(Type.String({ maxLength: 200 })),
  code_verifier: Type.Optional(Type.String({ minLength: 43, maxLength: 128 })),
  redirect_uri: Type.Optional(Type.String({ maxLength: 2000 })),
  refresh_token: Type.Optional(Type.String({ maxLength: 200 })),
  org_id: Type.Optional(Type.String({ maxLength: 64 })),
  scope: Type.Optional(Type.String({ maxLength: 1000, description: 'Space-separated; can only narrow what was granted' })),
});

export const TokenSchema: Schema = {
  type: 'object',
  required: ['access_token', 'token_type', 'expires_in'],
  properties: {
    access_token: { type: 'string' },
    token_type: { type: 'string', enum: ['Bearer'] },
    expires_in: { type: 'integer' },
    scope: { type: 'string' },
    refresh_token: { type: 'string' },
  },
};

export const RevokeRequestSchema = Type.Object({
  token: Type.String({ maxLength: 200 }),
  token_type_hint: Type.Optional(StringEnum(['access_token', 'refresh_token'])),
  client_id: Type.Optional(Type.String({ maxLength: 200 })),
  client_secret: Type.Optional(Type.String({ maxLength: 200 })),
});

/** Context (GET /v1/me) and Token (POST /v1/oauth/token), as the spec's tables give them. */
import { ROLES, SCOPES } from '../../services/auth/principal.ts';
import type { Schema } from '../http/route.ts';

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

export const TokenRequestSchema: Schema = {
  type: 'object',
  required: ['grant_type'],
  properties: {
    grant_type: { type: 'string', enum: ['client_credentials', 'authorization_code', 'refresh_token'] },
    client_id: { type: 'string', maxLength: 200 },
    client_secret: { type: 'string', maxLength: 200 },
    code: { type: 'string', maxLength: 200 },
    code_verifier: { type: 'string', minLength: 43, maxLength: 128 },
    redirect_uri: { type: 'string', maxLength: 2000 },
    refresh_token: { type: 'string', maxLength: 200 },
    org_id: { type: 'string', maxLength: 64 },
    scope: { type: 'string', maxLength: 1000, description: 'Space-separated; can only narrow what was granted' },
  },
};

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

export const RevokeRequestSchema: Schema = {
  type: 'object',
  required: ['token'],
  properties: {
    token: { type: 'string', maxLength: 200 },
    token_type_hint: { type: 'string', enum: ['access_token', 'refresh_token'] },
    client_id: { type: 'string', maxLength: 200 },
    client_secret: { type: 'string', maxLength: 200 },
  },
};

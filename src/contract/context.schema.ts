/** Context (GET /v1/me) and Token (POST /v1/oauth/token), as the spec's tables give them. */
import { Type } from '@sinclair/typebox';
import { Nullable, StringEnum } from './common.schema.ts';
import { MEMBER_ROLES, PLANS, ROLES, SCOPES } from './vocabulary.ts';

export const ContextSchema = Type.Object({
  workspaceId: Type.String(),
  workspaceName: Type.String(),
  credentialId: Type.String(),
  credentialName: Nullable(Type.String()),
  role: StringEnum([...ROLES].reverse()),
  scopes: Type.Array(StringEnum([...SCOPES])),
  plan: StringEnum(PLANS),
  userId: Type.Optional(
    Type.String({ description: 'Person tokens only: the member id of the person acting' }),
  ),
  orgs: Type.Optional(
    Type.Array(
      Type.Object({
        id: Type.String(),
        name: Type.String(),
        role: StringEnum(MEMBER_ROLES),
        plan: StringEnum(PLANS),
      }),
      { description: 'Person tokens only: every workspace the person belongs to' },
    ),
  ),
});

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
  scope: Type.Optional(
    Type.String({
      maxLength: 1000,
      description: 'Space-separated; can only narrow what was granted',
    }),
  ),
});

export const TokenSchema = Type.Object({
  access_token: Type.String(),
  token_type: StringEnum(['Bearer']),
  expires_in: Type.Integer(),
  scope: Type.String(),
  refresh_token: Type.Optional(
    Type.String({ description: 'Person tokens only (authorization_code and refresh_token)' }),
  ),
});

export const RevokeRequestSchema = Type.Object({
  token: Type.String({ maxLength: 200 }),
  token_type_hint: Type.Optional(StringEnum(['access_token', 'refresh_token'])),
  client_id: Type.Optional(Type.String({ maxLength: 200 })),
  client_secret: Type.Optional(Type.String({ maxLength: 200 })),
});

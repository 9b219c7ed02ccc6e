/** The authorization endpoint's parameters and the authorization server metadata (RFC 8414). */
import { SCOPES } from '../../services/auth/principal.ts';
import { Type } from '@sinclair/typebox';

// No `type` on these: a malformed or repeated parameter must reach the endpoint, which answers
// JSON before the redirect URI is trusted and redirects with `error=` after (RFC 6749 §4.1.2.1).
const loose = (description: string) => Type.Optional(Type.Unknown({ description }));
export const AuthorizeQuerySchema = Type.Object({
  client_id: loose('string, required: a registered first-party client'),
  redirect_uri: loose('string, required: a loopback URI the client registered; any port (RFC 8252 §7.3)'),
  response_type: loose('string, required: `code`'),
  code_challenge: loose('string, required: base64url SHA-256 of the PKCE verifier'),
  code_challenge_method: loose('string, required: `S256` (plain is refused)'),
  state: loose('string, optional: returned unchanged with the code or error'),
  scope: loose(`string, optional: space-separated, may only narrow the client's scopes (${SCOPES.join(' ')})`),
});

export const AuthorizationServerMetadataSchema = Type.Object({
  issuer: Type.String(),
  authorization_endpoint: Type.String(),
  token_endpoint: Type.String(),
  revocation_endpoint: Type.Optional(Type.String()),
  scopes_supported: Type.Optional(Type.Array(Type.String())),
  response_types_supported: Type.Optional(Type.Array(Type.String())),
  grant_types_supported: Type.Optional(Type.Array(Type.String())),
  code_challenge_methods_supported: Type.Optional(Type.Array(Type.String())),
  token_endpoint_auth_methods_supported: Type.Optional(Type.Array(Type.String())),
  authorization_response_iss_parameter_supported: Type.Optional(Type.Boolean()),
});

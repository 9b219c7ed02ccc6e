/** The authorization endpoint's parameters and the authorization server metadata (RFC 8414). */
import { Type } from '@sinclair/typebox';
import { SCOPES } from './vocabulary.ts';

// No `type` and no `required` on these for the validator: a missing, malformed or repeated
// parameter must reach the endpoint, which answers JSON before the redirect URI is trusted and
// redirects with `error=` after (RFC 6749 §4.1.2.1). `x-required` marks the ones a client must
// send, for the document (openapi.ts makes them `required: true` parameters).
const loose = (description: string, required: boolean) =>
  Type.Optional(Type.Unknown({ description, ...(required ? { 'x-required': true } : {}) }));
export const AuthorizeQuerySchema = Type.Object({
  client_id: loose('string: a registered first-party client', true),
  redirect_uri: loose(
    'string: a loopback URI the client registered; any port (RFC 8252 §7.3)',
    true,
  ),
  response_type: loose('string: `code`', true),
  code_challenge: loose('string: base64url SHA-256 of the PKCE verifier', true),
  code_challenge_method: loose('string: `S256` (plain is refused)', true),
  state: loose('string: returned unchanged with the code or error', false),
  scope: loose(
    `string: space-separated, may only narrow the client's scopes (${SCOPES.join(' ')})`,
    false,
  ),
});

export const AuthorizationServerMetadataSchema = Type.Object({
  issuer: Type.String(),
  authorization_endpoint: Type.String(),
  token_endpoint: Type.String(),
  revocation_endpoint: Type.String(),
  scopes_supported: Type.Array(Type.String()),
  response_types_supported: Type.Array(Type.String()),
  grant_types_supported: Type.Array(Type.String()),
  code_challenge_methods_supported: Type.Array(Type.String()),
  token_endpoint_auth_methods_supported: Type.Array(Type.String()),
  revocation_endpoint_auth_methods_supported: Type.Array(Type.String()),
  authorization_response_iss_parameter_supported: Type.Boolean(),
});

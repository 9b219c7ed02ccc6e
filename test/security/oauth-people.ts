/**
 * Shared by the security tests: an operator registering a first-party client with the CLI,
 * and a person's whole sign-in through it (authorize, the app's sign-in and consent pages,
 * the code exchange), as a native app would drive it.
 */
import type { Test } from 'tap';
import { cli, type ApiResponse, type TestServer } from '../helpers/server.ts';
import { Agent, pkce, REDIRECT, signInAndConsent } from '../services/auth/agent.ts';
import type { Refusal, Token } from '../helpers/wire.ts';

export const PASSWORD = 'correct horse battery staple';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

// Person grants, or their refusals: a person's tokens always come with a refresh token.
export const tokenEndpoint = (
  s: TestServer,
  fields: Record<string, string>,
): Promise<ApiResponse<Required<Token> & Refusal>> =>
  s.api('POST', '/v1/oauth/token', { raw: new URLSearchParams(fields).toString(), headers: FORM });

/** `flowplan client create --first-party`, as an operator registers a sign-in client. */
export async function registerClient(
  t: Test,
  s: TestServer,
  role: 'admin' | 'member' | 'viewer',
  workspaceId: string,
  name = `${role} app`,
): Promise<string> {
  const created = await cli(s.databaseUrl, [
    'client',
    'create',
    '--workspace',
    workspaceId,
    '--role',
    role,
    '--scopes',
    'all',
    '--name',
    name,
    '--first-party',
    '--redirect-uri',
    REDIRECT,
    '--json',
  ]);
  t.equal(created.code, 0, created.stderr);
  return JSON.parse(created.stdout).clientId as string;
}

/** A whole sign-in through the app into `workspace` (else the first offered): the person's tokens. */
export async function signIn(
  t: Test,
  s: TestServer,
  clientId: string,
  email: string,
  workspace?: string,
): Promise<{ access: string; refresh: string }> {
  const { verifier, challenge } = pkce();
  const callback = await signInAndConsent(new Agent(s.url), {
    clientId,
    email,
    password: PASSWORD,
    challenge,
    workspace,
  });
  const res = await tokenEndpoint(s, {
    grant_type: 'authorization_code',
    client_id: clientId,
    code: callback.searchParams.get('code')!,
    code_verifier: verifier,
    redirect_uri: REDIRECT,
  });
  t.equal(res.status, 200, res.status === 200 ? 'the code is exchanged for tokens' : res.text);
  return { access: res.body.access_token, refresh: res.body.refresh_token };
}

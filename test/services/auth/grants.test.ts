/**
 * Person grants (spec §5 grants 2–4, CONTRACT §2): authorization_code with PKCE (single-use,
 * 60 s codes; a replayed code revokes what it issued) and refresh_token (rotation; reuse of
 * a rotated token revokes the family; org_id switches workspace after a live membership
 * check). Everything through HTTP: authorize, the app's forms, the token endpoint.
 */
import t from 'tap';
import { startApp } from '../../../src/compose.ts';
import { createWorkspace, createClient } from '../../../src/services/auth/provision.ts';
import { loadConfig } from '../../../src/platform/config.ts';
import {
  assertError,
  startTestServer,
  type ApiResponse,
  type TestServer,
} from '../../helpers/server.ts';
import { Agent, pkce, REDIRECT, setUpPerson, signInAndConsent } from './agent.ts';
import { createPerson } from '../../helpers/people.ts';
import type { Context, Token } from '../../helpers/wire.ts';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
// Person grants: their answers always hold a refresh token.
const token = (
  s: TestServer,
  fields: Record<string, string>,
): Promise<ApiResponse<Required<Token>>> =>
  s.api('POST', '/v1/oauth/token', { raw: new URLSearchParams(fields).toString(), headers: FORM });

t.test('person grants', async (t) => {
  const s = await startTestServer(t);
  const person = await setUpPerson(s, { role: 'member' });

  /** A fresh sign-in: the code and the verifier that goes with it. */
  async function code(options: { scope?: string; approveScopes?: string[] } = {}) {
    const { verifier, challenge } = pkce();
    const callback = await signInAndConsent(new Agent(s.url), { ...person, challenge, ...options });
    return { code: callback.searchParams.get('code')!, verifier, callback };
  }
  const exchange = (c: { code: string; verifier: string }, extra: Record<string, string> = {}) =>
    token(s, {
      grant_type: 'authorization_code',
      client_id: person.clientId,
      code: c.code,
      code_verifier: c.verifier,
      redirect_uri: REDIRECT,
      ...extra,
    });
  const refresh = (refreshToken: string, extra: Record<string, string> = {}) =>
    token(s, {
      grant_type: 'refresh_token',
      refresh_token: refreshToken,
      client_id: person.clientId,
      ...extra,
    });

  t.test('code → person token and refresh token; /v1/me adds userId and orgs', async (t) => {
    const c = await code();
    t.equal(c.callback.origin + c.callback.pathname, REDIRECT);
    t.equal(c.callback.searchParams.get('state'), 'st-1');
    t.equal(c.callback.searchParams.get('iss'), s.app.services.config.baseUrl);
    const res = await exchange(c);
    t.equal(res.status, 200, res.text);
    t.equal(res.headers.get('cache-control'), 'no-store');
    t.match(res.body, {
      access_token: /^fpa_/,
      refresh_token: /^fpr_/,
      token_type: 'Bearer',
      expires_in: 3600,
      scope: 'flows:read flows:write work:write team:read',
    });
    const me = await s.api<Context>('GET', '/v1/me', { token: res.body.access_token });
    t.equal(me.status, 200);
    t.match(me.body, {
      workspaceId: s.workspaceId,
      userId: person.userId,
      role: 'member',
      credentialId: person.clientId,
    });
    t.strictSame(
      me.body.orgs,
      [{ id: s.workspaceId, name: 'Demo', role: 'member', plan: 'pro' }],
      'one workspace, Demo',
    );
    const [row] = await s.sql<
      { n: number }[]
    >`select count(*)::int as n from refresh_tokens where token_hash = ${res.body.refresh_token}`;
    t.equal(row!.n, 0, 'the refresh token is stored only as a hash');
  });

  t.test('the person’s role bounds the token whatever was approved', async (t) => {
    const viewer = await setUpPerson(s, { role: 'viewer' });
    const { verifier, challenge } = pkce();
    const callback = await signInAndConsent(new Agent(s.url), { ...viewer, challenge });
    const res = await token(s, {
      grant_type: 'authorization_code',
      client_id: viewer.clientId,
      code: callback.searchParams.get('code')!,
      code_verifier: verifier,
      redirect_uri: REDIRECT,
    });
    t.equal(res.status, 200);
    t.ok(res.body.scope.includes('flows:write'), 'the scope was approved');
    const write = await s.api('POST', '/v1/flows', {
      token: res.body.access_token,
      body: { name: 'Not allowed' },
    });
    assertError(t, write, 403, 'FORBIDDEN', 'a viewer person cannot write');
    t.equal(
      (await s.api('GET', '/v1/flows', { token: res.body.access_token })).status,
      200,
      'reads work',
    );
  });

  t.test('PKCE: no verifier, a wrong verifier, the challenge itself: all refused', async (t) => {
    const c = await code();
    const { challenge } = pkce();
    assertError(
      t,
      await exchange({ ...c, verifier: pkce().verifier }),
      400,
      'invalid_grant',
      'intercepted code with another verifier',
    );
    assertError(
      t,
      await exchange({ ...c, verifier: challenge }),
      400,
      'invalid_grant',
      'the challenge as verifier (plain downgrade)',
    );
    assertError(
      t,
      await token(s, {
        grant_type: 'authorization_code',
        client_id: person.clientId,
        code: c.code,
        redirect_uri: REDIRECT,
      }),
      400,
      'invalid_request',
      'no verifier',
    );
    assertError(
      t,
      await exchange({ ...c, verifier: 'short' }),
      400,
      'invalid_request',
      'malformed verifier',
    );
    t.equal((await exchange(c)).status, 200, 'the rightful client still redeems it');
  });

  t.test('a code used twice revokes what it issued', async (t) => {
    const c = await code();
    const first = await exchange(c);
    t.equal(first.status, 200);
    assertError(t, await exchange(c), 400, 'invalid_grant', 'second use');
    assertError(
      t,
      await s.api<Context>('GET', '/v1/me', { token: first.body.access_token }),
      401,
      'CREDENTIAL_REVOKED',
      'the access token it issued',
    );
    assertError(
      t,
      await refresh(first.body.refresh_token),
      400,
      'invalid_grant',
      'the refresh token it issued',
    );
  });

  t.test('code refusals', async (t) => {
    const c = await code();
    assertError(
      t,
      await exchange(c, { redirect_uri: 'http://127.0.0.1/other' }),
      400,
      'invalid_grant',
      'another redirect_uri',
    );
    const other = await createClient(s.sql, {
      workspaceId: s.workspaceId,
      role: 'admin',
      scopes: ['flows:read'],
      firstParty: true,
      redirectUris: [REDIRECT],
    });
    assertError(
      t,
      await exchange(c, { client_id: other.clientId }),
      400,
      'invalid_grant',
      'another client',
    );
    assertError(
      t,
      await exchange(c, { client_id: 'cli_nobody' }),
      401,
      'INVALID_CLIENT',
      'unknown client',
    );
    assertError(
      t,
      await exchange(c, { client_secret: 'anything' }),
      401,
      'INVALID_CLIENT',
      'a public client sends no secret',
    );
    assertError(
      t,
      await token(s, {
        grant_type: 'authorization_code',
        code: c.code,
        code_verifier: c.verifier,
        redirect_uri: REDIRECT,
      }),
      400,
      'invalid_request',
      'no client_id',
    );
    assertError(
      t,
      await exchange({ ...c, code: 'fpc_nonsense' }),
      400,
      'invalid_grant',
      'unknown code',
    );
    assertError(
      t,
      await exchange(c, { scope: 'team:write' }),
      400,
      'INVALID_SCOPE',
      'widening scope',
    );
    await s.sql`update oauth_codes set expires_at = now() - interval '1 second' where used_at is null`;
    assertError(t, await exchange(c), 400, 'invalid_grant', 'expired after 60 s');
    const [live] = await s.sql<
      { seconds: number }[]
    >`select extract(epoch from expires_at - now())::float as seconds from oauth_codes where used_at is null and expires_at > now() - interval '1 hour' order by expires_at desc limit 1`;
    t.ok(live === undefined || live.seconds <= 60, 'codes live 60 seconds at most');
  });

  t.test('refresh rotates; a rotated token presented again revokes the family', async (t) => {
    const first = await exchange(await code());
    const second = await refresh(first.body.refresh_token);
    t.equal(second.status, 200, second.text);
    t.match(second.body, { access_token: /^fpa_/, refresh_token: /^fpr_/, expires_in: 3600 });
    t.not(second.body.refresh_token, first.body.refresh_token, 'a new refresh token every time');
    t.equal(
      (await s.api<Context>('GET', '/v1/me', { token: second.body.access_token })).status,
      200,
    );
    const narrowed = await refresh(second.body.refresh_token, { scope: 'flows:read' });
    t.equal(narrowed.body.scope, 'flows:read', 'scope narrows');
    const third = await refresh(narrowed.body.refresh_token);
    t.equal(
      third.body.scope,
      'flows:read flows:write work:write team:read',
      'the grant keeps its scope when an access token was narrowed',
    );
    assertError(
      t,
      await refresh(third.body.refresh_token, { scope: 'team:write' }),
      400,
      'INVALID_SCOPE',
      'never widens',
    );

    assertError(
      t,
      await refresh(first.body.refresh_token),
      400,
      'invalid_grant',
      'reuse of a rotated token',
    );
    assertError(
      t,
      await refresh(third.body.refresh_token),
      400,
      'invalid_grant',
      'the newest refresh token is revoked with its family',
    );
    assertError(
      t,
      await s.api('GET', '/v1/me', { token: third.body.access_token }),
      401,
      'CREDENTIAL_REVOKED',
      'so are its access tokens',
    );
  });

  t.test('refresh refusals: another client, unknown, missing', async (t) => {
    const first = await exchange(await code());
    const other = await createClient(s.sql, {
      workspaceId: s.workspaceId,
      role: 'admin',
      scopes: ['flows:read'],
      firstParty: true,
      redirectUris: [REDIRECT],
    });
    assertError(
      t,
      await refresh(first.body.refresh_token, { client_id: other.clientId }),
      400,
      'invalid_grant',
      'a refresh token from another client',
    );
    assertError(t, await refresh('fpr_unknown'), 400, 'invalid_grant');
    assertError(
      t,
      await token(s, { grant_type: 'refresh_token' }),
      400,
      'invalid_request',
      'no refresh_token',
    );
    t.equal(
      (await refresh(first.body.refresh_token)).status,
      200,
      'refusals did not spend the token',
    );
  });

  t.test('org_id switches workspace after a live membership check', async (t) => {
    const { id: other } = await createWorkspace(s.sql, { name: 'Side project' });
    const { id: foreign } = await createWorkspace(s.sql, { name: 'Not mine' });
    const first = await exchange(await code());
    assertError(
      t,
      await refresh(first.body.refresh_token, { org_id: foreign }),
      403,
      'invalid_target',
      'not a member there',
    );
    assertError(
      t,
      await refresh(first.body.refresh_token, { org_id: 'wsp_nowhere' }),
      403,
      'invalid_target',
      'no such workspace',
    );
    await createPerson(s.sql, { email: person.email, workspaceId: other, role: 'admin' });
    const switched = await refresh(first.body.refresh_token, { org_id: other });
    t.equal(switched.status, 200, switched.text);
    const me = await s.api<Context>('GET', '/v1/me', { token: switched.body.access_token });
    t.match(me.body, {
      workspaceId: other,
      workspaceName: 'Side project',
      role: 'admin',
      userId: person.userId,
    });
    t.equal(me.body.orgs?.length, 2);
    const back = await refresh(switched.body.refresh_token, { org_id: s.workspaceId });
    t.equal(
      (await s.api<Context>('GET', '/v1/me', { token: back.body.access_token })).body.workspaceId,
      s.workspaceId,
    );

    // Leaving a workspace ends the person's tokens there on the very next request, without waiting for any notice.
    const inOther = await refresh(back.body.refresh_token, { org_id: other });
    t.equal(
      (await s.api<Context>('GET', '/v1/me', { token: inOther.body.access_token })).status,
      200,
      'cached as valid',
    );
    await s.sql`delete from memberships where workspace_id = ${other} and user_id = ${person.userId}`;
    assertError(
      t,
      await s.api('GET', '/v1/me', { token: inOther.body.access_token }),
      401,
      'CREDENTIAL_REVOKED',
      'removed: refused at once',
    );
    assertError(
      t,
      await refresh(inOther.body.refresh_token),
      400,
      'invalid_grant',
      'no refresh into a workspace the person left',
    );
  });

  t.test(
    'in every process: a role change and a removal count on the next request there',
    async (t) => {
      const other = await startApp(
        loadConfig({ LOG_LEVEL: 'silent' }, { port: 0, databaseUrl: s.databaseUrl }),
      );
      t.teardown(() => other.close());
      const viaOther = async (token: string) => {
        const res = await fetch(`${other.url}/v1/me`, {
          headers: { authorization: `Bearer ${token}` },
        });
        return {
          status: res.status,
          body: (await res.json()) as { role?: string; error?: { code: string } },
        };
      };
      const { body } = await exchange(await code());
      t.equal(
        (await viaOther(body.access_token)).body.role,
        'member',
        'the other process caches the principal',
      );
      // Changed through this process's API; the other process holds its cached principal.
      const patched = await s.api('PATCH', `/v1/team/members/${person.userId}`, {
        token: s.adminKey,
        body: { role: 'viewer' },
      });
      t.equal(patched.status, 200);
      t.equal((await viaOther(body.access_token)).body.role, 'viewer', 'the new role, at once');
      await s.sql`delete from memberships where workspace_id = ${s.workspaceId} and user_id = ${person.userId}`;
      const refused = await viaOther(body.access_token);
      t.equal(refused.status, 401);
      t.equal(refused.body.error?.code, 'CREDENTIAL_REVOKED', 'removed: refused at once there too');
      await createPerson(s.sql, {
        email: person.email,
        workspaceId: s.workspaceId,
        role: 'member',
      });
    },
  );

  t.test('revoking a refresh token ends its access tokens', async (t) => {
    const first = await exchange(await code());
    const second = await refresh(first.body.refresh_token);
    const revoke = await s.api('POST', '/v1/oauth/revoke', {
      raw: new URLSearchParams({
        token: second.body.refresh_token,
        client_id: person.clientId,
      }).toString(),
      headers: FORM,
    });
    t.equal(revoke.status, 200);
    assertError(
      t,
      await s.api('GET', '/v1/me', { token: second.body.access_token }),
      401,
      'CREDENTIAL_REVOKED',
    );
    assertError(
      t,
      await s.api('GET', '/v1/me', { token: first.body.access_token }),
      401,
      'CREDENTIAL_REVOKED',
      'and those of its rotations',
    );
    assertError(t, await refresh(second.body.refresh_token), 400, 'invalid_grant');
    const again = await s.api('POST', '/v1/oauth/revoke', {
      raw: new URLSearchParams({
        token: second.body.refresh_token,
        client_id: person.clientId,
      }).toString(),
      headers: FORM,
    });
    t.equal(again.status, 200, 'revoking again is 200');
  });
});

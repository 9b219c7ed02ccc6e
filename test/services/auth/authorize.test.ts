/**
 * GET /v1/oauth/authorize (spec §4, CONTRACT §2): a registered first-party client, loopback
 * redirect URIs matched on scheme, host and path with any port, PKCE S256 only, scope that
 * only narrows. JSON errors until the redirect URI is trusted; `error=` redirects (with
 * `state` and `iss`) after. The app gets an opaque handle, never the raw parameters.
 */
import t from 'tap';
import { createClient } from '../../../src/services/auth/provision.ts';
import { assertError, cli, startTestServer } from '../../helpers/server.ts';
import type { ServerMetadata } from '../../helpers/wire.ts';
import { Agent, authorizePath, pkce, REDIRECT } from './agent.ts';

t.test('authorize', async (t) => {
  const s = await startTestServer(t);
  const issuer = s.app.services.config.baseUrl;
  const made = await cli(s.databaseUrl, [
    'client',
    'create',
    '--workspace',
    s.workspaceId,
    '--role',
    'member',
    '--scopes',
    'flows:read flows:write work:write',
    '--name',
    'Desktop',
    '--first-party',
    '--redirect-uri',
    REDIRECT,
    '--redirect-uri',
    'http://[::1]/callback',
    '--redirect-uri',
    'http://localhost/cb?app=1',
    '--json',
  ]);
  t.equal(made.code, 0, made.stderr);
  const { clientId, clientSecret } = JSON.parse(made.stdout);
  t.match(clientId, /^cli_/);
  t.notOk(clientSecret, 'a first-party client is public: no secret');
  const { challenge } = pkce();
  const agent = new Agent(s.url);
  const valid = {
    client_id: clientId,
    redirect_uri: REDIRECT,
    response_type: 'code',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: 'xyz',
  };
  const authorize = (params: Record<string, string | undefined>) =>
    agent.get(authorizePath(params));
  const requests = async () =>
    (await s.sql<{ n: number }[]>`select count(*)::int as n from oauth_requests`)[0]!.n;

  t.test('a valid request goes to the sign-in screen with an opaque handle', async (t) => {
    const res = await authorize({ ...valid, scope: 'flows:read' });
    t.equal(res.status, 302);
    t.equal(res.headers.get('cache-control'), 'no-store');
    const location = new URL(res.location!, s.url);
    t.equal(location.pathname, '/app/signin');
    t.same([...location.searchParams.keys()], ['request'], 'only the handle travels');
    t.match(location.searchParams.get('request'), /^req_[A-Za-z0-9_-]{43}$/);
    for (const secret of [challenge, 'xyz', 'callback', clientId])
      t.notOk(res.location!.includes(secret), `${secret} is not in the URL`);
    const [row] = await s.sql<
      { scopes: string[]; state: string; redirectUri: string }[]
    >`select scopes, state, redirect_uri from oauth_requests order by created_at desc limit 1`;
    t.same(row!.scopes, ['flows:read']);
    t.equal(row!.state, 'xyz');
  });

  t.test('loopback redirect URIs: any port, same scheme, host and path', async (t) => {
    for (const uri of [
      'http://127.0.0.1:53121/callback',
      'http://127.0.0.1:1/callback',
      'http://[::1]:8000/callback',
      'http://localhost:9/cb?app=1',
    ]) {
      t.equal((await authorize({ ...valid, redirect_uri: uri })).status, 302, uri);
    }
    const before = await requests();
    for (const uri of [
      'http://evil.example/callback',
      'http://127.0.0.1/callback2',
      'http://127.0.0.1/',
      'https://127.0.0.1/callback',
      'http://localhost/callback',
      'http://127.0.0.1.evil.example/callback',
      'http://127.0.0.1/callback#frag',
      'http://user@127.0.0.1/callback',
      'http://localhost/cb?app=2',
      'http://localhost/cb',
      'not a url',
      'javascript:alert(1)',
    ]) {
      const res = await authorize({ ...valid, redirect_uri: uri });
      assertError(
        t,
        { ...res, body: JSON.parse(res.text) } as never,
        400,
        'invalid_request',
        `refused without a redirect: ${uri}`,
      );
      t.equal(res.location, null, 'no Location');
    }
    t.equal(await requests(), before, 'nothing stored');
  });

  t.test('the client must be a registered first-party client', async (t) => {
    const confidential = await createClient(s.sql, {
      workspaceId: s.workspaceId,
      role: 'member',
      scopes: ['flows:read'],
      redirectUris: [REDIRECT],
    });
    const cases: [Record<string, string | undefined>, number, string][] = [
      [{ ...valid, client_id: undefined }, 400, 'invalid_request'],
      [{ ...valid, client_id: 'cli_unknown' }, 401, 'INVALID_CLIENT'],
      [{ ...valid, client_id: 'garbage!' }, 401, 'INVALID_CLIENT'],
      [{ ...valid, client_id: confidential.clientId }, 401, 'INVALID_CLIENT'],
      [{ ...valid, redirect_uri: undefined }, 400, 'invalid_request'],
    ];
    for (const [params, status, code] of cases) {
      const res = await authorize(params);
      t.equal(res.status, status, JSON.stringify(params));
      t.equal(JSON.parse(res.text).error.code, code);
      t.equal(res.location, null);
    }
    const repeated = await agent.get(
      `${authorizePath(valid)}&redirect_uri=${encodeURIComponent('http://evil.example/cb')}`,
    );
    t.equal(repeated.status, 400, 'a repeated redirect_uri is never followed');
    t.equal(repeated.location, null);
  });

  t.test(
    'after the redirect URI is trusted, errors go back to it with state and iss',
    async (t) => {
      const before = await requests();
      const cases: [Record<string, string | undefined>, string][] = [
        [{ ...valid, response_type: 'token' }, 'unsupported_response_type'],
        [{ ...valid, response_type: undefined }, 'invalid_request'],
        [{ ...valid, code_challenge: undefined }, 'invalid_request'],
        [{ ...valid, code_challenge_method: 'plain' }, 'invalid_request'],
        [{ ...valid, code_challenge_method: undefined }, 'invalid_request'],
        [{ ...valid, code_challenge: 'short' }, 'invalid_request'],
        [{ ...valid, scope: 'team:write' }, 'invalid_scope'],
        [{ ...valid, scope: 'flows:read nonsense' }, 'invalid_scope'],
        [{ ...valid, scope: '' }, 'invalid_scope'],
      ];
      for (const [params, error] of cases) {
        const res = await authorize(params);
        t.equal(res.status, 302, JSON.stringify(params));
        const location = new URL(res.location!);
        t.equal(location.origin + location.pathname, REDIRECT);
        t.equal(location.searchParams.get('error'), error);
        t.type(location.searchParams.get('error_description'), 'string');
        t.equal(location.searchParams.get('state'), 'xyz', 'state carried through');
        t.equal(location.searchParams.get('iss'), issuer, 'iss (RFC 9207)');
        t.notOk(location.searchParams.has('code'));
      }
      const plainPort = await authorize({
        ...valid,
        redirect_uri: 'http://127.0.0.1:4567/callback',
        code_challenge_method: 'plain',
      });
      t.equal(
        new URL(plainPort.location!).port,
        '4567',
        'the error goes to the port the client asked for',
      );
      const repeatedState = await agent.get(`${authorizePath(valid)}&state=again`);
      t.equal(
        new URL(repeatedState.location!).searchParams.get('error'),
        'invalid_request',
        'a repeated parameter',
      );
      t.equal(await requests(), before, 'no refused request was stored');
    },
  );

  t.test('the sign-in screen refuses unknown handles without redirecting anywhere', async (t) => {
    for (const handle of [
      'req_unknownunknownunknownunknownunknownunknown1',
      'http://evil.example/',
      '//evil.example',
      '',
    ]) {
      const res = await agent.get(`/app/signin?request=${encodeURIComponent(handle)}`);
      if (handle === '') {
        t.equal(res.status, 200, 'no handle: a plain sign-in');
        continue;
      }
      t.equal(res.status, 404, handle);
      t.equal(res.location, null, 'no open redirect');
      t.match(res.headers.get('content-type'), /text\/html/);
      t.match(res.text, /unknown or has expired/);
    }
  });

  t.test('metadata (RFC 8414) names the endpoints and S256', async (t) => {
    const res = await s.api<ServerMetadata>('GET', '/.well-known/oauth-authorization-server');
    t.equal(res.status, 200);
    t.match(res.body, {
      issuer,
      authorization_endpoint: `${issuer}/v1/oauth/authorize`,
      token_endpoint: `${issuer}/v1/oauth/token`,
      authorization_response_iss_parameter_supported: true,
    });
    t.strictSame(res.body.code_challenge_methods_supported, ['S256'], 'S256 only');
  });
});

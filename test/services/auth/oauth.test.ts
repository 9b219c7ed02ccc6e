/**
 * OAuth 2.0 client credentials (spec §5, CONTRACT §2): the token endpoint through form body
 * and HTTP Basic, scope narrowing, every refusal of the token and revoke endpoints, RFC 7009
 * revocation, revocation of the whole credential through the CLI, unknown and expired tokens.
 */
import t from 'tap';
import { SCOPES } from '../../../src/services/auth/principal.ts';
import { createClient, createKey } from '../../../src/services/auth/provision.ts';
import { afterAuthChange } from '../../helpers/routes.ts';
import { firstPartyClient } from '../../helpers/people.ts';
import {
  assertError,
  cli,
  startTestServer,
  type ApiResponse,
  type TestServer,
} from '../../helpers/server.ts';
import type { Context, Token } from '../../helpers/wire.ts';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

function form<T = unknown>(
  s: TestServer,
  path: string,
  fields: Record<string, string> | string,
  headers: Record<string, string> = {},
): Promise<ApiResponse<T>> {
  const raw = typeof fields === 'string' ? fields : new URLSearchParams(fields).toString();
  return s.api<T>('POST', path, { raw, headers: { ...FORM, ...headers } });
}

const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

t.test('oauth', async (t) => {
  const s = await startTestServer(t);
  const { clientId, clientSecret } = await createClient(s.sql, {
    workspaceId: s.workspaceId,
    role: 'member',
    scopes: ['flows:read', 'flows:write', 'work:write'],
    name: 'CI pipeline',
  });
  const secret = clientSecret!;
  const grant = (extra: Record<string, string> = {}) =>
    form<Token>(s, '/v1/oauth/token', {
      grant_type: 'client_credentials',
      client_id: clientId,
      client_secret: secret,
      ...extra,
    });
  const tokensIssued = async () =>
    (await s.sql<{ n: number }[]>`select count(*)::int as n from access_tokens`)[0]!.n;

  t.test('client_credentials through the form body: a Bearer token for an hour', async (t) => {
    const res = await grant();
    t.equal(res.status, 200);
    t.match(res.headers.get('content-type'), /^application\/json/);
    t.equal(
      res.headers.get('cache-control'),
      'no-store',
      'token answers are never cached (RFC 6749 §5.1)',
    );
    t.match(res.body, {
      access_token: /^fpa_/,
      token_type: 'Bearer',
      expires_in: 3600,
      scope: 'flows:read flows:write work:write',
    });
    t.notOk('refresh_token' in res.body, 'client credentials get no refresh token');

    const me = await s.api<Context>('GET', '/v1/me', { token: res.body.access_token });
    t.equal(me.status, 200);
    t.match(me.body, {
      workspaceId: s.workspaceId,
      workspaceName: 'Demo',
      credentialId: clientId,
      credentialName: 'CI pipeline',
      role: 'member',
      plan: 'pro',
    });
    t.strictSame(
      me.body.scopes,
      ['flows:read', 'flows:write', 'work:write'],
      'exactly the scopes granted',
    );
    t.notOk('userId' in me.body, 'a workspace token acts as the credential, not a person');

    const [row] = await s.sql<
      { tokenHash: string; expiresAt: Date }[]
    >`select token_hash, expires_at from access_tokens order by created_at desc limit 1`;
    t.not(row!.tokenHash, res.body.access_token, 'stored only as a hash');
    t.notMatch(row!.tokenHash, /^fpa_/);
  });

  t.test('client_credentials through HTTP Basic', async (t) => {
    const res = await form<Token>(
      s,
      '/v1/oauth/token',
      { grant_type: 'client_credentials' },
      { authorization: basic(clientId, secret) },
    );
    t.equal(res.status, 200);
    t.match(res.body, {
      token_type: 'Bearer',
      expires_in: 3600,
      scope: 'flows:read flows:write work:write',
    });
    const me = await s.api<Context>('GET', '/v1/me', { token: res.body.access_token });
    t.equal(me.body.credentialId, clientId);
    const withId = await form(
      s,
      '/v1/oauth/token',
      { grant_type: 'client_credentials', client_id: clientId },
      { authorization: basic(clientId, secret) },
    );
    t.equal(withId.status, 200, 'a client_id in the body that agrees with Basic is fine');
  });

  t.test('scope narrows what the token may do, never widens it', async (t) => {
    const res = await grant({ scope: 'flows:read' });
    t.equal(res.status, 200);
    t.equal(res.body.scope, 'flows:read');
    const me = await s.api<Context>('GET', '/v1/me', { token: res.body.access_token });
    t.same(me.body.scopes, ['flows:read'], 'the token carries only what was asked for');
    const two = await grant({ scope: 'work:write  flows:read' });
    t.equal(two.status, 200);
    t.same(two.body.scope.split(' ').sort(), ['flows:read', 'work:write']);
  });

  t.test('token endpoint refusals', async (t) => {
    const before = await tokensIssued();
    assertError(
      t,
      await form(s, '/v1/oauth/token', { client_id: clientId, client_secret: secret }),
      400,
      'invalid_request',
      'missing grant_type',
    );
    assertError(
      t,
      await form(s, '/v1/oauth/token', {
        grant_type: '',
        client_id: clientId,
        client_secret: secret,
      }),
      400,
      'invalid_request',
      'empty grant_type',
    );
    const asJson = await s.api('POST', '/v1/oauth/token', {
      body: { grant_type: 'client_credentials', client_id: clientId, client_secret: secret },
    });
    assertError(t, asJson, 400, 'invalid_request', 'a JSON body');
    assertError(
      t,
      await s.api('POST', '/v1/oauth/token', {
        raw: `grant_type=client_credentials&client_id=${clientId}&client_secret=${secret}`,
        headers: { 'content-type': 'text/plain' },
      }),
      400,
      'invalid_request',
      'a text body',
    );
    assertError(
      t,
      await s.api('POST', '/v1/oauth/token', {}),
      400,
      'invalid_request',
      'no body at all',
    );

    for (const grantType of [
      'password',
      'implicit',
      'urn:ietf:params:oauth:grant-type:jwt-bearer',
    ]) {
      assertError(
        t,
        await grant({ grant_type: grantType }),
        400,
        'UNSUPPORTED_GRANT_TYPE',
        `grant_type ${grantType}`,
      );
    }
    for (const scope of [
      'team:write',
      'flows:read team:write',
      'nope',
      'flows:read nope',
      '',
      ' ',
    ]) {
      const res = await grant({ scope });
      assertError(t, res, 400, 'INVALID_SCOPE', `scope ${JSON.stringify(scope)}`);
    }

    const wrongSecret = await grant({ client_secret: `${secret}x` });
    assertError(t, wrongSecret, 401, 'INVALID_CLIENT', 'wrong secret');
    assertError(
      t,
      await grant({ client_id: 'cli_doesnotexist' }),
      401,
      'INVALID_CLIENT',
      'unknown client',
    );
    assertError(
      t,
      await grant({ client_id: 'not even an id' }),
      401,
      'INVALID_CLIENT',
      'malformed client id',
    );
    assertError(
      t,
      await form(s, '/v1/oauth/token', { grant_type: 'client_credentials' }),
      401,
      'INVALID_CLIENT',
      'no client authentication',
    );
    assertError(
      t,
      await form(s, '/v1/oauth/token', { grant_type: 'client_credentials', client_id: clientId }),
      401,
      'INVALID_CLIENT',
      'no secret',
    );
    const badBasic = await form(
      s,
      '/v1/oauth/token',
      { grant_type: 'client_credentials' },
      { authorization: basic(clientId, 'wrong') },
    );
    assertError(t, badBasic, 401, 'INVALID_CLIENT', 'wrong secret over Basic');
    t.match(
      badBasic.headers.get('www-authenticate'),
      /^Basic/,
      'a failed Basic attempt is challenged (RFC 6749 §5.2)',
    );
    assertError(
      t,
      await form(
        s,
        '/v1/oauth/token',
        { grant_type: 'client_credentials' },
        { authorization: 'Basic !!!' },
      ),
      401,
      'INVALID_CLIENT',
      'garbage Basic',
    );

    // An API key is not an OAuth client.
    const { id: keyId, key } = await createKey(s.sql, {
      workspaceId: s.workspaceId,
      role: 'admin',
      scopes: [...SCOPES],
    });
    assertError(
      t,
      await grant({ client_id: keyId, client_secret: key }),
      401,
      'INVALID_CLIENT',
      'a key id and key are not client credentials',
    );

    assertError(
      t,
      await form(
        s,
        '/v1/oauth/token',
        { grant_type: 'client_credentials', client_secret: secret },
        { authorization: basic(clientId, secret) },
      ),
      400,
      'invalid_request',
      'Basic and client_secret both',
    );
    assertError(
      t,
      await form(
        s,
        '/v1/oauth/token',
        { grant_type: 'client_credentials', client_id: 'cli_other' },
        { authorization: basic(clientId, secret) },
      ),
      400,
      'invalid_request',
      'Basic and another client_id',
    );
    assertError(
      t,
      await form(
        s,
        '/v1/oauth/token',
        `grant_type=client_credentials&grant_type=client_credentials&client_id=${clientId}&client_secret=${secret}`,
      ),
      400,
      'invalid_request',
      'repeated grant_type',
    );
    assertError(
      t,
      await form(
        s,
        '/v1/oauth/token',
        `grant_type=client_credentials&client_id=${clientId}&client_secret=${secret}&scope=flows:read&scope=work:write`,
      ),
      400,
      'invalid_request',
      'repeated scope',
    );

    t.equal(await tokensIssued(), before, 'no refusal issued a token');

    // RFC 6749 §3.1: an unrecognised parameter is ignored, repeated or not (issue 29, item 10).
    const ignored = await form<Token>(
      s,
      '/v1/oauth/token',
      `grant_type=client_credentials&client_id=${clientId}&client_secret=${secret}&utm=a&utm=b&x=`,
    );
    t.equal(ignored.status, 200, 'a repeated unrecognised parameter is ignored');
    t.equal(ignored.body?.token_type, 'Bearer');
  });

  t.test('revoke (RFC 7009)', async (t) => {
    const { body } = await grant();
    const token = body.access_token as string;
    t.equal((await s.api<Context>('GET', '/v1/me', { token })).status, 200, 'works before');
    const revoked = await form(s, '/v1/oauth/revoke', {
      token,
      client_id: clientId,
      client_secret: secret,
    });
    t.equal(revoked.status, 200);
    assertError(
      t,
      await s.api('GET', '/v1/me', { token }),
      401,
      'CREDENTIAL_REVOKED',
      'refused on the very next request',
    );
    t.equal(
      (await form(s, '/v1/oauth/revoke', { token, client_id: clientId, client_secret: secret }))
        .status,
      200,
      'revoking again is 200',
    );
    t.equal(
      (
        await form(s, '/v1/oauth/revoke', {
          token: 'fpa_neverissued',
          client_id: clientId,
          client_secret: secret,
        })
      ).status,
      200,
      'an unknown token is 200',
    );
    const viaBasic = await grant();
    t.equal(
      (
        await form(
          s,
          '/v1/oauth/revoke',
          { token: viaBasic.body.access_token },
          { authorization: basic(clientId, secret) },
        )
      ).status,
      200,
      'Basic works too',
    );
    assertError(
      t,
      await s.api('GET', '/v1/me', { token: viaBasic.body.access_token }),
      401,
      'CREDENTIAL_REVOKED',
    );

    // Only the client a token was issued to can revoke it.
    const other = await createClient(s.sql, {
      workspaceId: s.workspaceId,
      role: 'viewer',
      scopes: ['flows:read'],
    });
    const { body: mine } = await grant();
    t.equal(
      (
        await form(s, '/v1/oauth/revoke', {
          token: mine.access_token,
          client_id: other.clientId,
          client_secret: other.clientSecret!,
        })
      ).status,
      200,
    );
    t.equal(
      (await s.api('GET', '/v1/me', { token: mine.access_token })).status,
      200,
      "another client cannot revoke this client's token",
    );

    assertError(
      t,
      await form(s, '/v1/oauth/revoke', {
        token: mine.access_token,
        client_id: clientId,
        client_secret: 'wrong',
      }),
      401,
      'INVALID_CLIENT',
      'bad client',
    );
    assertError(
      t,
      await form(s, '/v1/oauth/revoke', { token: mine.access_token }),
      401,
      'INVALID_CLIENT',
      'no client',
    );
    assertError(
      t,
      await form(s, '/v1/oauth/revoke', { client_id: clientId, client_secret: secret }),
      400,
      'invalid_request',
      'missing token',
    );
    assertError(
      t,
      await s.api('POST', '/v1/oauth/revoke', {
        body: { token: mine.access_token, client_id: clientId, client_secret: secret },
      }),
      400,
      'invalid_request',
      'a JSON body',
    );
    t.equal(
      (await s.api('GET', '/v1/me', { token: mine.access_token })).status,
      200,
      'no refusal revoked anything',
    );

    // RFC 6749 §3.1 and RFC 7009 §2.1: unrecognised parameters are ignored, repeated or not; a recognised one is not repeated (issue 29, item 10).
    assertError(
      t,
      await form(
        s,
        '/v1/oauth/revoke',
        `token=${mine.access_token}&token=${mine.access_token}&client_id=${clientId}&client_secret=${secret}`,
      ),
      400,
      'invalid_request',
      'repeated token',
    );
    t.equal(
      (await s.api('GET', '/v1/me', { token: mine.access_token })).status,
      200,
      'the refused revoke revoked nothing',
    );
    const extra = await form(
      s,
      '/v1/oauth/revoke',
      `token=${mine.access_token}&client_id=${clientId}&client_secret=${secret}&trace=1&trace=2`,
    );
    t.equal(extra.status, 200, 'a repeated unrecognised parameter is ignored');
    assertError(
      t,
      await s.api('GET', '/v1/me', { token: mine.access_token }),
      401,
      'CREDENTIAL_REVOKED',
      'and the token is revoked',
    );
  });

  t.test(
    'flowplan key revoke ends a client and its tokens, or a key, on the very next request',
    async (t) => {
      const victim = await createClient(s.sql, {
        workspaceId: s.workspaceId,
        role: 'member',
        scopes: ['flows:read'],
      });
      const get = () =>
        form<Token>(s, '/v1/oauth/token', {
          grant_type: 'client_credentials',
          client_id: victim.clientId,
          client_secret: victim.clientSecret!,
        });
      const tokens = [(await get()).body.access_token, (await get()).body.access_token] as string[];
      for (const token of tokens)
        t.equal((await s.api('GET', '/v1/me', { token })).status, 200, 'cached as valid first');

      const { key, id: keyId } = await createKey(s.sql, {
        workspaceId: s.workspaceId,
        role: 'member',
        scopes: ['flows:read'],
      });
      t.equal((await s.api('GET', '/v1/me', { token: key })).status, 200);

      const clientRevoke = await afterAuthChange(s, () =>
        cli(s.databaseUrl, ['key', 'revoke', '--id', victim.clientId, '--json']),
      );
      t.equal(clientRevoke.code, 0, clientRevoke.stderr);
      for (const token of tokens)
        assertError(
          t,
          await s.api('GET', '/v1/me', { token }),
          401,
          'CREDENTIAL_REVOKED',
          "the client's token",
        );
      assertError(t, await get(), 401, 'INVALID_CLIENT', 'a revoked client gets no new token');

      const keyRevoke = await afterAuthChange(s, () =>
        cli(s.databaseUrl, ['key', 'revoke', '--id', keyId]),
      );
      t.equal(keyRevoke.code, 0, keyRevoke.stderr);
      assertError(
        t,
        await s.api('GET', '/v1/me', { token: key }),
        401,
        'CREDENTIAL_REVOKED',
        'the key',
      );
      t.equal(
        (await s.api('GET', '/v1/me', { token: s.adminKey })).status,
        200,
        'other credentials are untouched',
      );
    },
  );

  t.test('unknown and expired tokens are 401 UNAUTHORIZED', async (t) => {
    for (const token of [
      'fpa_unknown',
      `fpa_${'A'.repeat(43)}`,
      'fpk_unknown',
      'fpr_unknown',
      'random',
    ]) {
      const res = await s.api('GET', '/v1/me', { token });
      assertError(t, res, 401, 'UNAUTHORIZED', token);
      t.match(res.headers.get('www-authenticate'), /^Bearer/);
    }
    const { body } = await grant();
    await s.sql`update access_tokens set expires_at = now() - interval '1 second' where expires_at > now()`;
    assertError(
      t,
      await s.api<Context>('GET', '/v1/me', { token: body.access_token }),
      401,
      'UNAUTHORIZED',
      'an expired token',
    );
    const fresh = await grant();
    t.equal(
      (await s.api<Context>('GET', '/v1/me', { token: fresh.body.access_token })).status,
      200,
      'a new token works',
    );
  });
});

t.test(
  "failed client secrets, codes and refresh tokens spend the address's failed-credential budget: 429 once it is spent",
  async (t) => {
    const s = await startTestServer(
      t,
      { failedCredentialsPerMinute: 1, failedCredentialsBurst: 3 },
      { TRUST_PROXY: '1' },
    );
    const { clientId, clientSecret } = await createClient(s.sql, {
      workspaceId: s.workspaceId,
      role: 'member',
      scopes: ['flows:read'],
      name: 'Guessed',
    });
    const app = await firstPartyClient(s);
    const from = (address: string) => ({ 'x-forwarded-for': address });
    const verifier = 'v'.repeat(43);
    const guesses: [string, string, Record<string, string>, number, string][] = [
      [
        'a client secret',
        '/v1/oauth/token',
        { grant_type: 'client_credentials', client_id: clientId, client_secret: 'wrong' },
        401,
        'INVALID_CLIENT',
      ],
      [
        'a refresh token',
        '/v1/oauth/token',
        { grant_type: 'refresh_token', refresh_token: 'fpr_guess' },
        400,
        'invalid_grant',
      ],
      [
        'an authorization code',
        '/v1/oauth/token',
        {
          grant_type: 'authorization_code',
          client_id: app,
          code: 'guess',
          code_verifier: verifier,
          redirect_uri: 'http://127.0.0.1/callback',
        },
        400,
        'invalid_grant',
      ],
      [
        'a client secret at revoke',
        '/v1/oauth/revoke',
        { token: 'fpa_x', client_id: clientId, client_secret: 'wrong' },
        401,
        'INVALID_CLIENT',
      ],
    ];
    for (const [i, [what, path, fields, status, code]] of guesses.entries()) {
      const address = `203.0.113.${i + 1}`;
      for (let n = 0; n < 3; n++)
        assertError(
          t,
          await form(s, path, fields, from(address)),
          status,
          code,
          `${what}, guess ${n + 1}`,
        );
      const spent = await form(s, path, fields, from(address));
      assertError(t, spent, 429, 'RATE_LIMITED', `${what}: the fourth guess`);
      t.ok(Number(spent.headers.get('retry-after')) >= 1, 'with Retry-After');
    }
    const right = await form(
      s,
      '/v1/oauth/token',
      { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret! },
      from('203.0.113.1'),
    );
    t.equal(right.status, 200, 'the right secret still works from a spent address');
    assertError(
      t,
      await form(s, '/v1/oauth/token', guesses[0]![2], from('198.51.100.1')),
      401,
      'INVALID_CLIENT',
      'another address has its own budget',
    );
  },
);

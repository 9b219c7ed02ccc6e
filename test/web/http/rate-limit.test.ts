/**
 * Per-credential rate limit (CONTRACT §1, spec §8), with a small budget: 60 a minute, burst 5.
 * Both header sets on every authenticated answer, 429 with Retry-After, 304s free, and one
 * credential's flood never touching another's budget.
 */
import t from 'tap';
import type { Test } from 'tap';
import { createClient, createKey } from '../../../src/services/auth/provision.ts';
import { addTestRoutes } from '../../helpers/routes.ts';
import { assertError, startTestServer, type ApiResponse } from '../../helpers/server.ts';
import type { Refusal, Token } from '../../helpers/wire.ts';

const POLICY = '"credential";q=60;w=60';

/** Both header sets, consistent with each other; returns the remaining count. */
function rateHeaders(t: Test, res: ApiResponse, label: string): number {
  t.equal(res.headers.get('ratelimit-policy'), POLICY, `${label}: RateLimit-Policy`);
  const state = /^"credential";r=(\d+);t=(\d+)$/.exec(res.headers.get('ratelimit') ?? '');
  t.ok(
    state,
    `${label}: RateLimit is "credential";r=<n>;t=<s> (got ${res.headers.get('ratelimit')})`,
  );
  t.equal(res.headers.get('x-ratelimit-limit'), '60', `${label}: X-RateLimit-Limit`);
  const remaining = res.headers.get('x-ratelimit-remaining');
  t.match(remaining, /^\d+$/, `${label}: X-RateLimit-Remaining`);
  t.equal(remaining, state?.[1], `${label}: both sets report the same remaining count`);
  const reset = Number(res.headers.get('x-ratelimit-reset'));
  const now = Date.now() / 1000;
  t.ok(
    Number.isInteger(reset) && reset >= Math.floor(now) && reset <= now + 61 + 1,
    `${label}: X-RateLimit-Reset is epoch seconds within the window (${reset})`,
  );
  return Number(remaining);
}

t.test('rate limit', async (t) => {
  const s = await startTestServer(t, { rateLimitPerMinute: 60, rateLimitBurst: 5 });
  const echo = await addTestRoutes(s);
  const fresh = async () =>
    (
      await createKey(s.sql, {
        workspaceId: s.workspaceId,
        role: 'admin',
        scopes: ['flows:read', 'flows:write'],
      })
    ).key;

  t.test('the sixth request in a burst of five is 429 RATE_LIMITED with Retry-After', async (t) => {
    const key = await fresh();
    const seen: number[] = [];
    for (let i = 1; i <= 5; i += 1) {
      const res = await s.api('GET', '/v1/me', { token: key });
      t.equal(res.status, 200, `request ${i} passes`);
      seen.push(rateHeaders(t, res, `request ${i}`));
    }
    t.same(seen, [4, 3, 2, 1, 0], 'remaining counts down by one per request');
    const refused = await s.api<Refusal>('GET', '/v1/me', { token: key });
    assertError(t, refused, 429, 'RATE_LIMITED');
    t.match(refused.headers.get('retry-after'), /^[1-9]\d*$/, 'Retry-After in whole seconds');
    t.ok(Number(refused.headers.get('retry-after')) <= 60);
    t.equal(rateHeaders(t, refused, '429'), 0);
    t.match(refused.body.error.details, { limit: 60, burst: 5 });

    // A refused write runs nothing.
    const write = await s.api('POST', '/v1/test/echo', { token: key, body: { name: 'flood' } });
    assertError(t, write, 429, 'RATE_LIMITED');
    t.equal(echo.calls, 0, 'the handler never ran');
    t.equal(await echo.rows(), 0, 'nothing was written');

    t.match(
      await s.metrics(),
      /^flowplan_rate_limit_refusals_total\{reason="credential"\} [1-9]\d*$/m,
      'refusals are counted',
    );
  });

  t.test('refusals of an authenticated request carry the rate-limit state too', async (t) => {
    const { key } = await createKey(s.sql, {
      workspaceId: s.workspaceId,
      role: 'admin',
      scopes: ['flows:read'],
    });
    const res = await s.api('POST', '/v1/test/echo', { token: key, body: { name: 'x' } });
    assertError(t, res, 403, 'INSUFFICIENT_SCOPE');
    t.equal(rateHeaders(t, res, '403'), 4);
    const invalid = await s.api('GET', '/v1/test/items/bad', { token: key });
    assertError(t, invalid, 400, 'VALIDATION_FAILED');
    t.equal(rateHeaders(t, invalid, '400'), 3);
  });

  t.test('a 304 spends nothing', async (t) => {
    const key = await fresh();
    const first = await s.api('GET', '/v1/me', { token: key });
    t.equal(rateHeaders(t, first, 'first'), 4);
    const etag = first.headers.get('etag')!;
    for (let i = 1; i <= 8; i += 1) {
      const res = await s.api('GET', '/v1/me', { token: key, headers: { 'if-none-match': etag } });
      t.equal(res.status, 304, `conditional request ${i} is 304`);
      t.equal(
        rateHeaders(t, res, `304 #${i}`),
        4,
        `remaining unchanged after conditional request ${i}`,
      );
    }
    const after = await s.api('GET', '/v1/me', { token: key });
    t.equal(after.status, 200, 'eight 304s later the budget still has room (burst is 5)');
    t.equal(rateHeaders(t, after, 'after'), 3, 'a full answer spends one');
  });

  t.test("another credential's budget is untouched by the first one's flood", async (t) => {
    const flooder = await fresh();
    const bystander = await fresh();
    const statuses: number[] = [];
    for (let i = 0; i < 12; i += 1)
      statuses.push((await s.api('GET', '/v1/me', { token: flooder })).status);
    t.same(statuses.slice(0, 5), [200, 200, 200, 200, 200]);
    t.ok(
      statuses.slice(5).every((status) => status === 429),
      'everything past the burst is refused',
    );
    const other = await s.api('GET', '/v1/me', { token: bystander });
    t.equal(other.status, 200);
    t.equal(rateHeaders(t, other, 'bystander'), 4, 'a full budget, less this one request');
    assertError(
      t,
      await s.api('GET', '/v1/me', { token: flooder }),
      429,
      'RATE_LIMITED',
      'the flooder is still limited',
    );
  });

  t.test("a client's tokens share the client's budget", async (t) => {
    const { clientId, clientSecret } = await createClient(s.sql, {
      workspaceId: s.workspaceId,
      role: 'member',
      scopes: ['flows:read'],
    });
    const token = async () => {
      const res = await s.api<Token>('POST', '/v1/oauth/token', {
        raw: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: clientId,
          client_secret: clientSecret!,
        }).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      });
      t.equal(res.status, 200);
      return res.body.access_token as string;
    };
    const [a, b] = [await token(), await token()];
    for (let i = 0; i < 3; i += 1)
      t.equal((await s.api('GET', '/v1/me', { token: a })).status, 200);
    const last = await s.api('GET', '/v1/me', { token: b });
    t.equal(rateHeaders(t, last, 'second token'), 1, 'the second token continues the same count');
    t.equal((await s.api('GET', '/v1/me', { token: b })).status, 200);
    assertError(t, await s.api('GET', '/v1/me', { token: a }), 429, 'RATE_LIMITED');
  });

  t.test('unauthenticated routes carry no rate-limit headers', async (t) => {
    const res = await s.api('GET', '/healthz');
    t.equal(res.status, 200);
    t.equal(res.headers.get('ratelimit'), null);
    t.equal(res.headers.get('x-ratelimit-remaining'), null);
  });
});

t.test(
  'routes without a credential can take a budget per client address, apart from the credentials',
  async (t) => {
    const s = await startTestServer(t, {
      rateLimitPerMinute: 60,
      rateLimitBurst: 5,
      addressRateLimitPerMinute: 60,
      addressRateLimitBurst: 3,
    });
    await addTestRoutes(s);
    for (let i = 1; i <= 3; i += 1) {
      const res = await s.api<{ remoteAddress: string }>('GET', '/test/address');
      t.equal(res.status, 200, `request ${i} passes`);
      t.equal(
        res.body.remoteAddress.replace(/^::ffff:/, '').replace(/^(0000:){5}ffff:/, ''),
        '127.0.0.1',
        'the handler sees the peer address',
      );
    }
    const refused = await s.api('GET', '/test/address');
    assertError(t, refused, 429, 'RATE_LIMITED');
    t.match(refused.headers.get('retry-after'), /^\d+$/, 'Retry-After in whole seconds');
    t.equal(
      (await s.api('GET', '/v1/me', { token: s.adminKey })).status,
      200,
      "the address's flood leaves the credential budget alone",
    );
    t.equal(
      (await s.api('GET', '/healthz')).status,
      200,
      'routes without an address budget are not limited',
    );
  },
);

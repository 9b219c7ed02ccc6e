/**
 * Issue 17, item 5: /metrics is served on a listener of its own (METRICS_HOST:METRICS_PORT),
 * never on the API port; failed credential checks spend a per-address budget (IPv6 by /64)
 * and are answered 429 with Retry-After once it is spent, while valid credentials from that
 * address go on working; the budgets' memory stays bounded under a flood of addresses.
 */
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { assertError, startTestServer } from '../helpers/server.ts';

const randomKey = () => `fpk_${randomBytes(32).toString('base64url')}`;

t.test('/metrics answers on its own listener only', async (t) => {
  const s = await startTestServer(t);
  assertError(t, await s.api('GET', '/metrics'), 404, 'NOT_FOUND', 'not on the API port');
  const metricsUrl = new URL(s.app.metricsUrl);
  t.equal(metricsUrl.hostname, '127.0.0.1', 'loopback by default');
  t.not(metricsUrl.port, String(s.app.port));
  const scrape = await fetch(s.app.metricsUrl);
  t.equal(scrape.status, 200);
  t.match(await scrape.text(), /^flowplan_http_request_duration_seconds_count/m);
  t.equal(
    (await fetch(s.app.metricsUrl.replace('/metrics', '/v1/me'))).status,
    404,
    'the metrics listener serves nothing else',
  );
});

t.test(
  '1,500 random keys from one address: 401s until its budget is spent, then 429; a valid key still works',
  async (t) => {
    const s = await startTestServer(t, {
      failedCredentialsPerMinute: 30,
      failedCredentialsBurst: 60,
    });
    const statuses: Record<number, number> = {};
    let retryAfter: string | null = null;
    let next = 0;
    const started = Date.now();
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        while (next++ < 1500) {
          const res = await s.api('GET', '/v1/me', { token: randomKey() });
          statuses[res.status] = (statuses[res.status] ?? 0) + 1;
          if (res.status === 429) retryAfter ??= res.headers.get('retry-after');
        }
      }),
    );
    t.equal(
      (statuses[401] ?? 0) + (statuses[429] ?? 0),
      1500,
      `only 401 and 429 (${JSON.stringify(statuses)})`,
    );
    const refill = ((Date.now() - started) / 60_000) * 30;
    t.ok(
      (statuses[401] ?? 0) >= 60 && (statuses[401] ?? 0) <= 60 + refill + 1,
      `the burst of 60 failures and the refill meanwhile (${refill.toFixed(1)}) are answered 401: ${statuses[401]}`,
    );
    t.ok((statuses[429] ?? 0) > 1300, 'the rest 429');
    t.ok(Number(retryAfter) >= 1, `with Retry-After (${retryAfter})`);
    const refused = await s.api('GET', '/v1/me', { token: randomKey() });
    assertError(t, refused, 429, 'RATE_LIMITED');
    const valid = await s.api('GET', '/v1/me', { token: s.adminKey });
    t.equal(valid.status, 200, 'a valid key from the same address is unaffected');
    t.match(
      await s.metrics(),
      /^flowplan_rate_limit_refusals_total\{reason="failed-credential"\} [1-9]\d*$/m,
      'counted on /metrics',
    );
  },
);

t.test(
  'behind a trusted proxy: one budget per client, IPv6 by /64, and the budgets stay bounded',
  async (t) => {
    const s = await startTestServer(
      t,
      { failedCredentialsPerMinute: 1, failedCredentialsBurst: 3, failedCredentialAddresses: 200 },
      { TRUST_PROXY: '1' },
    );
    const from = (address: string) =>
      s.api('GET', '/v1/me', { token: randomKey(), headers: { 'x-forwarded-for': address } });
    for (let i = 0; i < 3; i++) t.equal((await from(`2001:db8:1:2::${i + 1}`)).status, 401);
    assertError(
      t,
      await from('2001:db8:1:2:ffff::9'),
      429,
      'RATE_LIMITED',
      'another address of the same /64 shares the budget',
    );
    t.equal((await from('2001:db8:1:3::1')).status, 401, 'the next /64 has its own');
    t.equal((await from('198.51.100.7')).status, 401, 'so has another client');

    // A flood of distinct addresses and keys: the budgets held never pass their bound.
    let next = 0;
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        while (next < 1000) {
          const n = next++;
          await from(`10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`);
        }
      }),
    );
    const held = Number(/^flowplan_failed_credential_budgets (\d+)$/m.exec(await s.metrics())?.[1]);
    t.ok(held > 0 && held <= 200, `at most 200 addresses held after 1,000 (${held})`);
    t.equal(
      (
        await s.api('GET', '/v1/me', {
          token: s.adminKey,
          headers: { 'x-forwarded-for': '2001:db8:1:2::1' },
        })
      ).status,
      200,
      'valid credentials are never refused for it',
    );
  },
);

/**
 * One budget per credential across processes: three servers on one database behind a
 * round-robin client admit one credential its 240 burst plus 2 a second in total (within 5%),
 * not 240 each; a 304 still spends nothing; another credential has its own budget.
 */
import t from 'tap';
import { startApp, type RunningApp } from '../../../src/compose.ts';
import { createKey } from '../../../src/services/auth/provision.ts';
import { loadConfig } from '../../../src/platform/config.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { request, until } from '../../helpers/server.ts';
import type { Flow } from '../../helpers/wire.ts';

const PER_MINUTE = 120;
const BURST = 240;

t.test('three processes share one credential budget', async (t) => {
  const databaseUrl = await createTestDatabase(t);
  const config = loadConfig(
    { LOG_LEVEL: 'silent' },
    { port: 0, databaseUrl, rateLimitPerMinute: PER_MINUTE, rateLimitBurst: BURST },
  );
  const apps: RunningApp[] = [];
  for (let i = 0; i < 3; i++) {
    const app = await startApp(config);
    t.teardown(() => app.close());
    apps.push(app);
  }
  const workspaceId = apps[0]!.demo!.workspaceId;
  const newKey = async () =>
    (
      await createKey(apps[0]!.services.sql, {
        workspaceId,
        role: 'admin',
        scopes: ['flows:read', 'flows:write'],
      })
    ).key;

  // Round robin, four requests in flight, until 400 have been answered.
  async function flood(
    key: string,
    path: string,
    headers: Record<string, string> = {},
  ): Promise<{ statuses: Record<number, number>; seconds: number }> {
    const statuses: Record<number, number> = {};
    let next = 0;
    const started = Date.now();
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next < 400) {
          const app = apps[next++ % apps.length]!;
          const res = await request(app.url, 'GET', path, { token: key, headers });
          statuses[res.status] = (statuses[res.status] ?? 0) + 1;
        }
      }),
    );
    return { statuses, seconds: (Date.now() - started) / 1000 };
  }

  const key = await newKey();
  const { statuses, seconds } = await flood(key, '/v1/me');
  const expected = BURST + (PER_MINUTE / 60) * seconds;
  const admitted = statuses[200] ?? 0;
  t.equal(admitted + (statuses[429] ?? 0), 400, `only 200 and 429 (${JSON.stringify(statuses)})`);
  t.ok(
    Math.abs(admitted - expected) <= 0.05 * BURST,
    `admitted ${admitted} in ${seconds.toFixed(1)} s across three processes; the budget allows ${expected.toFixed(0)}`,
  );

  // A process whose lease is not answered within 250 ms admits from a bucket of its own
  // (a loaded machine, or a slow database); the late lease's "empty" then refuses what follows.
  // So: refused within a few requests, never a burst's worth.
  let refused = await request(apps[1]!.url, 'GET', '/v1/me', { token: key });
  let admittedAfter = 0;
  while (refused.status === 200 && admittedAfter < 20) {
    admittedAfter += 1;
    refused = await request(apps[1]!.url, 'GET', '/v1/me', { token: key });
  }
  t.equal(refused.status, 429, 'every process refuses once the shared budget is spent');
  t.ok(
    admittedAfter <= 5,
    `admitted ${admittedAfter} more before refusing (its own bucket, while a lease was late)`,
  );
  t.ok(Number(refused.headers.get('retry-after')) >= 1);

  // 304s spend nothing, whichever process answers them.
  const other = await newKey();
  const flow = await request<Flow>(apps[0]!.url, 'POST', '/v1/flows', {
    token: other,
    body: { name: 'Polled', tasks: [] },
  });
  const etag =
    flow.headers.get('etag') ??
    (await request(apps[0]!.url, 'GET', `/v1/flows/${flow.body.id}`, { token: other })).headers.get(
      'etag',
    )!;
  const polled = await flood(other, `/v1/flows/${flow.body.id}`, { 'if-none-match': etag });
  t.strictSame(polled.statuses, { 304: 400 }, 'every conditional poll answered 304, none refused');
  // Tokens a process leased and did not use go back to the shared bucket once it is idle.
  const sql = apps[0]!.services.sql;
  await until(
    async () =>
      (
        await sql<
          { n: number }[]
        >`select count(*)::int as n from rate_buckets where tokens >= ${BURST - 5}`
      )[0]!.n,
    (n) => n === 1,
  );
  const after = await request(apps[2]!.url, 'GET', '/v1/me', { token: other });
  t.equal(after.status, 200);
  // Had the 400 polls spent, nothing would be left. What this request's own lease takes (up to
  // 1/40 of the burst, sized by the process's recent rate) shows in the header besides the 5.
  t.ok(
    Number(after.headers.get('x-ratelimit-remaining')) >= BURST - 5 - BURST / 40,
    `the polls spent nothing (${after.headers.get('x-ratelimit-remaining')} left)`,
  );
});

t.test('the OAuth token and revoke endpoints spend the per-address budget', async (t) => {
  const databaseUrl = await createTestDatabase(t);
  const app = await startApp(
    loadConfig(
      { LOG_LEVEL: 'silent' },
      { port: 0, databaseUrl, addressRateLimitPerMinute: 1, addressRateLimitBurst: 3 },
    ),
  );
  t.teardown(() => app.close());
  const post = (path: string) =>
    fetch(app.url + path, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'grant_type=nonsense&token=x',
    });
  const statuses = [];
  for (const path of ['/v1/oauth/token', '/v1/oauth/revoke', '/v1/oauth/token'])
    statuses.push((await post(path)).status);
  t.notOk(statuses.includes(429), `the burst of 3 is answered (${statuses.join(', ')})`);
  for (const path of ['/v1/oauth/token', '/v1/oauth/revoke']) {
    const refused = await post(path);
    t.equal(refused.status, 429, `${path}: then this address is refused`);
    t.equal(((await refused.json()) as { error: { code: string } }).error.code, 'RATE_LIMITED');
  }
});

/**
 * Issue 30, items 6 and 8: 3,000 anonymous WebSocket upgrades from one address were accepted
 * in 2.3 s with no budget, each waiting 10 s for its first message; and first-message
 * authentication judged every client under one address (''), so one client's bad tokens
 * pushed everyone's into 4429. Now every upgrade spends its address's budget, an address has
 * at most PENDING_UPGRADES_PER_ADDRESS upgrades waiting for their credential, and a first
 * message's failure spends its own client's budget.
 */
import t, { type Test } from 'tap';
import WebSocket from 'ws';
import { PENDING_UPGRADES_PER_ADDRESS } from '../../src/web/http/budgets.ts';
import { startTestServer, until, type TestServer } from '../helpers/server.ts';

/** A WebSocket to /v1/stream from `address` (X-Forwarded-For through one trusted hop). */
function socket(
  t: Test,
  s: TestServer,
  address: string,
  protocols: string[] = ['flowplan.v1.json'],
) {
  const ws = new WebSocket(`${s.url.replace('http', 'ws')}/v1/stream`, protocols, {
    headers: { 'x-forwarded-for': address },
  });
  const state: { code: number | null; status: number | null; body: string; messages: number } = {
    code: null,
    status: null,
    body: '',
    messages: 0,
  };
  ws.on('message', () => state.messages++);
  ws.on('close', (code) => {
    state.code = code;
  });
  ws.on('unexpected-response', (_req, res) => {
    state.status = res.statusCode ?? null;
    res.on('data', (chunk: Buffer) => (state.body += chunk.toString()));
  });
  ws.on('error', () => {});
  const opened = new Promise<boolean>((resolve) => {
    ws.once('open', () => resolve(true));
    ws.once('close', () => resolve(false));
    ws.once('unexpected-response', () => resolve(false));
  });
  t.teardown(() => ws.terminate());
  return { ws, state, opened };
}

t.test(
  `an address has at most ${PENDING_UPGRADES_PER_ADDRESS} upgrades waiting for their credential; another address is unaffected`,
  async (t) => {
    const s = await startTestServer(t, {}, { TRUST_PROXY: '1' });
    const flood = Array.from({ length: PENDING_UPGRADES_PER_ADDRESS + 5 }, () =>
      socket(t, s, '203.0.113.5'),
    );
    const opened = await Promise.all(flood.map((f) => f.opened));
    t.equal(
      opened.filter(Boolean).length,
      PENDING_UPGRADES_PER_ADDRESS,
      `${PENDING_UPGRADES_PER_ADDRESS} upgraded`,
    );
    const refused = flood.filter((_, i) => !opened[i]);
    t.equal(refused.length, 5);
    for (const f of refused) t.equal(f.state.status, 429, 'the rest: 429 on the upgrade');
    await until(
      async () => refused.map((f) => f.state.body),
      (bodies) => bodies.every((b) => b.includes('}')),
      10_000,
    );
    t.match(JSON.parse(refused[0]!.state.body), {
      error: {
        code: 'RATE_LIMITED',
        message: /waiting for their credential/,
        details: { limit: PENDING_UPGRADES_PER_ADDRESS },
      },
    });

    const other = socket(t, s, '198.51.100.5');
    t.ok(await other.opened, 'another address upgrades');
    other.ws.send(JSON.stringify({ token: s.adminKey }));

    // One of the flood authenticates: its place is free again.
    const waiting = flood.find((_, i) => opened[i])!;
    waiting.ws.send(JSON.stringify({ token: s.adminKey }));
    const next = await until(
      async () => {
        const candidate = socket(t, s, '203.0.113.5');
        return (await candidate.opened) ? candidate : (candidate.ws.terminate(), null);
      },
      (candidate) => candidate !== null,
      10_000,
    );
    t.ok(next, 'once one has sent its credential, the address may upgrade again');

    // Both authenticated sockets stream.
    await s.api('POST', '/v1/flows', {
      token: s.adminKey,
      body: { name: 'Seen', tasks: [{ name: 'A' }] },
    });
    await until(
      async () => [other.state.messages, waiting.state.messages],
      (counts) => counts.every((n) => n >= 1),
      30_000,
    );
    t.pass('both authenticated sockets received the event');
  },
);

t.test("every upgrade spends its address's budget, whatever credential it brings", async (t) => {
  const s = await startTestServer(
    t,
    { addressRateLimitPerMinute: 1, addressRateLimitBurst: 4 },
    { TRUST_PROXY: '1' },
  );
  const sockets = Array.from({ length: 5 }, () =>
    socket(t, s, '203.0.113.6', ['flowplan.v1.json', `bearer.${s.adminKey}`]),
  );
  const opened: boolean[] = [];
  for (const f of sockets) opened.push(await f.opened);
  t.strictSame(opened, [true, true, true, true, false], 'four upgrades, then none');
  t.equal(sockets[4]!.state.status, 429);
  t.ok(
    await socket(t, s, '198.51.100.6', ['flowplan.v1.json', `bearer.${s.adminKey}`]).opened,
    'another address upgrades',
  );
});

t.test(
  "a first message's bad token spends its own address's failed-credential budget, no one else's",
  async (t) => {
    const s = await startTestServer(
      t,
      { failedCredentialsPerMinute: 1, failedCredentialsBurst: 3 },
      { TRUST_PROXY: '1' },
    );
    const tryToken = async (address: string, token: string) => {
      const f = socket(t, s, address);
      t.ok(await f.opened);
      f.ws.send(JSON.stringify({ token }));
      return (await until(
        async () => f.state.code,
        (code) => code !== null,
        10_000,
      ))!;
    };
    const codes: number[] = [];
    for (let i = 0; i < 4; i++) codes.push(await tryToken('203.0.113.7', `fpk_guess${i}`));
    t.strictSame(
      codes,
      [4401, 4401, 4401, 4429],
      'the guessing address: 4401 until its budget is spent, then 4429',
    );
    t.equal(
      await tryToken('198.51.100.7', 'fpk_typo'),
      4401,
      "another client's bad token is its own first failure: 4401",
    );
    const good = socket(t, s, '203.0.113.7');
    t.ok(await good.opened);
    good.ws.send(JSON.stringify({ token: s.adminKey }));
    await s.api('POST', '/v1/flows', {
      token: s.adminKey,
      body: { name: 'Still streams', tasks: [{ name: 'A' }] },
    });
    await until(
      async () => good.state.messages,
      (n) => n >= 1,
      30_000,
    );
    t.equal(good.state.code, null, 'a valid token from the spent address still streams');
  },
);

/**
 * Caps on open event streams: per credential and per person (across their tokens), SSE and
 * WebSocket alike, answered 429 RATE_LIMITED saying which cap; a closed stream frees its place;
 * open streams are counted on /metrics by transport.
 */
import t from 'tap';
import { SCOPES } from '../../../src/services/auth/principal.ts';
import { createKey } from '../../../src/services/auth/provision.ts';
import { createPerson, firstPartyClient, personTokenOn } from '../../helpers/people.ts';
import { assertError, startTestServer, until, type TestServer } from '../../helpers/server.ts';
import { socket, sse } from './clients.ts';

const open = async (s: TestServer) => {
  const text = await s.metrics();
  const count = (transport: string) =>
    Number(
      new RegExp(`flowplan_stream_subscribers\\{transport="${transport}"\\} (\\d+)`).exec(
        text,
      )?.[1] ?? NaN,
    );
  return { sse: count('sse'), websocket: count('websocket') };
};

t.test(
  'a credential holds at most STREAMS_PER_CREDENTIAL streams, SSE and WebSocket together',
  async (t) => {
    const s = await startTestServer(
      t,
      { rateLimitPerMinute: 1_000_000, rateLimitBurst: 1_000_000 },
      { STREAMS_PER_CREDENTIAL: '2' },
    );
    const { key } = await createKey(s.sql, {
      workspaceId: s.workspaceId,
      role: 'admin',
      scopes: [...SCOPES],
    });
    const first = await sse(t, s.url, key);
    const ws = socket(t, s.url, ['flowplan.v1.json', `bearer.${key}`]);
    t.equal(first.res.status, 200);
    t.ok(await ws.opened);
    await until(
      () => open(s),
      (n) => n.sse === 1 && n.websocket === 1,
      30_000,
    );

    const third = await fetch(`${s.url}/v1/events/stream`, {
      headers: { authorization: `Bearer ${key}` },
      signal: AbortSignal.timeout(10_000),
    });
    const body = (await third.json()) as { error: { code: string; message: string } };
    assertError(
      t,
      { status: third.status, headers: third.headers, body, text: '' },
      429,
      'RATE_LIMITED',
    );
    t.match(body.error.message, /at most 2 per credential \(STREAMS_PER_CREDENTIAL\)/);
    t.ok(Number(third.headers.get('retry-after')) >= 1, 'Retry-After');
    const socketRefused = socket(t, s.url, ['flowplan.v1.json', `bearer.${key}`]);
    t.notOk(await socketRefused.opened);
    t.equal(socketRefused.state.status, 429, 'the WebSocket upgrade is refused too');
    const late = socket(t, s.url, ['flowplan.v1.json']);
    t.ok(await late.opened);
    late.ws.send(JSON.stringify({ token: key }));
    await until(
      async () => late.state.code,
      (c) => c !== null,
      30_000,
    );
    t.equal(late.state.code, 4429, 'first-message authentication: closed with 4429');
    t.match(late.state.reason, /RATE_LIMITED|Too many open event streams/);

    const other = await sse(t, s.url, s.adminKey);
    t.equal(other.res.status, 200, 'another credential is not held back');
    t.match(await s.metrics(), /flowplan_stream_refusals_total [3-9]/);

    // Closing one frees its place.
    first.close();
    await until(
      () => open(s),
      (n) => n.sse === 1,
      30_000,
    );
    const again = await sse(t, s.url, key);
    t.equal(again.res.status, 200);
  },
);

t.test('a person holds at most STREAMS_PER_PERSON streams across all their tokens', async (t) => {
  const s = await startTestServer(
    t,
    { rateLimitPerMinute: 1_000_000, rateLimitBurst: 1_000_000 },
    { STREAMS_PER_PERSON: '3' },
  );
  const user = await createPerson(s.sql, {
    email: 'many@example.com',
    name: 'Many',
    password: 'correct horse battery',
    workspaceId: s.workspaceId,
    role: 'member',
  });
  const clientId = await firstPartyClient(s);
  const tokens = await Promise.all(
    Array.from({ length: 4 }, () => personTokenOn(s, clientId, user.id)),
  );
  for (const token of tokens.slice(0, 3)) t.equal((await sse(t, s.url, token)).res.status, 200);
  const fourth = await fetch(`${s.url}/v1/events/stream`, {
    headers: { authorization: `Bearer ${tokens[3]}` },
    signal: AbortSignal.timeout(10_000),
  });
  const body = (await fourth.json()) as { error: { code: string; message: string } };
  t.equal(fourth.status, 429);
  t.equal(body.error.code, 'RATE_LIMITED');
  t.match(body.error.message, /at most 3 per person, across their tokens \(STREAMS_PER_PERSON\)/);
});

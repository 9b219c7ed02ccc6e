/**
 * Open streams' credentials, checked again twice a second: every person token's in one query
 * per round however many streams are open, a revoked one's streams closed as revoked, and a
 * database that cannot answer never taken for a revocation (closed to be retried instead).
 */
import t, { type Test } from 'tap';
import { createClient } from '../../../src/services/auth/provision.ts';
import { createPerson, personTokenOn } from '../../helpers/people.ts';
import { startTestServer, until, type TestServer } from '../../helpers/server.ts';
import { metric, socket, sse } from './clients.ts';

const server = (t: Test) =>
  startTestServer(t, { rateLimitPerMinute: 1_000_000, rateLimitBurst: 1_000_000 });

/** A member and `n` person tokens of theirs, issued through a first-party client. */
async function memberTokens(s: TestServer, n: number) {
  const user = await createPerson(s.sql, {
    email: `m${Date.now()}@example.com`,
    name: 'Member',
    password: 'correct horse battery',
    workspaceId: s.workspaceId,
    role: 'member',
  });
  const { clientId } = await createClient(s.sql, {
    workspaceId: s.workspaceId,
    role: 'admin',
    scopes: ['flows:read'],
    name: 'app',
    firstParty: true,
    redirectUris: ['http://127.0.0.1/callback'],
  });
  const tokens: string[] = [];
  for (let i = 0; i < n; i++)
    tokens.push(await personTokenOn(s, clientId, user.id, s.workspaceId, ['flows:read']));
  return { clientId, tokens };
}

t.test(
  'person-token streams cost one query a round however many, and a revoked one still closes at once',
  async (t) => {
    const s = await server(t);
    const { clientId, tokens } = await memberTokens(s, 8);
    const streams = await Promise.all(tokens.map((token) => sse(t, s.url, token)));
    for (const stream of streams) t.equal(stream.res.status, 200);
    await until(
      () => metric(s, 'flowplan_stream_subscribers{transport="sse"}'),
      (n) => n === 8,
      30_000,
    );
    const rounds0 = await metric(s, 'flowplan_stream_checks_total');
    const queries0 = await metric(s, 'flowplan_stream_check_queries_total');
    const rounds1 = await until(
      () => metric(s, 'flowplan_stream_checks_total'),
      (n) => n >= rounds0 + 6,
      30_000,
    );
    const queries1 = await metric(s, 'flowplan_stream_check_queries_total');
    // One more round may have begun between the two reads.
    t.ok(
      queries1 - queries0 <= rounds1 - rounds0 + 1,
      `${queries1 - queries0} queries in ${rounds1 - rounds0} rounds for 8 streams`,
    );
    t.ok(queries1 - queries0 >= 1, 'the tokens are checked');

    const res = await fetch(`${s.url}/v1/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: tokens[0]!, client_id: clientId }),
    });
    t.equal(res.status, 200);
    const at = Date.now();
    await until(
      async () => streams[0]!.ended(),
      (e) => e,
      30_000,
    );
    t.match(streams[0]!.frames.at(-1), { event: 'close', data: /4401/ }, 'closed as revoked');
    t.ok(Date.now() - at < 5000, `closed ${Date.now() - at} ms after the revocation`);
    t.notOk(streams[1]!.ended(), "the same person's other tokens stay open");
  },
);

t.test(
  'a database that cannot answer the check closes streams to be retried, never as revoked',
  async (t) => {
    const s = await server(t);
    const { tokens } = await memberTokens(s, 1);
    const stream = await sse(t, s.url, tokens[0]!);
    const ws = socket(t, s.url, ['flowplan.v1.json', `bearer.${tokens[0]}`]);
    t.ok(await ws.opened);
    // The check's query fails (as it would with the database out of reach) until the table is back.
    await s.sql`alter table memberships rename to memberships_away`;
    try {
      await until(
        async () => stream.ended() && ws.state.code !== null,
        (e) => e,
        30_000,
      );
    } finally {
      await s.sql`alter table memberships_away rename to memberships`;
    }
    t.match(
      stream.frames.at(-1),
      { event: 'close', data: /1013/ },
      'SSE: a close frame asking to retry',
    );
    t.notMatch(stream.frames.at(-1)?.data, /4401/);
    t.equal(ws.state.code, 1013, 'WebSocket: 1013 Try Again Later, not 4401');
    t.match(
      await s.metrics(),
      /^flowplan_stream_closes_total\{reason="unavailable"\} 2$/m,
      'two streams closed as unavailable',
    );
    // Once the database answers, the same credential streams again.
    const again = await sse(t, s.url, tokens[0]!);
    t.equal(again.res.status, 200);
  },
);

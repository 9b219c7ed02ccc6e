/**
 * Cursors are opaque and bound to their audience: a cursor this credential's audience was not
 * given (another workspace's, a person's for a key, a log position, garbage) is refused with
 * 400 on the feed, SSE (`after` and Last-Event-ID) and the WebSocket alike.
 */
import t from 'tap';
import { SCOPES } from '../../../src/services/auth/principal.ts';
import { createKey, createWorkspace } from '../../../src/services/auth/provision.ts';
import { assertError, startTestServer, until } from '../../helpers/server.ts';
import { newFlow, socket } from './clients.ts';
import type { EventPage } from '../../helpers/wire.ts';

t.test(
  'a cursor from another audience, or none at all, is refused by the feed and both streams',
  async (t) => {
    const s = await startTestServer(t, {
      rateLimitPerMinute: 1_000_000,
      rateLimitBurst: 1_000_000,
    });
    const other = await createWorkspace(s.sql, { name: 'Beta', plan: 'pro' });
    const betaKey = (
      await createKey(s.sql, { workspaceId: other.id, role: 'admin', scopes: [...SCOPES] })
    ).key;
    await newFlow(s, 'Alpha one');
    const betaFrom = (await s.api<EventPage>('GET', '/v1/events', { token: betaKey })).body
      .next as string;
    await newFlow(s, 'Beta one', betaKey);
    await newFlow(s, 'Alpha two');
    await newFlow(s, 'Beta two', betaKey);
    const beta = await until(
      async () =>
        (await s.api<EventPage>('GET', `/v1/events?after=${betaFrom}`, { token: betaKey })).body
          .items as {
          id: string;
          cursor: string;
        }[],
      (items) => items.length === 2,
      30_000,
    );
    for (const e of beta) {
      t.match(e.cursor, /^[A-Za-z0-9_-]{22}$/, 'an opaque cursor');
      t.match(e.id, /^evt_[A-Za-z0-9_-]{22}$/, 'an opaque id');
    }
    const betaCursor = beta[0]!.cursor;

    const bad = ['999999', '0', betaCursor, betaCursor.slice(0, 20) + '__', 'A'.repeat(22)];
    for (const after of bad) {
      const feed = await s.api('GET', `/v1/events?after=${after}`, { token: s.adminKey });
      assertError(t, feed, 400, 'VALIDATION_FAILED', `feed: after=${after}`);
      const sseAfter = await fetch(`${s.url}/v1/events/stream?after=${after}`, {
        headers: { authorization: `Bearer ${s.adminKey}` },
        signal: AbortSignal.timeout(10_000),
      });
      t.equal(sseAfter.status, 400, `SSE: after=${after}`);
      await sseAfter.body?.cancel();
      const sseHeader = await fetch(`${s.url}/v1/events/stream`, {
        headers: { authorization: `Bearer ${s.adminKey}`, 'last-event-id': after },
        signal: AbortSignal.timeout(10_000),
      });
      t.equal(sseHeader.status, 400, `SSE: Last-Event-ID ${after}`);
      const refusal = (await sseHeader.json()) as {
        error: { code: string; details: { errors: { pointer: string }[] } };
      };
      t.equal(refusal.error.code, 'VALIDATION_FAILED');
      t.strictSame(
        refusal.error.details.errors.map(({ pointer }) => pointer),
        ['/last-event-id'],
        'one error, naming the header',
      );
      const ws = socket(t, s.url, ['flowplan.v1.json', `bearer.${s.adminKey}`], `?after=${after}`);
      t.notOk(await ws.opened);
      t.equal(ws.state.status, 400, `WebSocket: after=${after}`);
    }
    const late = socket(t, s.url, ['flowplan.v1.json'], `?after=${betaCursor}`);
    t.ok(await late.opened);
    late.ws.send(JSON.stringify({ token: s.adminKey }));
    await until(
      async () => late.state.code,
      (c) => c !== null,
      30_000,
    );
    t.equal(late.state.code, 4400, 'WebSocket, first-message bearer: closed with 4400');
    t.match(late.state.reason, /cursor this API gave/);

    // Its own audience's cursor is accepted everywhere, and the streams resume exactly as the feed reads on.
    const ok = socket(t, s.url, ['flowplan.v1.json', `bearer.${betaKey}`], `?after=${betaFrom}`);
    t.ok(await ok.opened);
    await until(
      async () => ok.events.length,
      (n) => n >= 2,
      30_000,
    );
    t.same(ok.events.slice(0, 2), beta, 'the stream and the feed agree');
  },
);

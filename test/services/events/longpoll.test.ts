/**
 * Long polls of GET /v1/events: a credential revoked while one waits gets 401, not the events;
 * a waiter is woken only by events its audience reads (another workspace's events run no
 * query on its behalf).
 */
import t, { type Test } from 'tap';
import { SCOPES } from '../../../src/services/auth/principal.ts';
import { createKey, createWorkspace } from '../../../src/services/auth/provision.ts';
import { assertError, cli, startTestServer, until } from '../../helpers/server.ts';
import { metric, newFlow } from './clients.ts';
import type { EventPage } from '../../helpers/wire.ts';

const server = (t: Test) =>
  startTestServer(t, { rateLimitPerMinute: 1_000_000, rateLimitBurst: 1_000_000 });

t.test(
  'a long poll whose key is revoked while it waits answers 401, not the event that came after',
  async (t) => {
    const s = await server(t);
    const { id, key } = await createKey(s.sql, {
      workspaceId: s.workspaceId,
      role: 'admin',
      scopes: [...SCOPES],
    });
    const { next } = (await s.api<EventPage>('GET', '/v1/events', { token: key })).body;
    const poll = s.api<EventPage>('GET', `/v1/events?after=${next}&wait=25`, { token: key });
    await until(
      () => metric(s, 'flowplan_event_waiters'),
      (n) => n === 1,
      30_000,
    );
    const revoked = await cli(s.databaseUrl, ['key', 'revoke', '--id', id]);
    t.equal(revoked.code, 0, revoked.stderr);
    await newFlow(s, 'After the revocation');
    const res = await poll;
    assertError(t, res, 401, 'CREDENTIAL_REVOKED');
    t.notOk(res.body.items, 'no events in the answer');
  },
);

t.test('a long poll is woken only by events its workspace reads', async (t) => {
  const s = await server(t);
  const other = await createWorkspace(s.sql, { name: 'Other' });
  const { key: otherKey } = await createKey(s.sql, {
    workspaceId: other.id,
    role: 'admin',
    scopes: [...SCOPES],
  });
  const { next } = (await s.api<EventPage>('GET', '/v1/events', { token: s.adminKey })).body;
  const poll = s.api<EventPage>('GET', `/v1/events?after=${next}&wait=25`, {
    token: s.adminKey,
  });
  await until(
    () => metric(s, 'flowplan_event_waiters'),
    (n) => n === 1,
    30_000,
  );
  const { next: otherNext } = (await s.api<EventPage>('GET', '/v1/events', { token: otherKey }))
    .body;
  for (let i = 0; i < 5; i++) await newFlow(s, `Theirs ${i}`, otherKey);
  // The other workspace's events are in the log (given positions: read by its own feed)…
  await until(
    async () =>
      (await s.api<EventPage>('GET', `/v1/events?after=${otherNext}`, { token: otherKey })).body
        .items.length,
    (n) => n === 5,
    30_000,
  );
  // …and woke no waiter here.
  await until(
    () => metric(s, 'flowplan_stream_lag_seconds_count'),
    (n) => n >= 5,
    30_000,
  );
  t.equal(await metric(s, 'flowplan_event_waiter_wakes_total'), 0, 'no waiter woken by them');
  t.equal(await metric(s, 'flowplan_event_waiters'), 1, 'ours still waits');
  const flow = await newFlow(s, 'Ours');
  const res = await poll;
  t.equal(res.status, 200);
  t.match(res.body.items[0], { type: 'flow.created', data: { flowId: flow.id } });
  t.equal(await metric(s, 'flowplan_event_waiter_wakes_total'), 1, 'woken once, by its own event');
});

/**
 * Events reach readers when they commit, whatever wrote them: every event write wakes the
 * outbox drain (its idle poll is raised to a minute here, so an event that did not wake it
 * would not arrive within the test's wait).
 */
import t, { type Test } from 'tap';
import type { Overrides } from '../../../src/platform/config.ts';
import { startTestServer, until } from '../../helpers/server.ts';
import { newFlow, sse } from './clients.ts';
import type { Comment, EventPage } from '../../helpers/wire.ts';

const server = (t: Test, overrides: Overrides = {}) =>
  startTestServer(t, {
    rateLimitPerMinute: 1_000_000,
    rateLimitBurst: 1_000_000,
    outboxPollMs: 60_000,
    ...overrides,
  });

t.test(
  "a comment reaches an open stream and a long poll without waiting for the drain's poll",
  async (t) => {
    const s = await server(t);
    const flow = await newFlow(s, 'Talk');
    const stream = await sse(t, s.url, s.adminKey, '?types=comment.created');
    const { next } = (await s.api<EventPage>('GET', '/v1/events', { token: s.adminKey })).body;
    const poll = s.api<EventPage>('GET', `/v1/events?after=${next}&types=comment.created&wait=25`, {
      token: s.adminKey,
    });
    const comment = await s.api<Comment>(
      'POST',
      `/v1/flows/${flow.id}/tasks/${flow.tasks[0]!.id}/comments`,
      { token: s.adminKey, body: { body: 'on time' } },
    );
    t.equal(comment.status, 201);
    // Well inside the minute the drain would otherwise sleep.
    await until(
      async () => stream.events().length,
      (n) => n >= 1,
      10_000,
    );
    t.match(stream.events()[0], { type: 'comment.created', data: { commentId: comment.body.id } });
    const polled = await poll;
    t.equal(polled.status, 200);
    t.equal(polled.body.items.length, 1, 'the long poll answers with one event');
    t.match(
      polled.body.items[0],
      { type: 'comment.created', data: { commentId: comment.body.id } },
      'the long poll answers with it',
    );
  },
);

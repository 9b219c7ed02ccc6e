/**
 * The event feed, GET /v1/events: list then follow, cursors, filters, long polls, who sees
 * what (another workspace nothing; a guest its shared flows until the share is revoked), and
 * retention's 410. Positions are given after commit: transactions held open on purpose never
 * make a reader skip or repeat an event.
 */
import t, { type Test } from 'tap';
import { SCOPES } from '../../../src/services/auth/principal.ts';
import { createKey, createWorkspace } from '../../../src/services/auth/provision.ts';
import type { Db } from '../../../src/storage/db.ts';
import { EventLogRetention } from '../../../src/services/events/retention.ts';
import { assertError, startTestServer, until, type TestServer } from '../../helpers/server.ts';
import { createPerson, personToken } from '../../helpers/people.ts';
import type { EventPage, Flow, Refusal, Share, Task } from '../../helpers/wire.ts';
import { expireCursor } from './clients.ts';

const server = (t: Test) =>
  startTestServer(t, { rateLimitPerMinute: 1_000_000, rateLimitBurst: 1_000_000 });

interface Event {
  id: string;
  cursor: string;
  type: string;
  timestamp: string;
  workspaceId: string;
  data: Record<string, unknown>;
}

/** Follows the feed from `after` until `done` holds for everything read; returns what was read and the last cursor. */
async function follow(
  s: TestServer,
  token: string,
  after: string,
  done: (events: Event[]) => boolean,
  query = '',
): Promise<{ events: Event[]; next: string }> {
  const events: Event[] = [];
  let next = after;
  await until(
    async () => {
      for (;;) {
        const res = await s.api<EventPage>('GET', `/v1/events?after=${next}&size=50${query}`, {
          token,
        });
        if (res.status !== 200) throw new Error(`feed answered ${res.status} ${res.text}`);
        events.push(...res.body.items);
        next = res.body.next;
        if (!res.body.hasMore) return events;
      }
    },
    done,
    30_000,
  );
  return { events, next };
}

t.test(
  'list, then follow: every event once, in order, shaped like a webhook payload',
  async (t) => {
    const s = await server(t);
    const start = await s.api<EventPage>('GET', '/v1/events', { token: s.adminKey });
    t.equal(start.status, 200);
    t.same(start.body.items, [], 'no cursor: no items');
    t.match(start.body, { next: /^[A-Za-z0-9_-]{22}$/, hasMore: false });

    const flow = await s.api<Flow>('POST', '/v1/flows', {
      token: s.adminKey,
      body: { name: 'Launch', tasks: [{ name: 'Design' }, { name: 'Build', after: [0] }] },
    });
    t.equal(flow.status, 201);
    const [design] = flow.body.tasks as [Task];
    t.equal(
      (
        await s.api('POST', `/v1/flows/${flow.body.id}/tasks/${design.id}/start`, {
          token: s.adminKey,
        })
      ).status,
      200,
    );
    t.equal(
      (
        await s.api('POST', `/v1/flows/${flow.body.id}/tasks/${design.id}/complete`, {
          token: s.adminKey,
        })
      ).status,
      200,
    );

    const { events, next } = await follow(s, s.adminKey, start.body.next, (e) =>
      e.some((x) => x.type === 'task.unblocked'),
    );
    t.same(
      events.map((e) => e.type),
      ['flow.created', 'task.started', 'task.completed', 'task.unblocked'],
    );
    t.match(events[0], {
      id: /^evt_[A-Za-z0-9_-]{22}$/,
      cursor: /^[A-Za-z0-9_-]{22}$/,
      workspaceId: s.workspaceId,
      timestamp: /^\d{4}-\d\d-\d\dT/,
      data: { flowId: flow.body.id, name: 'Launch' },
    });
    t.same(Object.keys(events[0]!).sort(), [
      'cursor',
      'data',
      'id',
      'timestamp',
      'type',
      'workspaceId',
    ]);
    const rest = await s.api<EventPage>('GET', `/v1/events?after=${events[1]!.cursor}`, {
      token: s.adminKey,
    });
    t.same(rest.body.items, events.slice(2), 'each cursor reads on after its event');
    t.equal(next, events[events.length - 1]!.cursor, 'next is the last cursor read');

    const empty = await s.api('GET', `/v1/events?after=${next}`, { token: s.adminKey });
    t.same(empty.body, { items: [], next, hasMore: false }, 'nothing new: the same cursor back');

    const paged = await s.api<EventPage>('GET', `/v1/events?after=${start.body.next}&size=2`, {
      token: s.adminKey,
    });
    t.same(paged.body.items, events.slice(0, 2));
    t.equal(paged.body.hasMore, true);
    t.equal(paged.body.next, events[1]!.cursor);

    const completed = await s.api<EventPage>(
      'GET',
      `/v1/events?after=${start.body.next}&types=task.completed,task.unblocked`,
      { token: s.adminKey },
    );
    t.same(completed.body.items, events.slice(2), 'types filter');
    t.equal(completed.body.next, next);
    const other = await s.api<Flow>('POST', '/v1/flows', {
      token: s.adminKey,
      body: { name: 'Other' },
    });
    const onlyFirst = await follow(s, s.adminKey, next, () => true, `&flowId=${flow.body.id}`);
    t.same(onlyFirst.events, [], 'flowId filter leaves out the other flow');
    const all = await follow(s, s.adminKey, next, (e) => e.length === 1);
    t.equal(all.events[0]!.data.flowId, other.body.id);

    assertError(
      t,
      await s.api('GET', `/v1/events?after=${start.body.next}&types=task.exploded`, {
        token: s.adminKey,
      }),
      400,
      'VALIDATION_FAILED',
    );
    assertError(
      t,
      await s.api('GET', '/v1/events?after=abc', { token: s.adminKey }),
      400,
      'VALIDATION_FAILED',
    );
    // A position is not a cursor: cursors are sealed for the audience they were given to.
    // Changing the last character may touch only its 4 unused bits (the same bytes): refused too.
    const changedAt = (i: number) =>
      next.slice(0, i) + (next[i] === 'A' ? 'B' : 'A') + next.slice(i + 1);
    for (const after of ['999999999', '0', 'A'.repeat(22), changedAt(21), changedAt(10)]) {
      const res = await s.api<Refusal>('GET', `/v1/events?after=${after}`, { token: s.adminKey });
      assertError(t, res, 400, 'VALIDATION_FAILED', `after=${after} is refused`);
      t.equal(res.body.error.details.errors[0].pointer, '/after');
    }
    assertError(
      t,
      await s.api('GET', '/v1/events?size=1001', { token: s.adminKey }),
      400,
      'VALIDATION_FAILED',
    );
    assertError(
      t,
      await s.api('GET', '/v1/events?wait=31', { token: s.adminKey }),
      400,
      'VALIDATION_FAILED',
    );
    const writeOnly = await createKey(s.sql, {
      workspaceId: s.workspaceId,
      role: 'admin',
      scopes: ['flows:write'],
    });
    assertError(
      t,
      await s.api('GET', '/v1/events', { token: writeOnly.key }),
      403,
      'INSUFFICIENT_SCOPE',
    );
    assertError(t, await s.api('GET', '/v1/events'), 401, 'UNAUTHORIZED');
  },
);

t.test('a long poll answers as soon as an event is there', async (t) => {
  const s = await server(t);
  const { next } = (await s.api<EventPage>('GET', '/v1/events', { token: s.adminKey })).body;
  const waiting = s.api<EventPage>('GET', `/v1/events?after=${next}&wait=30`, {
    token: s.adminKey,
  });
  let answered = false;
  void waiting.then(() => {
    answered = true;
  });
  // The poll is held while nothing happens (a read in between goes past it).
  await s.api('GET', '/v1/events', { token: s.adminKey });
  t.equal(answered, false, 'still waiting');
  const started = Date.now();
  await s.api('POST', '/v1/flows', { token: s.adminKey, body: { name: 'Wake' } });
  const res = await waiting;
  t.equal(res.status, 200);
  t.equal(res.body.items.length, 1, 'the one event that woke it');
  t.match(res.body.items[0], { type: 'flow.created', data: { name: 'Wake' } });
  t.ok(Date.now() - started < 25_000, 'answered by the event, not the timeout');
  const none = await s.api<EventPage>('GET', `/v1/events?after=${res.body.next}&wait=1`, {
    token: s.adminKey,
  });
  t.same(
    none.body,
    { items: [], next: res.body.next, hasMore: false },
    'a wait that runs out answers empty',
  );
});

t.test(
  'each credential sees the events of flows it can read, and a revoked guest nothing more',
  async (t) => {
    const s = await server(t);
    const other = await createWorkspace(s.sql, { name: 'Other', plan: 'pro' });
    const otherKey = (
      await createKey(s.sql, { workspaceId: other.id, role: 'admin', scopes: [...SCOPES] })
    ).key;
    const { id: guestId } = await createPerson(s.sql, {
      email: 'gia@example.com',
      name: 'Gia',
      password: 'long enough password',
      workspaceId: other.id,
      role: 'admin',
    });
    const guest = await personToken(s, guestId, other.id);
    const now = async (token: string) =>
      (await s.api<EventPage>('GET', '/v1/events', { token })).body.next as string;
    const from = await now(s.adminKey);
    const [fromOther, fromGuest] = [await now(otherKey), await now(guest)];
    t.not(fromOther, from, 'each audience has cursors of its own');
    const refused = await s.api('GET', `/v1/events?after=${from}`, { token: otherKey });
    assertError(t, refused, 400, 'VALIDATION_FAILED', "another workspace's cursor is refused");
    assertError(
      t,
      await s.api('GET', `/v1/events?after=${fromOther}`, { token: guest }),
      400,
      'VALIDATION_FAILED',
      "a person's cursors are not their workspace key's",
    );

    const shared = (
      await s.api<Flow>('POST', '/v1/flows', { token: s.adminKey, body: { name: 'Shared' } })
    ).body.id as string;
    const secret = (
      await s.api<Flow>('POST', '/v1/flows', { token: s.adminKey, body: { name: 'Secret' } })
    ).body.id as string;
    const theirs = (
      await s.api<Flow>('POST', '/v1/flows', { token: otherKey, body: { name: 'Theirs' } })
    ).body.id as string;
    const share = await s.api<Share>('POST', `/v1/flows/${shared}/shares`, {
      token: s.adminKey,
      body: { email: 'gia@example.com' },
    });
    t.equal(share.status, 201);
    await s.api('PATCH', `/v1/flows/${shared}`, {
      token: s.adminKey,
      body: { description: 'seen by the guest' },
    });
    await s.api('PATCH', `/v1/flows/${secret}`, {
      token: s.adminKey,
      body: { description: 'never seen' },
    });

    const mine = await follow(
      s,
      s.adminKey,
      from,
      (e) => e.filter((x) => x.type === 'flow.updated').length === 2,
    );
    t.same(
      new Set(mine.events.map((e) => e.data.flowId)),
      new Set([shared, secret]),
      'the owner sees its flows only',
    );
    const them = await follow(s, otherKey, fromOther, (e) => e.length === 1);
    t.same(
      them.events.map((e) => e.data.flowId),
      [theirs],
      'the other workspace sees its own only',
    );
    const guestSees = await follow(s, guest, fromGuest, (e) =>
      e.some((x) => x.type === 'flow.updated'),
    );
    t.same(
      new Set(guestSees.events.map((e) => e.data.flowId)),
      new Set([shared, theirs]),
      'a guest: its workspace and the shared flow',
    );
    t.notOk(
      guestSees.events.some((e) => e.data.flowId === secret),
      'never the unshared flow',
    );

    t.equal(
      (await s.api('DELETE', `/v1/flows/${shared}/shares/${share.body.id}`, { token: s.adminKey }))
        .status,
      204,
    );
    await s.api('PATCH', `/v1/flows/${shared}`, {
      token: s.adminKey,
      body: { description: 'after the revocation' },
    });
    const marker = (
      await s.api<Flow>('POST', '/v1/flows', { token: otherKey, body: { name: 'Marker' } })
    ).body.id as string;
    const later = await follow(s, guest, guestSees.next, (e) =>
      e.some((x) => x.data.flowId === marker),
    );
    t.notOk(
      later.events.some((e) => e.data.flowId === shared),
      'nothing more of the flow once the share is revoked',
    );
  },
);

t.test(
  'positions are given after commit: transactions held open never make a reader skip or repeat',
  async (t) => {
    const s = await server(t);
    const start = (await s.api<EventPage>('GET', '/v1/events', { token: s.adminKey })).body
      .next as string;
    const made = await Promise.all(
      ['A', 'B', 'C', 'D', 'E', 'F'].map(
        async (name) =>
          (await s.api<Flow>('POST', '/v1/flows', { token: s.adminKey, body: { name } })).body
            .id as string,
      ),
    );
    const flows = made.slice(0, 4);
    const from = (await follow(s, s.adminKey, start, (e) => e.length === 6)).next;
    const insert = (tx: Db, flowId: string, task: string) =>
      tx`insert into outbox (workspace_id, flow_id, type, data) values (${s.workspaceId}, ${flowId}, 'task.updated', ${tx.json({ flowId, taskId: task, changes: ['name'] })})`;

    // A reader following all along, a page of 7 at a time.
    const total = 2 + 4 * 16;
    const reader = (async () => {
      const seen: Event[] = [];
      let cursor = from;
      while (seen.length < total) {
        const res = await s.api<EventPage>('GET', `/v1/events?after=${cursor}&size=7&wait=1`, {
          token: s.adminKey,
        });
        seen.push(...res.body.items);
        cursor = res.body.next;
      }
      return seen;
    })();

    // Two events whose ids are taken first, in transactions held open until later ones were drained and read
    // (on flows of their own: a flow's commits are serialised by its version, so its ids are in commit order).
    const held = [made[4]!, made[5]!].map((flowId, i) => {
      let inserted!: () => void;
      let release!: () => void;
      const ready = new Promise<void>((resolve) => (inserted = resolve));
      const released = new Promise<void>((resolve) => (release = resolve));
      const done = s.sql.begin(async (tx) => {
        await insert(tx, flowId, `late_${i}`);
        inserted();
        await released;
      });
      return { ready, release, done };
    });
    await Promise.all(held.map((h) => h.ready));
    const written = new Map<string, string[]>(flows.map((f) => [f, []]));
    const write = (from: number, to: number) =>
      Promise.all(
        flows.map(async (flowId, w) => {
          for (let i = from; i < to; i++) {
            const task = `tsk_${w}_${i}`;
            await s.sql.begin(async (tx) => {
              await insert(tx, flowId, task);
              if ((i + w) % 3 === 0) await new Promise((resolve) => setTimeout(resolve, 20));
            });
            written.get(flowId)!.push(task);
          }
        }),
      );
    await write(0, 8);
    // The later events are stamped and visible while the first two are still uncommitted.
    await follow(s, s.adminKey, from, (e) => e.length >= 32);
    held[0]!.release();
    await held[0]!.done;
    await write(8, 16);
    held[1]!.release();
    await held[1]!.done;

    const seen = await reader;
    const ids = seen.map((e) => e.id);
    t.equal(new Set(ids).size, ids.length, 'no event twice');
    t.equal(ids.length, total, 'every event');
    t.ok(
      seen.some((e) => e.data.taskId === 'late_0') && seen.some((e) => e.data.taskId === 'late_1'),
      'the events that committed late were not skipped',
    );
    for (const flowId of flows) {
      t.same(
        seen.filter((e) => e.data.flowId === flowId).map((e) => e.data.taskId),
        written.get(flowId),
        "each flow's events in commit order",
      );
    }
    const [late] = await s.sql<
      { id: string; position: string }[]
    >`select id, position from outbox where data->>'taskId' = 'late_0'`;
    const [early] = await s.sql<
      { id: string; position: string }[]
    >`select id, position from outbox where data->>'taskId' = 'tsk_0_7'`;
    t.ok(
      BigInt(late!.id) < BigInt(early!.id) && BigInt(late!.position) > BigInt(early!.position),
      'id taken first, position given after the later commit',
    );
  },
);

t.test(
  'a cursor past retention answers 410 CURSOR_EXPIRED with the oldest cursor that loses nothing',
  async (t) => {
    const s = await server(t);
    const quiet = await createWorkspace(s.sql, { name: 'Quiet', plan: 'pro' });
    const quietKey = (
      await createKey(s.sql, { workspaceId: quiet.id, role: 'admin', scopes: [...SCOPES] })
    ).key;
    const quietNow = (await s.api<EventPage>('GET', '/v1/events', { token: quietKey })).body.next;
    const from = (await s.api<EventPage>('GET', '/v1/events', { token: s.adminKey })).body.next;
    await s.api('POST', '/v1/flows', { token: s.adminKey, body: { name: 'Old' } });
    const { next } = await follow(s, s.adminKey, from, (e) => e.length === 1);
    const retention = new EventLogRetention(s.sql, 7, s.app.services.log);
    const { expired, dropped, created } = await expireCursor(s, retention, s.adminKey, from);
    t.ok(dropped.length >= 1, `partitions dropped: ${dropped.join(', ')}`);
    t.ok(created.length >= 1, 'partitions made ahead');
    assertError(t, expired, 410, 'CURSOR_EXPIRED');
    t.equal(expired.body.error.details.oldest, next, 'the oldest cursor is the last one dropped');
    // Another workspace's cursor is not expired by the loss of events it could never see.
    t.same(
      (await s.api('GET', `/v1/events?after=${quietNow}`, { token: quietKey })).body,
      { items: [], next: quietNow, hasMore: false },
      'a quiet workspace keeps its cursor',
    );
    t.same(
      (await s.api<EventPage>('GET', '/v1/events', { token: quietKey })).body.next,
      quietNow,
      "and its cursor of now tells nothing of others' events",
    );
    const resumed = await s.api('GET', `/v1/events?after=${expired.body.error.details.oldest}`, {
      token: s.adminKey,
    });
    t.same(resumed.body, { items: [], next, hasMore: false });
    const [count] = await s.sql<{ n: number }[]>`select count(*)::int as n from outbox`;
    t.equal(count!.n, 0, 'the rows went with their partitions');
    // Today's partition is made again (as at every start and hour), and writes go on.
    await retention.prepare();
    t.equal(
      (await s.api('POST', '/v1/flows', { token: s.adminKey, body: { name: 'New' } })).status,
      201,
    );
  },
);

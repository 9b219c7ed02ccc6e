/**
 * Feed positions numbered per workspace (sql/0029, issue 36): a workspace's events are
 * numbered 1, 2, 3… whatever other workspaces do; a person who reads several workspaces (their
 * own and flows shared with them) holds one cursor that names each, page after page and across
 * streams; and a cursor handed out before the upgrade reads on exactly where it stood.
 */
import t, { type Test } from 'tap';
import { startApp } from '../../../src/compose.ts';
import { loadConfig } from '../../../src/platform/config.ts';
import { SCOPES } from '../../../src/services/auth/principal.ts';
import { bootstrapDemo } from '../../../src/services/auth/bootstrap.ts';
import { createKey, createWorkspace } from '../../../src/services/auth/provision.ts';
import { CursorKeys } from '../../../src/services/events/cursor.ts';
import { EventLogRetention } from '../../../src/services/events/retention.ts';
import { connect } from '../../../src/storage/db.ts';
import { listMigrations, migrate } from '../../../src/storage/migrate.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { createPerson, personToken } from '../../helpers/people.ts';
import {
  assertError,
  request,
  startTestServer,
  until,
  type TestServer,
} from '../../helpers/server.ts';
import type { EventPage, Flow } from '../../helpers/wire.ts';
import { expireCursor, sse, type Event } from './clients.ts';

const server = (t: Test) =>
  startTestServer(t, { rateLimitPerMinute: 1_000_000, rateLimitBurst: 1_000_000 });

/** Pages of `size` from `after` until `done` holds for what was read; every page's `next` too. */
async function pages(
  s: TestServer,
  token: string,
  after: string,
  done: (events: Event[]) => boolean,
  size = 1,
): Promise<{ events: Event[]; nexts: string[] }> {
  const events: Event[] = [];
  const nexts: string[] = [];
  let next = after;
  await until(
    async () => {
      for (;;) {
        const res = await s.api<EventPage>('GET', `/v1/events?after=${next}&size=${size}`, {
          token,
        });
        if (res.status !== 200) throw new Error(`feed answered ${res.status} ${res.text}`);
        events.push(...(res.body.items as Event[]));
        next = res.body.next;
        nexts.push(next);
        if (!res.body.hasMore) return events;
      }
    },
    done,
    30_000,
  );
  return { events, nexts };
}

/** An admin key of a workspace, every scope. */
const keyOf = async (s: TestServer, workspaceId: string) =>
  (await createKey(s.sql, { workspaceId, role: 'admin', scopes: [...SCOPES] })).key;

/** A person who is an admin of a workspace of their own, other than the server's, and their token. */
async function personAtHome(s: TestServer, email: string, name: string) {
  const home = await createWorkspace(s.sql, { name: 'Home', plan: 'pro' });
  const { id } = await createPerson(s.sql, {
    email,
    name,
    password: 'long enough password',
    workspaceId: home.id,
    role: 'admin',
  });
  return { home, token: await personToken(s, id, home.id) };
}

/** The flows of the flow.updated events read, in order. */
const described = (events: Event[]) =>
  events.filter((e) => e.type === 'flow.updated').map((e) => e.data.flowId as string);

t.test('each workspace numbers its events on its own, in the order they committed', async (t) => {
  const s = await server(t);
  const other = await createWorkspace(s.sql, { name: 'Other', plan: 'pro' });
  const otherKey = await keyOf(s, other.id);
  const quietFrom = (await s.api<EventPage>('GET', '/v1/events', { token: otherKey })).body.next;
  for (let i = 0; i < 6; i++) {
    await s.api('POST', '/v1/flows', { token: s.adminKey, body: { name: `Mine ${i}` } });
    if (i % 2 === 0)
      await s.api('POST', '/v1/flows', { token: otherKey, body: { name: `Theirs ${i}` } });
  }
  await until(
    async () =>
      (
        await s.sql`select count(*)::int as n from outbox
          where workspace_id = any(${[s.workspaceId, other.id]}) and seq is null`
      )[0]!.n as number,
    (n) => n === 0,
  );
  const rows = await s.sql<{ workspaceId: string; seq: string; position: string }[]>`
    select workspace_id, seq::text, position::text from outbox
    where workspace_id = any(${[s.workspaceId, other.id]}) order by position`;
  for (const ws of [s.workspaceId, other.id]) {
    const mine = rows.filter((r) => r.workspaceId === ws);
    t.same(
      mine.map((r) => Number(r.seq)),
      Array.from({ length: mine.length }, (_, i) => i + 1),
      `${ws === other.id ? 'the other' : 'one'} workspace's events are 1, 2, 3… in drain order, the other's never counted`,
    );
  }
  t.equal(mine(rows, other.id), 3, 'the other workspace made three');
  t.equal(
    new Set(rows.map((r) => r.position)).size,
    rows.length,
    'the drain order is one order over both',
  );
  // The other workspace's cursor of now moved by its own three events only.
  const theirs = await pages(s, otherKey, quietFrom, (e) => e.length >= 3, 50);
  t.same(
    theirs.events.map((e) => e.data.name),
    ['Theirs 0', 'Theirs 2', 'Theirs 4'],
  );
  const nowAgain = (await s.api<EventPage>('GET', '/v1/events', { token: otherKey })).body.next;
  t.equal(nowAgain, theirs.nexts.at(-1), 'its cursor of now is where its last event left it');
});

function mine(rows: { workspaceId: string }[], ws: string): number {
  return rows.filter((r) => r.workspaceId === ws).length;
}

t.test(
  'a person reading three workspaces holds one cursor: pages of one, every event once, in order, resumed from any cursor, on the feed and a stream',
  async (t) => {
    const s = await server(t);
    const { home, token: pia } = await personAtHome(s, 'pia@example.com', 'Pia');
    const second = await createWorkspace(s.sql, { name: 'Second', plan: 'pro' });
    const homeKey = await keyOf(s, home.id);
    const secondKey = await keyOf(s, second.id);
    const flowOf = async (token: string, name: string) =>
      (await s.api<Flow>('POST', '/v1/flows', { token, body: { name } })).body.id as string;
    const own = await flowOf(homeKey, 'Own');
    const a = await flowOf(s.adminKey, 'Shared A');
    const b = await flowOf(secondKey, 'Shared B');
    await flowOf(secondKey, 'Not shared');
    for (const [flow, token] of [
      [a, s.adminKey],
      [b, secondKey],
    ] as const) {
      const share = await s.api('POST', `/v1/flows/${flow}/shares`, {
        token,
        body: { email: 'pia@example.com' },
      });
      t.equal(share.status, 201);
    }
    const from = (await s.api<EventPage>('GET', '/v1/events', { token: pia })).body.next;
    t.ok(from.length > 22, "a person's cursor names each workspace it reads");

    // Twelve changes, turn by turn in the three workspaces, and one in a flow not shared.
    const expected: string[] = [];
    for (let round = 0; round < 4; round++) {
      for (const [flow, token, label] of [
        [own, homeKey, 'own'],
        [a, s.adminKey, 'a'],
        [b, secondKey, 'b'],
      ] as const) {
        await s.api('PATCH', `/v1/flows/${flow}`, {
          token,
          body: { description: `${label} ${round}` },
        });
        expected.push(flow);
      }
    }
    const read = await pages(s, pia, from, (e) => described(e).length >= 12);
    t.same(described(read.events), expected, 'every change once, in the order they were made');
    t.same(
      new Set(read.events.map((e) => e.workspaceId)),
      new Set([home.id, s.workspaceId, second.id]),
      'from three workspaces',
    );
    t.ok(
      read.events.every((e) => e.data.name !== 'Not shared'),
      'never a flow that is not shared with this person',
    );

    // From any cursor handed out on the way, the rest, exactly.
    for (const at of [2, 6, 10]) {
      const rest = await pages(
        s,
        pia,
        read.events[at]!.cursor,
        (e) => described(e).length >= 1,
        50,
      );
      t.same(
        described(rest.events),
        described(read.events.slice(at + 1)),
        `after event ${at + 1}: the events after it, once each`,
      );
    }
    // A stream resumed from one of them (Last-Event-ID) sends the same rest.
    const stream = await sse(t, s.url, pia, '', { 'last-event-id': read.events[4]!.cursor });
    t.equal(stream.res.status, 200);
    await until(
      async () => described(stream.events()).length,
      (n) => n >= 7,
      30_000,
    );
    t.same(
      described(stream.events()),
      described(read.events.slice(5)),
      'the stream: the same rest',
    );
    t.same(
      stream.events().map((e) => e.cursor),
      read.events.slice(5).map((e) => e.cursor),
      'with the same cursors as the feed',
    );

    // The cursor is this person's: another's token, or a key of their workspace, is refused.
    assertError(
      t,
      await s.api('GET', `/v1/events?after=${from}`, { token: homeKey }),
      400,
      'VALIDATION_FAILED',
      "a person's cursor is not their workspace key's",
    );
    const flipped = from.slice(0, 30) + (from[30] === 'A' ? 'B' : 'A') + from.slice(31);
    assertError(
      t,
      await s.api('GET', `/v1/events?after=${flipped}`, { token: pia }),
      400,
      'VALIDATION_FAILED',
      'a cursor changed anywhere is refused',
    );
  },
);

t.test(
  "a flow shared after a person's cursor was handed out: its events kept come too, once",
  async (t) => {
    const s = await server(t);
    const { token: lu } = await personAtHome(s, 'lu@example.com', 'Lu');
    const from = (await s.api<EventPage>('GET', '/v1/events', { token: lu })).body.next;
    const later = (
      await s.api<Flow>('POST', '/v1/flows', { token: s.adminKey, body: { name: 'Later' } })
    ).body.id as string;
    await s.api('PATCH', `/v1/flows/${later}`, {
      token: s.adminKey,
      body: { description: 'before the share' },
    });
    await s.api('POST', `/v1/flows/${later}/shares`, {
      token: s.adminKey,
      body: { email: 'lu@example.com' },
    });
    await s.api('PATCH', `/v1/flows/${later}`, {
      token: s.adminKey,
      body: { description: 'after the share' },
    });
    const read = await pages(s, lu, from, (e) => described(e).length >= 2, 50);
    t.same(described(read.events), [later, later], 'its change before the share and after');
    t.equal(
      read.events.filter((e) => e.type === 'flow.created').length,
      1,
      'its creation too, once',
    );
    const again = await pages(s, lu, read.nexts.at(-1)!, () => true, 50);
    t.same(again.events, [], 'nothing twice');
  },
);

t.test(
  'a cursor handed out before positions were numbered per workspace reads on where it stood',
  async (t) => {
    const url = await createTestDatabase(t, { empty: true });
    const sql = connect(url, 2);
    t.teardown(() => sql.end());
    const PER_WORKSPACE = 29;
    await migrate(
      sql,
      listMigrations().filter((m) => m.version < PER_WORKSPACE),
    );
    const demo = (await bootstrapDemo(sql, { person: false }))!;
    const other = await createWorkspace(sql, { name: 'Other', plan: 'pro' });
    // Drained before the upgrade, one order over both workspaces: the demo's 1, 3, 5, the other's 2, 4.
    for (let n = 1; n <= 5; n++) {
      await sql`insert into outbox (id, workspace_id, flow_id, type, data, processed_at, position)
        values (${n}, ${n % 2 === 1 ? demo.workspaceId : other.id}, null, 'flow.created', ${sql.json({ flowId: `flw_old${n}`, name: `Old ${n}` })}, now(), ${n})`;
    }
    await sql`select setval('outbox_id_seq', 5)`;
    // A cursor the demo's key was given at its event at position 3 (a 22-character cursor,
    // sealed with the installation's key as every cursor was).
    const keys = await CursorKeys.load(sql);
    const seal = keys.for({ workspaceId: demo.workspaceId, userId: null });
    const before = seal.cursor({ own: '3', others: new Map(), from: '3' });
    t.equal(before.length, 22);

    const config = loadConfig(
      { LOG_LEVEL: 'silent', METRICS_PORT: '0' },
      { port: 0, databaseUrl: url },
    );
    const app = await startApp(config, { coldRecomputePool: true, skipDemoPerson: true });
    t.teardown(() => app.close());
    const base = `http://127.0.0.1:${app.port}`;
    const feed = async (after: string) => {
      const res = await request(base, 'GET', `/v1/events?after=${after}&size=50`, {
        token: demo.key,
      });
      t.equal(res.status, 200);
      return res.body as { items: Event[]; next: string };
    };
    t.same(
      (await feed(before)).items.map((e) => e.data.name),
      ['Old 5'],
      'after it: its workspace’s one later event, none of the other’s',
    );
    await request(base, 'POST', '/v1/flows', { token: demo.key, body: { name: 'New' } });
    const after = await until(
      () => feed(before),
      (page) => page.items.length >= 2,
    );
    t.same(
      after.items.map((e) => e.data.name),
      ['Old 5', 'New'],
      'and what came after the upgrade, after those',
    );
    const [row] = await sql<
      { seq: string }[]
    >`select seq::text from outbox where workspace_id = ${demo.workspaceId} and data->>'name' = 'New'`;
    t.equal(row!.seq, '6', "numbered on from the installation's last position");
  },
);

t.test(
  "a person's cursor behind events retention dropped in a workspace sharing with them: 410 with the oldest cursor that loses nothing, and numbering goes on after the whole log is gone",
  async (t) => {
    const s = await server(t);
    const { token: ines } = await personAtHome(s, 'ines@example.com', 'Ines');
    const adminFrom = (await s.api<EventPage>('GET', '/v1/events', { token: s.adminKey })).body
      .next;
    const shared = (
      await s.api<Flow>('POST', '/v1/flows', { token: s.adminKey, body: { name: 'Shared' } })
    ).body.id as string;
    await s.api('POST', `/v1/flows/${shared}/shares`, {
      token: s.adminKey,
      body: { email: 'ines@example.com' },
    });
    // Her cursor marks her place in a sharing workspace from its events already in the feed: one
    // taken before the shared flow's creation is drained has no mark there (on a slow machine, the
    // Node 24 tier of 2026-11-28), and that workspace's retention cannot expire it.
    await pages(s, s.adminKey, adminFrom, (events) =>
      events.some((e) => e.type === 'flow.created' && e.data.flowId === shared),
    );
    const from = (await s.api<EventPage>('GET', '/v1/events', { token: ines })).body.next;
    await s.api('PATCH', `/v1/flows/${shared}`, {
      token: s.adminKey,
      body: { description: 'then dropped' },
    });
    const seen = await pages(s, ines, from, (e) => described(e).length === 1, 50);
    const next = seen.nexts.at(-1)!;

    const retention = new EventLogRetention(s.sql, 7, s.app.services.log);
    const { expired, dropped } = await expireCursor(s, retention, ines, from);
    t.ok(dropped.length >= 1, 'the log dropped');
    assertError(t, expired, 410, 'CURSOR_EXPIRED');
    t.equal(
      expired.body.error.details.oldest,
      next,
      'the oldest cursor: where the last dropped event of the sharing workspace left her',
    );
    t.same(
      (await s.api('GET', `/v1/events?after=${next}`, { token: ines })).body,
      { items: [], next, hasMore: false },
      'which reads on, losing nothing',
    );
    await retention.prepare();
    await s.api('PATCH', `/v1/flows/${shared}`, {
      token: s.adminKey,
      body: { description: 'after the drop' },
    });
    const after = await pages(s, ines, next, (e) => described(e).length === 1, 50);
    t.same(described(after.events), [shared], 'the next change, numbered on');
  },
);

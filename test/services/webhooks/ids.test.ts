/**
 * Issue 51, item 4: a delivery's `webhook-id` was `msg_<endpoint>_<position>`, the event's
 * position in the one order of every workspace's events: a receiver saw `_10061` then `_10067`
 * with five of another workspace's flow creations between, and viewers saw the same ids in the
 * delivery log. Now the part after the endpoint is sealed: 22 characters that say nothing of
 * the position, the same on every attempt, in every process and after a restart, and a retry
 * by id still finds its delivery.
 */
import t from 'tap';
import { startApp } from '../../../src/compose.ts';
import { SCOPES } from '../../../src/services/auth/principal.ts';
import { createKey, createWorkspace } from '../../../src/services/auth/provision.ts';
import { loadConfig } from '../../../src/platform/config.ts';
import { newFlow, ok, startFlowServer } from '../../helpers/flows.ts';
import { assertError, item, request } from '../../helpers/server.ts';
import { deliveriesSettled, startReceiver } from './receiver.ts';
import type {
  WebhookDelivery,
  WebhookDeliveryList,
  WebhookWithSecret,
} from '../../helpers/wire.ts';

const config = { webhookAllowPrivate: true, webhookRetryBaseSeconds: 0.2 };

t.test("a receiver's ids tell nothing of other workspaces' events", async (t) => {
  const s = await startFlowServer(t, config);
  const receiver = await startReceiver(t);
  const hook = await ok<WebhookWithSecret>(
    t,
    s,
    'POST',
    '/v1/webhooks',
    { url: `${receiver.url}/in`, events: ['flow.created'] },
    201,
  );
  const other = await createWorkspace(s.sql, { name: 'Other' });
  const { key: otherKey } = await createKey(s.sql, {
    workspaceId: other.id,
    role: 'admin',
    scopes: [...SCOPES],
  });

  // Ours, five of the other workspace's, ours, ours: what the receiver gets is three flows.
  const first = await newFlow(t, s, { name: 'First', tasks: [] });
  for (let i = 1; i <= 5; i++) await newFlow(t, s, { name: `Theirs ${i}`, tasks: [] }, otherKey);
  const second = await newFlow(t, s, { name: 'Second', tasks: [] });
  const third = await newFlow(t, s, { name: 'Third', tasks: [] });
  const flows = [first.id, second.id, third.id];
  // Each flow's events have a lane of their own, so the three may arrive in any order: taken in
  // the flows' order, to pair each with its position below.
  const got = [...(await receiver.waitFor(3))].sort(
    (a, b) =>
      flows.indexOf(a.json.data.flowId as string) - flows.indexOf(b.json.data.flowId as string),
  );
  await deliveriesSettled(s.sql);
  t.strictSame(
    got.map((r) => r.json.data.flowId),
    flows,
  );

  // The log's positions: five of theirs between the first two, none between the last two.
  const positions = await s.sql<
    { flowId: string; position: string }[]
  >`select data->>'flowId' as flow_id, position::text
    from outbox where type = 'flow.created' and data->>'flowId' = any(${flows}) order by position`;
  const at = (i: number) => BigInt(item(positions, i).position);
  t.ok(
    at(1) - at(0) > 5n && at(2) - at(1) === 1n,
    `positions ${positions.map((p) => p.position).join(', ')}: the other workspace's events lie between`,
  );

  const ids = got.map((r) => String(r.headers['webhook-id']));
  const prefix = `msg_${hook.id.slice('whk_'.length)}_`;
  for (const [i, id] of ids.entries()) {
    t.ok(id.startsWith(prefix), `${id}: the endpoint's`);
    const rest = id.slice(prefix.length);
    t.match(rest, /^[A-Za-z0-9_-]{22}$/, 'then 22 characters of one sealed block');
    t.not(id, `${prefix}${item(positions, i).position}`, 'not the position, as ids were');
    t.notMatch(rest, /^\d+$/, 'nor any number to count by');
  }
  t.equal(new Set(ids).size, 3, 'one id per event');

  // A viewer reads the same ids in the delivery log; one of another endpoint is not found there.
  const { key: viewer } = await createKey(s.sql, {
    workspaceId: s.workspaceId,
    role: 'viewer',
    scopes: ['flows:read'],
  });
  const log = await ok<WebhookDeliveryList>(
    t,
    s,
    'GET',
    `/v1/webhooks/${hook.id}/deliveries`,
    undefined,
    200,
    viewer,
  );
  t.strictSame(
    log.items.map((d) => d.id).sort(),
    [...ids].sort(),
    'the delivery log shows the ids the receiver got',
  );
});

t.test(
  'the same id on every attempt, in another process after a restart, and a retry by id finds it',
  async (t) => {
    const s = await startFlowServer(t, config);
    const receiver = await startReceiver(t);
    // The first attempt to /in fails; everything else is taken.
    let failed = false;
    receiver.answer = (r) => {
      if (r.path !== '/in' || failed) return { status: 204 };
      failed = true;
      return { status: 500 };
    };
    const hook = await ok<WebhookWithSecret>(
      t,
      s,
      'POST',
      '/v1/webhooks',
      { url: `${receiver.url}/in`, events: ['flow.created'] },
      201,
    );
    await ok(
      t,
      s,
      'POST',
      '/v1/webhooks',
      { url: `${receiver.url}/twin`, events: ['flow.created'] },
      201,
    );
    const once = await newFlow(t, s, { name: 'Once', tasks: [] });
    await receiver.waitFor(3);
    await deliveriesSettled(s.sql);
    const mine = receiver.received.filter((r) => r.path === '/in');
    const id = String(item(mine).headers['webhook-id']);
    t.equal(mine.length, 2, 'a failed attempt and its retry');
    t.equal(item(mine, 1).headers['webhook-id'], id, 'the retry carries the same id');
    const twinId = String(
      item(receiver.received.filter((r) => r.path === '/twin')).headers['webhook-id'],
    );
    t.not(twinId, id, "another endpoint's delivery of the same event has another id");

    const [{ position } = { position: '' }] = await s.sql<
      { position: string }[]
    >`select position::text
      from outbox where type = 'flow.created' and data->>'flowId' = ${once.id}`;

    // A second process on the same database, started after this one stopped: the same ids.
    await s.app.close();
    const restarted = await startApp(
      loadConfig(
        { LOG_LEVEL: 'silent', METRICS_PORT: '0' },
        { port: 0, databaseUrl: s.databaseUrl, ...config },
      ),
      { coldRecomputePool: true, skipDemoPerson: true },
    );
    t.teardown(() => restarted.close());
    const api = <T>(method: string, path: string) =>
      request<T>(restarted.url, method, path, { token: s.adminKey });
    const listed = await api<WebhookDeliveryList>('GET', `/v1/webhooks/${hook.id}/deliveries`);
    t.equal(listed.body.items[0]?.id, id, 'the delivery log gives the id the receiver got');

    const retried = await api<WebhookDelivery>(
      'POST',
      `/v1/webhooks/${hook.id}/deliveries/${id}/retry`,
    );
    t.equal(retried.status, 202, 'a retry by that id finds its delivery');
    t.equal(retried.body.id, id);
    const again = await receiver.waitFor(4);
    t.equal(item(again, 3).path, '/in');
    t.equal(item(again, 3).headers['webhook-id'], id, 'and is sent with the same id');
    t.equal(item(again, 3).body, item(mine).body, 'and the same body');

    // Anything but that id is no delivery of this endpoint.
    const flipped = id.slice(0, -2) + (id.at(-2) === 'A' ? 'B' : 'A') + id.at(-1);
    for (const [what, other] of [
      ['one character changed', flipped],
      ["the twin's id", twinId],
      [
        "the twin's suffix under this endpoint",
        `msg_${hook.id.slice(4)}_${twinId.split('_').at(-1)}`,
      ],
      ['its position, as ids were', `msg_${hook.id.slice(4)}_${position}`],
    ] as const) {
      assertError(
        t,
        await api('POST', `/v1/webhooks/${hook.id}/deliveries/${other}/retry`),
        404,
        'NOT_FOUND',
        what,
      );
    }
  },
);

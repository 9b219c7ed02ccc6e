/**
 * The upgrade to sealed webhook ids (sql/0031_webhook_sealed_ids.sql) on a database with
 * deliveries of the old ids, `msg_<endpoint>_<position>`: an event whose retry was waiting at the
 * upgrade is sent again with the id its first attempt had, the delivery log lists the old
 * deliveries under their ids and a retry by one of them finds it; an event given its position
 * after the upgrade gets a sealed id, and its position as an old id names nothing.
 */
import t from 'tap';
import { startApp } from '../../src/compose.ts';
import { bootstrapDemo } from '../../src/services/auth/bootstrap.ts';
import { loadConfig } from '../../src/platform/config.ts';
import { connect } from '../../src/storage/db.ts';
import { listMigrations, migrate } from '../../src/storage/migrate.ts';
import { createTestDatabase } from '../helpers/database.ts';
import { assertError, item, request } from '../helpers/server.ts';
import { deliveriesSettled, startReceiver } from '../services/webhooks/receiver.ts';
import type { WebhookDelivery, WebhookDeliveryList } from '../helpers/wire.ts';

const SEALED = 31;

t.test(
  'ids given before the upgrade stay, for retries and for lookups; later events get sealed ids',
  async (t) => {
    const url = await createTestDatabase(t, { empty: true });
    const sql = connect(url, 2);
    t.teardown(() => sql.end());
    await migrate(
      sql,
      listMigrations().filter((m) => m.version < SEALED),
    );
    const demo = (await bootstrapDemo(sql, { person: false }))!;
    const ws = demo.workspaceId;
    const receiver = await startReceiver(t);
    const hook = 'whk_upgradeIds1';
    await sql`insert into webhooks (id, workspace_id, url, events, secret, created_at)
      values (${hook}, ${ws}, ${`${receiver.url}/in`}, '{flow.updated}', 'whsec_dXBncmFkZXVwZ3JhZGV1cGdyYWRl', now() - interval '1 hour')`;
    // Three events of one flow, drained (positions and feed positions 1-3) and collected, today
    // (UTC: the partitions start today). 1 and 2 were delivered; 3's first attempt failed, and
    // its retry is due.
    for (let n = 1; n <= 3; n++)
      await sql`insert into outbox (id, workspace_id, flow_id, type, data, created_at, processed_at, position, seq)
        values (${n}, ${ws}, 'flw_upgrade', 'flow.updated', ${sql.json({ n })},
          greatest(now() - make_interval(mins => ${30 - n}), (date_trunc('day', now() at time zone 'UTC') at time zone 'UTC') + make_interval(secs => ${n})),
          now(), ${n}, ${n})`;
    await sql`select setval('outbox_id_seq', 3)`;
    await sql`insert into event_sequences (workspace_id, last) values (${ws}, 3)
      on conflict (workspace_id) do update set last = 3`;
    await sql`update webhook_collector set position = 3`;
    for (const [n, outcome, status] of [
      [1, 'delivered', 204],
      [2, 'delivered', 204],
      [3, 'retry', 500],
    ] as const)
      await sql`insert into webhook_log (webhook_id, workspace_id, position, flow_key, type, event_created_at, attempt, outcome, started_at, duration_ms, status_code)
        select ${hook}, ${ws}, ${n}, 'flw_upgrade', 'flow.updated', created_at, 1, ${outcome}, now() - interval '10 minutes', 5, ${status}
        from outbox where position = ${n}`;
    await sql`insert into webhook_lanes (webhook_id, workspace_id, flow_key, done_through, state, next_attempt_at, head_position, attempts, head_due_at)
      values (${hook}, ${ws}, 'flw_upgrade', 2, 'queued', now(), 3, 1, now())`;
    const old = (position: number) => `msg_${hook.slice('whk_'.length)}_${position}`;

    // The first start after the upgrade applies 0031 and sends the retry that was due.
    const app = await startApp(
      loadConfig(
        { LOG_LEVEL: 'silent', METRICS_PORT: '0' },
        { port: 0, databaseUrl: url, webhookAllowPrivate: true },
      ),
      { coldRecomputePool: true, skipDemoPerson: true },
    );
    t.teardown(() => app.close());
    const retry = item(await receiver.waitFor(1));
    t.equal(retry.headers['webhook-id'], old(3), "the retry carries its first attempt's id");
    t.strictSame(retry.json.data, { n: 3 });
    await deliveriesSettled(sql);

    const api = <T>(method: string, path: string) =>
      request<T>(app.url, method, path, { token: demo.key });
    const list = await api<WebhookDeliveryList>('GET', `/v1/webhooks/${hook}/deliveries`);
    t.strictSame(
      list.body.items.map((d) => [d.id, d.status, d.attempts]),
      [
        [old(3), 'delivered', 2],
        [old(2), 'delivered', 1],
        [old(1), 'delivered', 1],
      ],
      'the delivery log keeps their ids',
    );
    const again = await api<WebhookDelivery>(
      'POST',
      `/v1/webhooks/${hook}/deliveries/${old(1)}/retry`,
    );
    t.equal(again.status, 202, 'a retry by an old id finds its delivery');
    await receiver.waitFor(2);
    t.equal(item(receiver.received, 1).headers['webhook-id'], old(1), 'and sends it with that id');
    t.strictSame(item(receiver.received, 1).json.data, { n: 1 });
    await deliveriesSettled(sql);

    // An event after the upgrade (the drain gives it position 4).
    await sql`insert into outbox (workspace_id, flow_id, type, data) values (${ws}, 'flw_upgrade', 'flow.updated', ${sql.json({ n: 4 })})`;
    await receiver.waitFor(3);
    const sealed = String(item(receiver.received, 2).headers['webhook-id']);
    t.strictSame(item(receiver.received, 2).json.data, { n: 4 });
    t.match(sealed, new RegExp(`^msg_${hook.slice('whk_'.length)}_[A-Za-z0-9_-]{22}$`), 'sealed');
    const rows = await sql<
      { position: string }[]
    >`select position::text from outbox where data->>'n' = '4'`;
    t.equal(item(rows).position, '4');
    await deliveriesSettled(sql);
    assertError(
      t,
      await api('POST', `/v1/webhooks/${hook}/deliveries/${old(4)}/retry`),
      404,
      'NOT_FOUND',
      'its position as an old id names nothing',
    );
    t.equal(
      (await api('POST', `/v1/webhooks/${hook}/deliveries/${sealed}/retry`)).status,
      202,
      'its sealed id finds it',
    );
    await receiver.waitFor(4);
    t.equal(item(receiver.received, 3).headers['webhook-id'], sealed);

    const kept = await sql<
      { through: string | null }[]
    >`select position_ids_through::text as through from webhooks where id = ${hook}`;
    t.equal(
      item(kept).through,
      '3',
      "the endpoint keeps its workspace's last position at the upgrade",
    );
  },
);

/**
 * The upgrade to webhook lanes (sql/0017_webhook_lanes.sql) on a database that has delivery
 * rows of the old scheme: finished deliveries keep their outcome, attempts and attempt log under
 * their new ids; unfinished ones, and events the old collector had not read yet, are sent after
 * the upgrade, in order, once each; a manual retry waiting at the upgrade is made. Nothing a
 * client could see in the delivery log is lost.
 */
import t from 'tap';
import { startApp } from '../../src/compose.ts';
import { bootstrapDemo } from '../../src/services/auth/bootstrap.ts';
import { loadConfig } from '../../src/platform/config.ts';
import { connect } from '../../src/storage/db.ts';
import { listMigrations, migrate } from '../../src/storage/migrate.ts';
import { createTestDatabase } from '../helpers/database.ts';
import { request, until } from '../helpers/server.ts';
import { deliveriesSettled, startReceiver } from '../services/webhooks/receiver.ts';
import type { WebhookDeliveryList } from '../helpers/wire.ts';

const LANES = 17;

t.test(
  'deliveries of the old scheme answer as before after the upgrade, and what was unfinished is sent once',
  async (t) => {
    const url = await createTestDatabase(t, { empty: true });
    const sql = connect(url, 2);
    t.teardown(() => sql.end());
    await migrate(
      sql,
      listMigrations().filter((m) => m.version < LANES),
    );
    const demo = (await bootstrapDemo(sql, { person: false }))!;
    const receiver = await startReceiver(t);
    const hook = 'whk_upgradeA';
    await sql`insert into webhooks (id, workspace_id, url, events, secret, created_at)
    values (${hook}, ${demo.workspaceId}, ${`${receiver.url}/in`}, '{task.started,task.completed}', 'whsec_dXBncmFkZXVwZ3JhZGV1cGdyYWRl', now() - interval '1 hour')`;
    // Events 1-6 of one flow drained (positions 1-6); 1-5 collected by the old scheme, 6 not yet.
    // Within the last hour, as the scheme expects, but never before today (UTC): the migration
    // made partitions from today on, and yesterday has none.
    for (let n = 1; n <= 6; n++) {
      await sql`insert into outbox (id, workspace_id, flow_id, type, data, created_at, processed_at, webhooks_at, position)
      values (${n}, ${demo.workspaceId}, 'flw_upgrade', 'task.started', ${sql.json({ n })},
        greatest(now() - make_interval(mins => ${60 - n}), (date_trunc('day', now() at time zone 'UTC') at time zone 'UTC') + make_interval(secs => ${n})), now(),
        ${n <= 5 ? sql`now()` : null}, ${n})`;
    }
    await sql`select setval('outbox_id_seq', 6)`;
    const old = [
      // delivered on the second attempt; failed; skipped without an attempt; delivered, then reopened by a manual retry; queued; pending.
      { id: 'msg_old1', event: 1, status: 'delivered', attempts: 2, manual: false },
      { id: 'msg_old2', event: 2, status: 'failed', attempts: 1, manual: false },
      { id: 'msg_old3', event: 3, status: 'skipped', attempts: 0, manual: false },
      { id: 'msg_old4', event: 4, status: 'queued', attempts: 1, manual: true },
      { id: 'msg_old5', event: 5, status: 'queued', attempts: 0, manual: false },
    ];
    for (const d of old) {
      const finished = ['delivered', 'failed', 'skipped'].includes(d.status);
      await sql`insert into webhook_deliveries (id, webhook_id, workspace_id, event_id, flow_key, type, body, status, attempts, attempt_limit, manual,
        next_attempt_at, last_status_code, last_error, created_at, finished_at)
      values (${d.id}, ${hook}, ${demo.workspaceId}, ${d.event}, 'flw_upgrade', 'task.started', '{}', ${d.status}, ${d.attempts}, 10, ${d.manual},
        ${finished ? null : sql`now()`}, ${d.status === 'failed' ? 410 : null}, ${d.status === 'skipped' ? 'the webhook was disabled' : null},
        now() - interval '30 minutes', ${finished ? sql`now() - interval '20 minutes'` : null})`;
    }
    const attempt = (delivery: string, n: number, statusCode: number) =>
      sql`insert into webhook_attempts (delivery_id, attempt, started_at, duration_ms, status_code, error)
      values (${delivery}, ${n}, now() - make_interval(mins => ${30 - n}), 12, ${statusCode}, ${statusCode >= 300 ? `HTTP ${statusCode}` : null})`;
    await attempt('msg_old1', 1, 500);
    await attempt('msg_old1', 2, 200);
    await attempt('msg_old2', 1, 410);
    await attempt('msg_old4', 1, 204);

    // The first start after the upgrade applies 0017 and sends what was left.
    const config = loadConfig(
      { LOG_LEVEL: 'silent', METRICS_PORT: '0' },
      { port: 0, databaseUrl: url, webhookAllowPrivate: true },
    );
    const app = await startApp(config, { coldRecomputePool: true, skipDemoPerson: true });
    t.teardown(() => app.close());
    t.same(
      await sql`select 1 from schema_migrations where version = ${LANES}`,
      [{ '?column?': 1 }],
      '0017 applied',
    );
    t.notOk(
      (
        await sql`select 1 from information_schema.tables where table_name in ('webhook_deliveries', 'webhook_attempts')`
      ).length,
      'the old tables are gone',
    );

    const got = await receiver.waitFor(3);
    await deliveriesSettled(sql);
    const ids = (position: number) => `msg_${hook.slice('whk_'.length)}_${position}`;
    t.strictSame(
      receiver.received.map((r) => r.headers['webhook-id']),
      [ids(4), ids(5), ids(6)],
      'the manual retry, the queued delivery and the uncollected event, each once, in order, under their new ids',
    );
    t.strictSame(
      got.map((r) => r.json.data),
      [{ n: 4 }, { n: 5 }, { n: 6 }],
      'each with its event',
    );

    const list = await request<WebhookDeliveryList>(
      app.url,
      'GET',
      `/v1/webhooks/${hook}/deliveries?size=10`,
      {
        token: demo.key,
      },
    );
    t.equal(list.status, 200);
    const byId = new Map(list.body.items.map((d) => [d.id, d]));
    t.equal(list.body.items.length, 6, 'six deliveries listed, none lost, none doubled');
    t.hasStrict(byId.get(ids(1)), {
      status: 'delivered',
      attempts: 2,
      eventType: 'task.started',
      flowId: 'flw_upgrade',
      payload: { type: 'task.started', data: { n: 1 } },
    });
    t.strictSame(
      byId.get(ids(1))?.attemptLog.map((a) => a.statusCode),
      [500, 200],
      'its attempt log kept',
    );
    t.hasStrict(byId.get(ids(2)), { status: 'failed', attempts: 1, lastStatusCode: 410 });
    t.hasStrict(byId.get(ids(3)), {
      status: 'skipped',
      attempts: 0,
      lastError: 'the webhook was disabled',
    });
    t.strictSame(byId.get(ids(3))?.attemptLog, [], 'skipped: its attempt log is empty');
    const reopened = byId.get(ids(4));
    t.hasStrict(
      reopened,
      { status: 'delivered', attempts: 2 },
      'the manual retry made its one more attempt',
    );
    t.strictSame(
      reopened?.attemptLog.map((a) => [a.attempt, a.manual]),
      [
        [1, false],
        [2, true],
      ],
    );
    t.hasStrict(byId.get(ids(5)), { status: 'delivered', attempts: 1 });
    t.hasStrict(byId.get(ids(6)), { status: 'delivered', attempts: 1 });

    // The lane goes on from where the upgrade left it.
    await sql`insert into outbox (workspace_id, flow_id, type, data, processed_at) values (${demo.workspaceId}, 'flw_upgrade', 'task.completed', ${sql.json({ n: 7 })}, null)`;
    await until(
      async () => receiver.received.length,
      (n) => n === 4,
    );
    t.equal(receiver.received[3]!.json.data.n, 7, 'a new event after the upgrade is sent next');
    await deliveriesSettled(sql);
    t.equal(receiver.received.length, 4, 'nothing sent twice');
  },
);

/**
 * A process killed while a receiver holds its webhook request: the delivery was claimed
 * (`sending`, with a lease: its lane's `next_attempt_at`) before the request went out, so it is neither lost nor sent under
 * a new identity. Once the lease has lapsed, another process's maintenance sweep sends it
 * again with the same `webhook-id` and body (at least once, as Standard Webhooks expects:
 * the receiver deduplicates by id), and it ends `delivered`, exactly once more.
 */
import t from 'tap';
import { startApp } from '../../../src/compose.ts';
import { loadConfig } from '../../../src/platform/config.ts';
import { newFlow, ok, startFlowServer } from '../../helpers/flows.ts';
import { until, item } from '../../helpers/server.ts';
import { startChildServer } from '../jobs/child.ts';
import { deliveriesSettled, startReceiver } from './receiver.ts';
import type { WebhookDeliveryList, WebhookWithSecret } from '../../helpers/wire.ts';

t.test(
  'killed mid-send: the same delivery is sent again by another process, under the same id',
  async (t) => {
    // This server takes the HTTP requests and runs no jobs; the child process sends.
    const s = await startFlowServer(t, { jobWorkers: false, webhookAllowPrivate: true });
    const child = await startChildServer(t, s.databaseUrl, { WEBHOOK_ALLOW_PRIVATE: '1' });
    const receiver = await startReceiver(t);
    receiver.answer = (_request, index) => (index === 0 ? { hang: true } : { status: 204 });
    const hook = await ok<WebhookWithSecret>(
      t,
      s,
      'POST',
      '/v1/webhooks',
      { url: receiver.url, events: ['task.started'] },
      201,
    );
    const flow = await newFlow(t, s, { name: 'Crash', tasks: [{ name: 'Only' }] });
    await ok(t, s, 'POST', `/v1/flows/${flow.id}/tasks/${item(flow.tasks).id}/start`);

    const [first] = await receiver.waitFor(1);
    const [row] = (await ok<WebhookDeliveryList>(t, s, 'GET', `/v1/webhooks/${hook.id}/deliveries`))
      .items;
    t.hasStrict(
      row,
      { id: first!.headers['webhook-id'], status: 'sending', attempts: 1 },
      'claimed (committed) before the request went out',
    );
    await child.kill();

    // The claim's lease (two minutes) has run out, as it would have by now in real time.
    await s.sql`update webhook_lanes set next_attempt_at = now() - interval '1 second' where webhook_id = ${hook.id} and state = 'sending'`;
    const next = await startApp(
      loadConfig(
        { LOG_LEVEL: 'silent' },
        { port: 0, databaseUrl: s.databaseUrl, webhookAllowPrivate: true, cronCheckSeconds: 1 },
      ),
    );
    t.teardown(() => next.close());

    const [, again] = await receiver.waitFor(2);
    t.equal(again!.headers['webhook-id'], first!.headers['webhook-id'], 'the same webhook-id');
    t.equal(again!.body, first!.body, 'the same body');
    const deliveries = await until(
      async () =>
        (
          await s.api<WebhookDeliveryList>('GET', `/v1/webhooks/${hook.id}/deliveries`, {
            token: s.adminKey,
          })
        ).body.items,
      (items: { status: string }[]) => items[0]?.status === 'delivered',
    );
    t.strictSame(
      deliveries.map(({ id, eventType, status, attempts }: Record<string, unknown>) => ({
        id,
        eventType,
        status,
        attempts,
      })),
      [{ id: row!.id, eventType: 'task.started', status: 'delivered', attempts: 2 }],
      'one delivery, delivered on its second attempt',
    );
    t.equal(deliveries.length, 1);
    await deliveriesSettled(s.sql);
    t.equal(
      receiver.received.length,
      2,
      'sent twice in all: the interrupted attempt and its one replacement',
    );
  },
);

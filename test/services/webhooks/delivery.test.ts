/**
 * Deliveries to a real receiver on loopback: signed as Standard Webhooks 1.0 (verified with
 * the `standardwebhooks` package), every CONTRACT event type emitted by the flows code,
 * events of a flow in commit order, and a rotated secret signing beside the new one.
 */
import t, { type Test } from 'tap';
import { WEBHOOK_EVENT_TYPES } from '../../../src/contract/webhook-events.schema.ts';
import { member, newFlow, ok, startFlowServer } from '../../helpers/flows.ts';
import { item, type TestServer } from '../../helpers/server.ts';
import { deliveriesSettled, startReceiver, verify, type Received } from './receiver.ts';
import type { Task, Webhook, WebhookDeliveryList, WebhookWithSecret } from '../../helpers/wire.ts';

async function register(
  t: Test,
  s: TestServer,
  url: string,
  events = [...WEBHOOK_EVENT_TYPES],
): Promise<{ id: string; secret: string }> {
  return ok(t, s, 'POST', '/v1/webhooks', { url, events, description: 'test receiver' }, 201);
}

const config = { webhookAllowPrivate: true, webhookRetryBaseSeconds: 0.2 };

t.test('every event type arrives once, signed so that standardwebhooks verifies it', async (t) => {
  const s = await startFlowServer(t, config);
  const receiver = await startReceiver(t);
  const hook = await register(t, s, `${receiver.url}/hooks?token=abc`);
  t.match(hook.secret, /^whsec_[A-Za-z0-9+/]{43}=$/, 'whsec_ + base64');
  t.equal(Buffer.from(hook.secret.slice(6), 'base64').length, 32, '32 random bytes');

  const ada = await member(s, 'Ada');
  const flow = await newFlow(t, s, {
    name: 'Launch',
    tasks: [{ name: 'A' }, { name: 'B', after: [0] }],
  });
  const F = `/v1/flows/${flow.id}`;
  const [a, b] = flow.tasks.map((x) => x.id);
  await ok(t, s, 'PATCH', F, { name: 'Launch 2' });
  await ok(t, s, 'POST', `${F}/publish`);
  await ok(t, s, 'POST', `${F}/unpublish`);
  const c = await ok<Task>(t, s, 'POST', `${F}/tasks`, { name: 'C' }, 201);
  await ok(t, s, 'PATCH', `${F}/tasks/${c.id}`, { estimateHours: 3 });
  await ok(t, s, 'DELETE', `${F}/tasks/${c.id}`, undefined, 204);
  await ok(t, s, 'POST', `${F}/tasks/${a}/assign`, { assigneeId: ada });
  await ok(t, s, 'POST', `${F}/tasks/${a}/start`);
  await ok(t, s, 'POST', `${F}/tasks/${a}/comments`, { body: 'on it' }, 201);
  await ok(t, s, 'POST', `${F}/tasks/${a}/complete`);
  await ok(t, s, 'POST', `${F}/tasks/${a}/reopen`);
  await ok(t, s, 'POST', `${F}/baselines`, { name: 'Plan' }, 201);
  await ok(t, s, 'DELETE', F, undefined, 204);
  await ok(t, s, 'POST', `${F}/restore`);

  const expected = [
    'flow.created',
    'flow.updated',
    'flow.published',
    'flow.unpublished',
    'task.created',
    'task.updated',
    'task.deleted',
    'task.assigned',
    'task.started',
    'comment.created',
    'task.completed',
    'task.unblocked',
    'task.reopened',
    'baseline.created',
    'flow.archived',
    'flow.restored',
  ];
  t.strictSame(
    [...expected].sort(),
    [...WEBHOOK_EVENT_TYPES].sort(),
    'the scenario covers all 16 types',
  );
  const got = await receiver.waitFor(expected.length);
  await deliveriesSettled(s.sql);
  t.equal(receiver.received.length, expected.length, 'each event exactly once');
  t.strictSame(
    got.map((r) => r.json.type),
    expected,
    'in commit order (one flow, one endpoint)',
  );
  for (const r of got) {
    t.equal(r.path, '/hooks?token=abc', 'posted to the registered URL');
    t.equal(r.headers['content-type'], 'application/json');
    const payload = verify(hook.secret, r);
    t.strictSame(
      Object.keys(payload).sort(),
      ['data', 'timestamp', 'type', 'workspaceId'],
      `${r.json.type}: {type, timestamp, workspaceId, data}`,
    );
    t.equal(payload.workspaceId, s.workspaceId);
    t.equal(payload.data.flowId, flow.id);
    t.ok(!Number.isNaN(Date.parse(payload.timestamp)), 'ISO timestamp');
    t.match(String(r.headers['webhook-id']), /^msg_/);
    t.ok(
      Math.abs(Number(r.headers['webhook-timestamp']) - Date.now() / 1000) < 30,
      'timestamp is now',
    );
    t.throws(
      () => verify('whsec_' + Buffer.alloc(32, 1).toString('base64'), r),
      'another secret does not verify',
    );
  }
  const byType = Object.fromEntries(got.map((r) => [r.json.type, r.json.data]));
  t.equal(byType['task.assigned']?.assigneeId, ada);
  t.equal(byType['task.unblocked']?.taskId, b, 'B unblocked when A completed');
  t.equal(byType['task.deleted']?.taskId, c.id);
  t.equal(byType['flow.created']?.name, 'Launch');
  // A tampered body fails verification.
  const tampered: Received = { ...got[0]!, body: got[0]!.body.replace('Launch', 'Lunch') };
  t.throws(() => verify(hook.secret, tampered), 'a changed body does not verify');

  // Settled above: every answer is recorded.
  const log = await ok<WebhookDeliveryList>(
    t,
    s,
    'GET',
    `/v1/webhooks/${hook.id}/deliveries?size=100`,
  );
  t.equal(log.total, expected.length, 'a delivery row per event');
  t.strictSame(
    log.items.map((d) => d.eventType),
    [...expected].reverse(),
    'newest first',
  );
  for (const d of log.items) {
    t.equal(d.status, 'delivered');
    t.equal(d.attempts, 1);
    t.equal(d.attemptLog.length, 1);
    t.equal(d.attemptLog[0]?.statusCode, 204);
    t.type(d.attemptLog[0]?.durationMs, 'number');
    t.ok(
      got.some((r) => r.headers['webhook-id'] === d.id),
      'the delivery id is the webhook-id',
    );
  }
});

t.test(
  'only subscribed types, only the own workspace, and only events after registration',
  async (t) => {
    const s = await startFlowServer(t, config);
    const receiver = await startReceiver(t);
    await newFlow(t, s, { name: 'Before', tasks: [{ name: 'A' }] });
    await s.app.services.jobs.drainOutbox();
    await register(t, s, receiver.url, ['task.started']);
    const flow = await newFlow(t, s, { name: 'After', tasks: [{ name: 'A' }] });
    await ok(t, s, 'POST', `/v1/flows/${flow.id}/tasks/${item(flow.tasks).id}/start`);
    await receiver.waitFor(1);
    await deliveriesSettled(s.sql);
    const got = receiver.received;
    t.equal(got.length, 1, 'flow.created of either flow is not sent');
    t.equal(got[0]!.json.type, 'task.started');
  },
);

t.test(
  'events of each flow arrive in commit order, also while a slow receiver holds earlier ones',
  async (t) => {
    const s = await startFlowServer(t, config);
    const receiver = await startReceiver(t);
    // The first delivery of every flow fails twice: later events of that flow must wait for it.
    const failures = new Map<string, number>();
    receiver.answer = (r) => {
      const flowId = r.json?.data?.flowId as string;
      const n = failures.get(flowId) ?? 0;
      if (r.json.type === 'flow.created' && n < 2) {
        failures.set(flowId, n + 1);
        return { status: 503 };
      }
      return { status: 200 };
    };
    await register(t, s, receiver.url, [
      'flow.created',
      'task.started',
      'task.completed',
      'flow.updated',
    ]);
    const flows = await Promise.all(
      [0, 1, 2].map((i) => newFlow(t, s, { name: `F${i}`, tasks: [{ name: 'A' }, { name: 'B' }] })),
    );
    await Promise.all(
      flows.map(async (flow) => {
        for (const task of flow.tasks) {
          await ok(t, s, 'POST', `/v1/flows/${flow.id}/tasks/${task.id}/start`);
          await ok(t, s, 'POST', `/v1/flows/${flow.id}/tasks/${task.id}/complete`);
        }
        await ok(t, s, 'PATCH', `/v1/flows/${flow.id}`, { name: `${flow.name}!` });
      }),
    );
    // Per flow: 1 created + 2 started + 2 completed + 1 updated = 6 successes, plus 2 refusals each.
    await receiver.waitFor(3 * 8);
    for (const flow of flows) {
      const sequence = receiver.received.filter(
        (r) => r.json.data.flowId === flow.id && r.headers['webhook-id'],
      );
      const delivered = sequence.slice(2).map((r) => `${r.json.type}:${r.json.data.taskId ?? ''}`);
      t.strictSame(
        delivered,
        [
          'flow.created:',
          `task.started:${flow.tasks[0]?.id}`,
          `task.completed:${flow.tasks[0]?.id}`,
          `task.started:${flow.tasks[1]?.id}`,
          `task.completed:${flow.tasks[1]?.id}`,
          'flow.updated:',
        ],
        `${flow.name}: commit order, nothing overtook the retried first event`,
      );
      t.equal(
        sequence[0]!.headers['webhook-id'],
        sequence[2]!.headers['webhook-id'],
        'retries keep the webhook-id',
      );
    }
  },
);

t.test('a rotated secret: both signatures for 24 hours, each verifies', async (t) => {
  const s = await startFlowServer(t, config);
  const receiver = await startReceiver(t);
  const hook = await register(t, s, receiver.url, ['flow.created']);
  const rotated = await ok<WebhookWithSecret>(
    t,
    s,
    'POST',
    `/v1/webhooks/${hook.id}/rotate-secret`,
  );
  t.not(rotated.secret, hook.secret, 'a new secret');
  t.match(rotated.secret, /^whsec_/);
  const expires = Date.parse(rotated.previousSecretExpiresAt ?? '');
  t.ok(
    Math.abs(expires - Date.now() - 24 * 3600_000) < 60_000,
    'the previous secret stays valid 24 hours',
  );
  await newFlow(t, s, { name: 'Rotated', tasks: [] });
  const [r] = await receiver.waitFor(1);
  t.equal(String(r!.headers['webhook-signature']).split(' ').length, 2, 'two signatures');
  t.ok(verify(rotated.secret, r!), 'the new secret verifies');
  t.ok(verify(hook.secret, r!), 'the previous secret verifies');
  const shown = await ok<Webhook>(t, s, 'GET', `/v1/webhooks/${hook.id}`);
  t.notOk('secret' in shown, 'never shown again');
  // Once the overlap is over only the new secret signs.
  await s.sql`update webhooks set previous_secret_expires_at = now() - interval '1 second' where id = ${hook.id}`;
  await newFlow(t, s, { name: 'Later', tasks: [] });
  const [, later] = await receiver.waitFor(2);
  t.equal(
    String(later!.headers['webhook-signature']).split(' ').length,
    1,
    'one signature after the overlap',
  );
  t.ok(verify(rotated.secret, later!));
  t.throws(() => verify(hook.secret, later!), 'the old secret no longer verifies');
});

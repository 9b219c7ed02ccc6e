/**
 * Two flowplan processes on one database, both draining the outbox and both running
 * delivery workers: every event reaches every endpoint exactly once, and each flow's events
 * still arrive in commit order.
 */
import t from 'tap';
import { newFlow, ok, startFlowServer } from '../../helpers/flows.ts';
import { startChildServer } from '../jobs/child.ts';
import { deliveriesSettled, startReceiver } from './receiver.ts';

t.test('two processes: each event delivered once per endpoint, in order per flow', async (t) => {
  const s = await startFlowServer(t, { webhookAllowPrivate: true, webhookRetryBaseSeconds: 0.2 });
  await startChildServer(t, s.databaseUrl, {
    WEBHOOK_ALLOW_PRIVATE: '1',
    WEBHOOK_RETRY_BASE_SECONDS: '0',
  });
  const receivers = [await startReceiver(t), await startReceiver(t)];
  for (const r of receivers)
    await ok(
      t,
      s,
      'POST',
      '/v1/webhooks',
      { url: r.url, events: ['task.started', 'task.completed'] },
      201,
    );
  const flows = await Promise.all(
    [0, 1, 2].map((i) =>
      newFlow(t, s, {
        name: `P${i}`,
        tasks: Array.from({ length: 8 }, (_, k) => ({ name: `T${k}` })),
      }),
    ),
  );
  await Promise.all(
    flows.map(async (flow) => {
      for (const task of flow.tasks) {
        await ok(t, s, 'POST', `/v1/flows/${flow.id}/tasks/${task.id}/start`);
        await ok(t, s, 'POST', `/v1/flows/${flow.id}/tasks/${task.id}/complete`);
      }
    }),
  );
  const expected = flows.length * 8 * 2;
  for (const receiver of receivers) {
    const got = await receiver.waitFor(expected);
    await deliveriesSettled(s.sql);
    t.equal(receiver.received.length, expected, 'no event twice');
    t.equal(
      new Set(got.map((r) => r.headers['webhook-id'])).size,
      expected,
      'one webhook-id per event',
    );
    for (const flow of flows) {
      const order = got
        .filter((r) => r.json.data.flowId === flow.id)
        .map((r) => `${r.json.type}:${r.json.data.taskId}`);
      t.strictSame(
        order,
        flow.tasks.flatMap((task: { id: string }) => [
          `task.started:${task.id}`,
          `task.completed:${task.id}`,
        ]),
        `${flow.name} in commit order`,
      );
    }
  }
});

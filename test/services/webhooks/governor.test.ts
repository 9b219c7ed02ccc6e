/**
 * Webhooks keep out of the API's way: while requests keep a process busy, it starts at most
 * WEBHOOK_BUSY_RATE deliveries a second; the rest wait, nothing is lost, and once the API is
 * quiet the backlog goes out at full speed, still in commit order.
 */
import t from 'tap';
import type { TestServer } from '../../helpers/server.ts';
import { newFlow, ok, startFlowServer } from '../../helpers/flows.ts';
import { DISPATCH_QUEUE } from '../../../src/services/webhooks/delivery.job.ts';
import { until, item } from '../../helpers/server.ts';
import { deliveriesSettled, startReceiver } from './receiver.ts';

const EVENTS = 40;

/** Sixteen pollers keep a request in flight nearly all the time (fewer left gaps on a loaded machine); resolves once they have been at it for a while. */
async function keepBusy(s: TestServer, flowId: string): Promise<{ stop: () => Promise<void> }> {
  let busy = true;
  let answered = 0;
  // Eight at once keep a request in flight all the time (the governor's test of busy) without
  // saturating the process, whose timers the last test measures.
  const pollers = Array.from({ length: 8 }, async () => {
    while (busy) {
      await s.api('GET', `/v1/flows/${flowId}`, { token: s.adminKey });
      answered++;
    }
  });
  // The governor judges busyness over recent requests: let it see a few dozen first.
  await until(
    async () => answered,
    (n) => n >= 40,
  );
  return {
    stop: async () => {
      busy = false;
      await Promise.all(pollers);
    },
  };
}

t.test('a busy API slows deliveries to the busy rate; a quiet one catches up', async (t) => {
  const s = await startFlowServer(t, { webhookAllowPrivate: true, webhookBusyRate: 2 });
  const receiver = await startReceiver(t);
  const flow = await newFlow(t, s, {
    name: 'Busy',
    tasks: Array.from({ length: EVENTS }, (_, i) => ({ name: `T${i}` })),
  });
  await ok(t, s, 'POST', '/v1/webhooks', { url: receiver.url, events: ['task.started'] }, 201);

  const pollers = await keepBusy(s, flow.id);
  const busyFrom = Date.now();
  for (const task of flow.tasks)
    await ok(t, s, 'POST', `/v1/flows/${flow.id}/tasks/${task.id}/start`);
  // A window to watch the rate in (not a wait for something to happen).
  await new Promise((resolve) => setTimeout(resolve, 3000));
  const whileBusy = receiver.received.length;
  const seconds = (Date.now() - busyFrom) / 1000 + 1;
  await pollers.stop();
  // Some slack: a window the pollers leave quiet (a pause on a loaded machine) lets a few more go
  // (CI once saw 26 where 25 were allowed). Unslowed, all 40 would have gone in well under a second.
  t.ok(
    whileBusy <= 2 * seconds + 15,
    `about the busy rate while busy (${whileBusy} in ${seconds.toFixed(1)} s)`,
  );
  t.ok(whileBusy < EVENTS, 'some held back');

  const quietFrom = Date.now();
  const all = await receiver.waitFor(EVENTS, 60_000);
  const quietSeconds = (Date.now() - quietFrom) / 1000;
  const atBusyRate = (EVENTS - whileBusy) / 2;
  t.ok(
    quietSeconds < atBusyRate,
    `the rest go out faster than the busy rate once the API is quiet (${quietSeconds.toFixed(1)} s, not ${atBusyRate} s)`,
  );
  t.strictSame(
    all.map((r) => r.json.data.taskId),
    flow.tasks.map((task: { id: string }) => task.id),
    'every one, in commit order',
  );
  await deliveriesSettled(s.sql);
  t.equal(receiver.received.length, EVENTS, 'each once');
});

t.test(
  'while the API is busy, a receiver that hangs does not hold up the other endpoints of its batch',
  async (t) => {
    const s = await startFlowServer(t, {
      webhookAllowPrivate: true,
      webhookBusyRate: 4,
      webhookTimeoutSeconds: 60,
    });
    const receiver = await startReceiver(t);
    // The slow endpoint never answers; the sender's timeout ends each of its attempts.
    receiver.answer = (request) => (request.path === '/slow' ? { hang: true } : { status: 204 });
    const flow = await newFlow(t, s, {
      name: 'Busy',
      tasks: Array.from({ length: 6 }, (_, i) => ({ name: `T${i}` })),
    });
    await ok(
      t,
      s,
      'POST',
      '/v1/webhooks',
      { url: `${receiver.url}/slow`, events: ['task.started'] },
      201,
    );
    await ok(
      t,
      s,
      'POST',
      '/v1/webhooks',
      { url: `${receiver.url}/fast`, events: ['task.started'] },
      201,
    );

    const pollers = await keepBusy(s, flow.id);
    for (const task of flow.tasks.slice(0, 3))
      await ok(t, s, 'POST', `/v1/flows/${flow.id}/tasks/${task.id}/start`);

    // A fast endpoint's next event goes only once its last outcome is written: had the batch's
    // outcomes waited for the hanging attempt, nothing more would reach /fast for a minute.
    const fast = () => receiver.received.filter((r) => r.path === '/fast');
    await until(
      async () => fast().length,
      (n) => n >= 3,
    );
    t.strictSame(
      fast().map((r) => r.json.data.taskId),
      flow.tasks.slice(0, 3).map((task: { id: string }) => task.id),
      'the fast endpoint got all three events, in commit order',
    );
    t.equal(
      receiver.received.filter((r) => r.path === '/slow').length,
      1,
      'while the slow endpoint is still on its first event',
    );
    await pollers.stop();
  },
);

t.test('while the API is busy, a retry still goes out when it is due', async (t) => {
  // A retry 1.8-2.2 s after the failure: time enough for the test to move the retry's wake-up
  // job an hour on, so that only this process's own timer can send it.
  const s = await startFlowServer(t, {
    webhookAllowPrivate: true,
    webhookBusyRate: 4,
    webhookRetryBaseSeconds: 2,
  });
  const receiver = await startReceiver(t);
  receiver.answer = (_request, index) => ({ status: index === 0 ? 500 : 204 });
  const flow = await newFlow(t, s, { name: 'Busy', tasks: [{ name: 'T' }] });
  await ok(t, s, 'POST', '/v1/webhooks', { url: receiver.url, events: ['task.started'] }, 201);
  const pollers = await keepBusy(s, flow.id);
  await ok(t, s, 'POST', `/v1/flows/${flow.id}/tasks/${item(flow.tasks).id}/start`);
  await receiver.waitFor(1);
  // The failure's record wakes a job at the retry's second (pg-boss polls once a second): put
  // it off, before it can start.
  const postponed = await until(
    async () =>
      (
        await s.sql`update pgboss.job set start_after = now() + interval '1 hour'
          where name = ${DISPATCH_QUEUE} and singleton_key like 'at:%' and state = 'created'`
      ).count,
    (n) => n > 0,
  );
  t.equal(postponed, 1, "the retry's wake-up job is put off an hour");
  const [first, second] = await receiver.waitFor(2);
  await pollers.stop();
  // Due when its delay is out, not before; sent by this process's timer, since its wake-up job
  // waits an hour and the sweep (which would find it otherwise) runs once a minute.
  const gap = second!.at - first!.at;
  t.ok(gap >= 1800 - 50, `not retried before it was due (${gap} ms after the failure)`);
  t.ok(gap < 10_000, `retried by this process when due (${gap} ms after the failure)`);
});

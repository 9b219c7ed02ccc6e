/**
 * Webhooks keep out of the API's way: while requests keep a process busy, it starts at most
 * WEBHOOK_BUSY_RATE deliveries a second; the rest wait, nothing is lost, and once the API is
 * quiet the backlog goes out at full speed, still in commit order.
 */
import t from 'tap';
import { newFlow, ok, startFlowServer } from '../helpers/flows.ts';
import { startReceiver } from './receiver.ts';

const EVENTS = 40;

t.test('a busy API slows deliveries to the busy rate; a quiet one catches up', async (t) => {
  const s = await startFlowServer(t, { webhookAllowPrivate: true, webhookBusyRate: 2 });
  const receiver = await startReceiver(t);
  const flow = await newFlow(t, s, { name: 'Busy', tasks: Array.from({ length: EVENTS }, (_, i) => ({ name: `T${i}` })) });
  await ok(t, s, 'POST', '/v1/webhooks', { url: receiver.url, events: ['task.started'] }, 201);

  // Pollers keep a request in flight nearly all the time.
  let busy = true;
  const pollers = Array.from({ length: 4 }, async () => {
    while (busy) await s.api('GET', `/v1/flows/${flow.id}`, { token: s.adminKey });
  });
  await new Promise((resolve) => setTimeout(resolve, 300));
  const busyFrom = Date.now();
  for (const task of flow.tasks) await ok(t, s, 'POST', `/v1/flows/${flow.id}/tasks/${task.id}/start`);
  await new Promise((resolve) => setTimeout(resolve, 3000));
  const whileBusy = receiver.received.length;
  const seconds = (Date.now() - busyFrom) / 1000 + 1;
  busy = false;
  await Promise.all(pollers);
  // Some slack: a window the pollers leave quiet (a pause on a loaded machine) lets a few more go.
  t.ok(whileBusy <= 2 * seconds + 6, `about the busy rate while busy (${whileBusy} in ${seconds.toFixed(1)} s)`);
  t.ok(whileBusy < EVENTS, 'some held back');

  const quietFrom = Date.now();
  const all = await receiver.waitFor(EVENTS, 10_000);
  t.ok(Date.now() - quietFrom < 5000, 'the rest go out at once when the API is quiet');
  t.strictSame(all.map((r) => r.json.data.taskId), flow.tasks.map((task: { id: string }) => task.id), 'every one, in commit order');
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.equal(receiver.received.length, EVENTS, 'each once');
});

t.test('while the API is busy, a receiver that hangs does not hold up the other endpoints of its batch', async (t) => {
  const s = await startFlowServer(t, { webhookAllowPrivate: true, webhookBusyRate: 4, webhookTimeoutMs: 8000 });
  const receiver = await startReceiver(t);
  // The slow endpoint never answers; the sender's timeout ends each of its attempts.
  receiver.answer = (request) => (request.path === '/slow' ? { hang: true } : { status: 204 });
  const flow = await newFlow(t, s, { name: 'Busy', tasks: Array.from({ length: 6 }, (_, i) => ({ name: `T${i}` })) });
  await ok(t, s, 'POST', '/v1/webhooks', { url: `${receiver.url}/slow`, events: ['task.started'] }, 201);
  await ok(t, s, 'POST', '/v1/webhooks', { url: `${receiver.url}/fast`, events: ['task.started'] }, 201);

  let busy = true;
  const pollers = Array.from({ length: 4 }, async () => {
    while (busy) await s.api('GET', `/v1/flows/${flow.id}`, { token: s.adminKey });
  });
  await new Promise((resolve) => setTimeout(resolve, 300));
  const startedAt = Date.now();
  for (const task of flow.tasks.slice(0, 3)) await ok(t, s, 'POST', `/v1/flows/${flow.id}/tasks/${task.id}/start`);

  // A fast endpoint's next event goes only once its last outcome is written: had the batch's
  // outcomes waited for the hanging attempt, nothing more would reach /fast for 8 s.
  const deadline = startedAt + 6000;
  const fast = () => receiver.received.filter((r) => r.path === '/fast');
  while (fast().length < 3 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  t.equal(fast().length, 3, `the fast endpoint got all three events while the slow one hung (${((Date.now() - startedAt) / 1000).toFixed(1)} s)`);
  t.strictSame(fast().map((r) => r.json.data.taskId), flow.tasks.slice(0, 3).map((task: { id: string }) => task.id), 'in commit order');
  t.equal(receiver.received.filter((r) => r.path === '/slow').length, 1, 'the slow endpoint is still on its first event');
  busy = false;
  await Promise.all(pollers);
});

t.test('while the API is busy, a retry still goes out when it is due', async (t) => {
  const s = await startFlowServer(t, { webhookAllowPrivate: true, webhookBusyRate: 4, webhookRetryBaseSeconds: 0.5 });
  const receiver = await startReceiver(t);
  receiver.answer = (_request, index) => ({ status: index === 0 ? 500 : 204 });
  const flow = await newFlow(t, s, { name: 'Busy', tasks: [{ name: 'T' }] });
  await ok(t, s, 'POST', '/v1/webhooks', { url: receiver.url, events: ['task.started'] }, 201);
  let busy = true;
  const pollers = Array.from({ length: 4 }, async () => {
    while (busy) await s.api('GET', `/v1/flows/${flow.id}`, { token: s.adminKey });
  });
  await new Promise((resolve) => setTimeout(resolve, 300));
  await ok(t, s, 'POST', `/v1/flows/${flow.id}/tasks/${flow.tasks[0].id}/start`);
  const [first, second] = await receiver.waitFor(2, 10_000);
  busy = false;
  await Promise.all(pollers);
  // Due 0.45-0.55 s after the failure, and the busy rate has a token by then. A retry left to
  // its wake-up job (pg-boss polls once a second, on the second) would come a second or more late.
  const gap = second!.at - first!.at;
  t.ok(gap >= 450 && gap < 900, `retried when due (${gap} ms after the failure)`);
});

/**
 * Receivers that fail: only 2xx counts; retries back off (WEBHOOK_RETRY_BASE_SECONDS made
 * tiny), honour Retry-After and keep the webhook-id; 410 disables the endpoint; a hanging,
 * redirecting or oversized answer is recorded and never blocks other endpoints; attempts
 * run out after 10 and the flow's next event then goes through; manual retries.
 */
import t, { type Test } from 'tap';
import { MAX_ATTEMPTS, retryDelaySeconds } from '../../../src/services/webhooks/outcome.ts';
import { newFlow, ok, startFlowServer } from '../../helpers/flows.ts';
import { assertError, until, type TestServer, item } from '../../helpers/server.ts';
import { deliveriesSettled, startReceiver, verify } from './receiver.ts';
import type { Refusal, WebhookDelivery, WebhookDeliveryList } from '../../helpers/wire.ts';

async function hook(
  t: Test,
  s: TestServer,
  url: string,
  events = ['flow.created', 'flow.updated'],
): Promise<{ id: string; secret: string }> {
  return ok(t, s, 'POST', '/v1/webhooks', { url, events }, 201);
}

/** Polls the delivery log until `done` holds for the newest delivery. */
async function waitDelivery(
  s: TestServer,
  webhookId: string,
  done: (d: WebhookDelivery) => boolean,
  ms = 30_000,
): Promise<WebhookDelivery> {
  const deadline = Date.now() + ms;
  for (;;) {
    const res = await s.api<WebhookDeliveryList>('GET', `/v1/webhooks/${webhookId}/deliveries`, {
      token: s.adminKey,
    });
    const d = res.body.items.at(-1);
    if (d && done(d)) return d;
    if (Date.now() > deadline) throw new Error(`delivery not as expected: ${JSON.stringify(d)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

t.test('the automatic schedule grows and lasts more than a day at the default base', async (t) => {
  let total = 0;
  let previous = 0;
  for (let n = 1; n < MAX_ATTEMPTS; n++) {
    const low = retryDelaySeconds(n, 5, 0);
    t.ok(low >= previous, `delay ${n} (${low} s) is not shorter than the one before`);
    previous = low;
    total += low;
  }
  t.ok(
    total >= 24 * 3600,
    `the last attempt comes at least a day after the first (${Math.round(total / 3600)} h with the shortest jitter)`,
  );
  t.ok(retryDelaySeconds(1, 5, 1) <= 5.5 && retryDelaySeconds(1, 5, 0) >= 4.5, 'jitter is ±10%');
});

t.test('failures are retried with growing gaps and the same webhook-id until a 2xx', async (t) => {
  const s = await startFlowServer(t, { webhookAllowPrivate: true, webhookRetryBaseSeconds: 0.4 });
  const receiver = await startReceiver(t);
  receiver.answer = (_r, i) =>
    i < 2
      ? { status: i === 0 ? 500 : 302, headers: { location: `${receiver.url}/elsewhere` } }
      : { status: 200 };
  const h = await hook(t, s, `${receiver.url}/in`);
  await newFlow(t, s, { name: 'Retry me', tasks: [] });
  const got = await receiver.waitFor(3);
  t.equal(
    new Set(got.map((r) => r.headers['webhook-id'])).size,
    1,
    'one webhook-id on every attempt',
  );
  t.ok(
    got.every((r) => r.path === '/in'),
    'the redirect was not followed',
  );
  t.equal(new Set(got.map((r) => r.body)).size, 1, 'the same body every time');
  for (const r of got) t.ok(verify(h.secret, r), 'each attempt signed afresh');
  const gap1 = got[1]!.at - got[0]!.at;
  const gap2 = got[2]!.at - got[1]!.at;
  t.ok(gap1 >= 350, `first retry after the base delay (${gap1} ms)`);
  t.ok(gap2 > gap1, `the second waits longer (${gap2} ms > ${gap1} ms)`);
  const d = await waitDelivery(s, h.id, (x) => x.status === 'delivered');
  t.equal(d.attempts, 3);
  t.strictSame(
    d.attemptLog.map((a) => a.statusCode),
    [500, 302, 200],
  );
  t.match(d.attemptLog[0]?.error, /500/);
  t.match(d.attemptLog[1]?.error, /redirect not followed/);
  t.equal(d.attemptLog[2]?.error, null);
  t.equal(d.lastStatusCode, 200);
});

t.test('Retry-After is honoured', async (t) => {
  const s = await startFlowServer(t, { webhookAllowPrivate: true, webhookRetryBaseSeconds: 0.1 });
  const receiver = await startReceiver(t);
  receiver.answer = (_r, i) =>
    i === 0 ? { status: 429, headers: { 'retry-after': '2' } } : { status: 202 };
  const h = await hook(t, s, receiver.url);
  await newFlow(t, s, { name: 'Later please', tasks: [] });
  const got = await receiver.waitFor(2);
  t.ok(
    got[1]!.at - got[0]!.at >= 1900,
    `waited as asked (${got[1]!.at - got[0]!.at} ms, back-off alone would be 0.1 s)`,
  );
  const d = await waitDelivery(s, h.id, (x) => x.status === 'delivered');
  t.equal(d.attemptLog[0]?.retryAfter, 2);
  t.equal(d.attemptLog[0]?.statusCode, 429);
});

t.test(
  '410 Gone disables the endpoint; a manual retry needs it enabled and keeps the webhook-id',
  async (t) => {
    const s = await startFlowServer(t, { webhookAllowPrivate: true, webhookRetryBaseSeconds: 0.1 });
    const receiver = await startReceiver(t);
    receiver.answer = (_r, i) => (i === 0 ? { status: 410 } : { status: 200 });
    const h = await hook(t, s, receiver.url);
    const flow = await newFlow(t, s, { name: 'Gone', tasks: [] });
    const failed = await waitDelivery(s, h.id, (x) => x.status === 'failed');
    t.equal(failed.lastStatusCode, 410);
    t.equal(failed.attempts, 1, 'not retried');
    t.match(await ok(t, s, 'GET', `/v1/webhooks/${h.id}`), {
      enabled: false,
      disabledReason: 'gone',
    });
    await ok(t, s, 'PATCH', `/v1/flows/${flow.id}`, { name: 'Gone 2' });
    await deliveriesSettled(s.sql);
    t.equal(receiver.received.length, 1, 'nothing more is sent to a disabled endpoint');
    t.equal(
      (await ok<WebhookDeliveryList>(t, s, 'GET', `/v1/webhooks/${h.id}/deliveries`)).total,
      1,
      'and nothing queued for it',
    );

    const retry = `/v1/webhooks/${h.id}/deliveries/${failed.id}/retry`;
    assertError(
      t,
      await s.api('POST', retry, { token: s.adminKey }),
      409,
      'INVALID_TRANSITION',
      'disabled: enable first',
    );
    t.match(await ok(t, s, 'PATCH', `/v1/webhooks/${h.id}`, { enabled: true }), {
      enabled: true,
      disabledReason: null,
    });
    const accepted = await ok<WebhookDelivery>(t, s, 'POST', retry, undefined, 202);
    t.equal(accepted.id, failed.id);
    t.match(
      accepted.status,
      /^(pending|sending|delivered)$/,
      'accepted: waiting for its turn, or already on its way',
    );
    const [first, second] = await receiver.waitFor(2);
    t.equal(second!.headers['webhook-id'], first!.headers['webhook-id'], 'the same webhook-id');
    t.equal(second!.body, first!.body, 'the same body');
    const d = await waitDelivery(s, h.id, (x) => x.status === 'delivered');
    t.strictSame(
      d.attemptLog.map((a) => [a.attempt, a.manual, a.statusCode]),
      [
        [1, false, 410],
        [2, true, 200],
      ],
    );
    // A delivered one may be sent again too; one still in progress may not.
    await ok(t, s, 'POST', retry, undefined, 202);
    await receiver.waitFor(3);
    assertError(
      t,
      await s.api('POST', `/v1/webhooks/${h.id}/deliveries/msg_unknown123/retry`, {
        token: s.adminKey,
      }),
      404,
      'NOT_FOUND',
    );
  },
);

t.test('a retry refused while the delivery is still being attempted', async (t) => {
  const s = await startFlowServer(t, { webhookAllowPrivate: true, webhookRetryBaseSeconds: 30 });
  const receiver = await startReceiver(t);
  receiver.answer = () => ({ status: 503 });
  const h = await hook(t, s, receiver.url);
  await newFlow(t, s, { name: 'Busy', tasks: [] });
  const d = await waitDelivery(s, h.id, (x) => x.attempts === 1 && x.status === 'pending');
  t.ok(Date.parse(d.nextAttemptAt ?? '') > Date.now() + 20_000, 'next attempt after the back-off');
  const res = await s.api<Refusal>('POST', `/v1/webhooks/${h.id}/deliveries/${d.id}/retry`, {
    token: s.adminKey,
  });
  assertError(t, res, 409, 'INVALID_TRANSITION');
  t.equal(res.body.error.details.status, 'pending');
});

t.test(
  "after the last attempt the delivery fails and the flow's next event goes through",
  async (t) => {
    const s = await startFlowServer(t, { webhookAllowPrivate: true, webhookRetryBaseSeconds: 0 });
    const receiver = await startReceiver(t);
    receiver.answer = (r) => (r.json.type === 'flow.created' ? { status: 500 } : { status: 200 });
    const h = await hook(t, s, receiver.url);
    const flow = await newFlow(t, s, { name: 'Doomed', tasks: [] });
    await ok(t, s, 'PATCH', `/v1/flows/${flow.id}`, { name: 'Next' });
    await receiver.waitFor(MAX_ATTEMPTS + 1);
    const types = receiver.received.map((r) => r.json.type);
    t.strictSame(
      types,
      [...Array(MAX_ATTEMPTS).fill('flow.created'), 'flow.updated'],
      `${MAX_ATTEMPTS} attempts, then the next event of the flow`,
    );
    // The receiver has the request a moment before the sender records the answer.
    await waitDelivery(s, h.id, (x) => x.status === 'failed');
    const log = await until(
      async () =>
        (
          await s.api<WebhookDeliveryList>('GET', `/v1/webhooks/${h.id}/deliveries`, {
            token: s.adminKey,
          })
        ).body,
      (l) => l.items[0]?.status === 'delivered',
    );
    t.strictSame(
      log.items.map(({ eventType, status, attempts, lastStatusCode }: Record<string, unknown>) => ({
        eventType,
        status,
        attempts,
        lastStatusCode,
      })),
      [
        { eventType: 'flow.updated', status: 'delivered', attempts: 1, lastStatusCode: 200 },
        {
          eventType: 'flow.created',
          status: 'failed',
          attempts: MAX_ATTEMPTS,
          lastStatusCode: 500,
        },
      ],
      'the two deliveries, newest first',
    );
  },
);

t.test(
  'a hanging receiver times out, a huge answer is cut off, and neither holds up another endpoint',
  async (t) => {
    const s = await startFlowServer(t, {
      webhookAllowPrivate: true,
      webhookRetryBaseSeconds: 0.1,
      webhookTimeoutSeconds: 3,
    });
    const slow = await startReceiver(t);
    const fast = await startReceiver(t);
    const huge = await startReceiver(t);
    slow.answer = (_r, i) => (i === 0 ? { hang: true } : { status: 200 });
    huge.answer = () => ({ status: 200, body: Buffer.alloc(10 * 1024 * 1024, 'x') });
    const slowHook = await hook(t, s, slow.url);
    const fastHook = await hook(t, s, fast.url);
    const hugeHook = await hook(t, s, huge.url);
    await newFlow(t, s, { name: 'Mixed', tasks: [] });
    const [fastGot] = await fast.waitFor(1);
    const d = await waitDelivery(s, slowHook.id, (x) => x.status === 'delivered');
    t.equal(d.attemptLog[0]?.statusCode, null);
    t.match(d.attemptLog[0]?.error, /within 3 s/);
    t.ok(item(d.attemptLog).durationMs >= 2950, 'gave up at the timeout');
    t.ok(
      fastGot!.at < slow.received[0]!.at + item(d.attemptLog).durationMs,
      'the fast endpoint had its event before the hanging attempt gave up',
    );
    const big = await waitDelivery(s, hugeHook.id, (x) => x.status === 'delivered');
    t.equal(big.attempts, 1, 'a 2xx with an oversized body counts as delivered');
    t.match(big.attemptLog[0]?.error, /not read further/);
    t.equal((await waitDelivery(s, fastHook.id, (x) => x.status === 'delivered')).attempts, 1);
  },
);

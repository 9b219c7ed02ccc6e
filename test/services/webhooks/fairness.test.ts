/**
 * One workspace's endpoints that accept and never answer (a tarpit) must not starve another
 * workspace's webhooks: attempts in flight are capped per workspace and per endpoint, claims go
 * round-robin across workspaces, and an endpoint that keeps timing out trips its circuit
 * breaker (its attempts deferred, not failed; then one at a time with a shorter timeout; an
 * answer closes it). The caps and timeouts are made small so this runs in seconds.
 */
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { SCOPES } from '../../../src/services/auth/principal.ts';
import { createKey, createWorkspace } from '../../../src/services/auth/provision.ts';
import { newFlow, ok, startFlowServer } from '../../helpers/flows.ts';
import { until } from '../../helpers/server.ts';
import { deliveriesSettled, startReceiver } from './receiver.ts';
import type {
  Webhook,
  WebhookDeliveryList,
  WebhookList,
  WebhookWithSecret,
} from '../../helpers/wire.ts';

const HONEST_EVENTS = 20;
const TARPIT_ENDPOINTS = 8;

/** A loopback TCP server that accepts connections and never answers. */
async function startTarpit(t: Test): Promise<{ url: string; connections: () => number }> {
  const sockets = new Set<net.Socket>();
  let accepted = 0;
  const server = net.createServer((socket) => {
    accepted++;
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  );
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: () => accepted,
  };
}

const quantile = (values: number[], q: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))]!;

t.test(
  "a tarpit tenant's endpoints do not delay an honest tenant's webhooks, and trip their circuit breakers",
  async (t) => {
    const s = await startFlowServer(t, {
      webhookAllowPrivate: true,
      webhookRetryBaseSeconds: 1,
      webhookTimeoutSeconds: 3,
      webhookConcurrency: 8,
      webhookWorkspaceInFlight: 4,
      webhookEndpointInFlight: 2,
      webhookBreakerTimeouts: 2,
      webhookBreakerTimeoutSeconds: 1,
      webhookBreakerCooldownSeconds: 60,
    });
    const tarpit = await startTarpit(t);
    const receiver = await startReceiver(t);

    const attacker = await createWorkspace(s.sql, { name: 'Tarpit' });
    const { key } = await createKey(s.sql, {
      workspaceId: attacker.id,
      role: 'admin',
      scopes: [...SCOPES],
    });
    const tarpitHooks: { id: string }[] = [];
    for (let i = 0; i < TARPIT_ENDPOINTS; i++) {
      tarpitHooks.push(
        await ok(
          t,
          s,
          'POST',
          '/v1/webhooks',
          { url: `${tarpit.url}/hook/${i}`, events: ['flow.created', 'flow.updated'] },
          201,
          key,
        ),
      );
    }
    const honestHook = await ok<WebhookWithSecret>(
      t,
      s,
      'POST',
      '/v1/webhooks',
      { url: `${receiver.url}/honest`, events: ['flow.updated'] },
      201,
    );
    const honestFlow = await newFlow(t, s, { name: 'Honest', tasks: [] });

    // A backlog of hanging attempts first (each flow is a lane on every tarpit endpoint), then more with every honest event.
    let tarpitFlows = 0;
    const tarpitFlow = () => newFlow(t, s, { name: `Tarpit ${++tarpitFlows}`, tasks: [] }, key);
    for (let i = 0; i < 20; i++) await tarpitFlow();
    await until(
      async () => tarpit.connections(),
      (n) => n > 0,
    );

    const latencies: number[] = [];
    for (let i = 0; i < HONEST_EVENTS; i++) {
      await tarpitFlow();
      await tarpitFlow();
      await ok(t, s, 'PATCH', `/v1/flows/${honestFlow.id}`, { name: `Honest ${i}` });
      try {
        await receiver.waitFor(i + 1, 15_000);
      } catch {
        break;
      }
      const got = receiver.received[i]!;
      latencies.push(got.at - Date.parse(got.json.timestamp));
    }
    t.equal(
      latencies.length,
      HONEST_EVENTS,
      'every honest event arrived while the tarpit was flooding',
    );
    const p99 = quantile(latencies, 0.99);
    t.ok(
      p99 < 2000,
      `the honest tenant's commit-to-receipt p99 stays under 2 s (${p99} ms; p50 ${quantile(latencies, 0.5)} ms)`,
    );
    t.comment(`honest commit-to-receipt: p50 ${quantile(latencies, 0.5)} ms, p99 ${p99} ms`);
    // The delivery log lists the endpoint's deliveries newest first, in the order of the log.
    const logged = await ok<WebhookDeliveryList>(
      t,
      s,
      'GET',
      `/v1/webhooks/${honestHook.id}/deliveries?size=100`,
    );
    t.strictSame(
      receiver.received.map((r) => r.headers['webhook-id']),
      logged.items.map((d) => d.id).reverse(),
      'in commit order, once each',
    );

    // The tarpit's endpoints keep timing out: their circuits open and their attempts wait.
    const open = await until(
      async () =>
        (await ok<Webhook>(t, s, 'GET', `/v1/webhooks/${tarpitHooks[0]!.id}`, undefined, 200, key))
          .circuit,
      (circuit) => circuit.state === 'open',
    );
    t.ok(
      open.consecutiveTimeouts >= 2,
      `open after its timeouts in a row (${open.consecutiveTimeouts})`,
    );
    t.ok(Date.parse(open.until ?? '') > Date.now() + 30_000, 'for the cool-down');
    const listed = (await ok<WebhookList>(t, s, 'GET', '/v1/webhooks', undefined, 200, key)).items;
    t.ok(
      listed.every((w: { circuit: { state: string } }) =>
        ['open', 'closed', 'half-open'].includes(w.circuit.state),
      ),
      'every endpoint shows its circuit',
    );
    const deliveries = (
      await ok<WebhookDeliveryList>(
        t,
        s,
        'GET',
        `/v1/webhooks/${tarpitHooks[0]!.id}/deliveries?size=100`,
        undefined,
        200,
        key,
      )
    ).items;
    t.ok(
      deliveries.length > 0 && deliveries.every((d: { status: string }) => d.status !== 'failed'),
      'its deliveries are deferred, none given up',
    );
    t.match(
      (await ok<Webhook>(t, s, 'GET', `/v1/webhooks/${honestHook.id}`)).circuit,
      { state: 'closed', consecutiveTimeouts: 0, until: null },
      "the honest endpoint's circuit is closed",
    );

    // Capped per workspace: never more than its share of connections held at once (each attempt holds one).
    const [{ sending }] = await s.sql<
      [{ sending: number }]
    >`select count(*)::int as sending from webhook_lanes l join webhooks h on h.id = l.webhook_id
    where h.workspace_id = ${attacker.id} and l.state = 'sending'`;
    t.ok(sending <= 4, `at most the workspace's share in flight (${sending})`);
  },
);

t.test(
  'an endpoint that times out is deferred, then tried once with the short timeout; its answer closes the circuit',
  async (t) => {
    const s = await startFlowServer(t, {
      webhookAllowPrivate: true,
      webhookRetryBaseSeconds: 0.2,
      webhookTimeoutSeconds: 5,
      webhookEndpointInFlight: 1,
      webhookBreakerTimeouts: 1,
      webhookBreakerTimeoutSeconds: 1,
      webhookBreakerCooldownSeconds: 2,
    });
    const receiver = await startReceiver(t);
    // The first request hangs and trips the breaker; the second (half-open) meets the short timeout and opens it again; the third is answered.
    receiver.answer = (_request, index) => (index < 2 ? { hang: true } : { status: 204 });
    const hook = await ok<WebhookWithSecret>(
      t,
      s,
      'POST',
      '/v1/webhooks',
      { url: `${receiver.url}/in`, events: ['flow.created'] },
      201,
    );
    for (let i = 0; i < 2; i++) await newFlow(t, s, { name: `F${i}`, tasks: [] });

    const open = await until(
      async () => (await ok<Webhook>(t, s, 'GET', `/v1/webhooks/${hook.id}`)).circuit,
      (c) => c.state === 'open',
    );
    t.match(open, { state: 'open', consecutiveTimeouts: 1 }, 'open after the timeout');
    t.equal(
      receiver.received.length,
      1,
      'one attempt at a time (the endpoint cap): the other flow waits',
    );
    const [, second] = await receiver.waitFor(2);
    t.ok(second!.at >= Date.parse(open.until ?? '') - 50, 'nothing is sent during the cool-down');
    const [, , third] = await receiver.waitFor(3);
    const gap = third!.at - second!.at;
    t.ok(
      gap < 5000,
      `the half-open attempt gave up after the short timeout (${gap} ms: 1 s, then the 2-s cool-down; not 5 s)`,
    );

    await deliveriesSettled(s.sql);
    t.strictSame(
      (await ok<Webhook>(t, s, 'GET', `/v1/webhooks/${hook.id}`)).circuit,
      { state: 'closed', consecutiveTimeouts: 0, until: null },
      'an answer closes it',
    );
    const log = (await ok<WebhookDeliveryList>(t, s, 'GET', `/v1/webhooks/${hook.id}/deliveries`))
      .items;
    t.strictSame(
      log.map((d: { status: string }) => d.status),
      ['delivered', 'delivered'],
      'both deliveries went through: deferred, never failed',
    );
    t.equal(receiver.received.length, 4, 'three attempts for the first flow, one for the second');
  },
);

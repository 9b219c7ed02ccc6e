/**
 * The SSRF guard with WEBHOOK_ALLOW_PRIVATE off: internal addresses in every spelling are
 * refused when a URL is saved, and again when a delivery is attempted (the name may resolve
 * elsewhere by then); the connection goes to the address that was checked.
 */
import { isIP } from 'node:net';
import t from 'tap';
import {
  refusedAddress,
  resolveTarget,
  TargetRefused,
} from '../../../src/services/webhooks/address-guard.ts';
import { Connections, post } from '../../../src/services/webhooks/sender.ts';
import { newWebhookSecret } from '../../../src/services/webhooks/signing.ts';
import { insertWebhook } from '../../../src/storage/webhooks.store.ts';
import { newFlow, startFlowServer } from '../../helpers/flows.ts';
import { assertError, until } from '../../helpers/server.ts';
import { startReceiver } from './receiver.ts';
import type { Refusal, WebhookDelivery, WebhookDeliveryList } from '../../helpers/wire.ts';

t.test('internal addresses are refused, public ones pass', async (t) => {
  const refused = [
    '127.0.0.1',
    '127.255.0.9',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '169.254.0.1',
    '100.64.0.1',
    '100.127.255.255',
    '0.0.0.0',
    '0.1.2.3',
    '224.0.0.1',
    '239.1.1.1',
    '255.255.255.255',
    '198.18.0.1',
    '192.0.2.5',
    '::1',
    '::',
    'fe80::1',
    'fc00::1',
    'fd00:ec2::254',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:169.254.169.254',
    '::ffff:10.0.0.1',
    '0:0:0:0:0:ffff:c0a8:0101',
    '64:ff9b::a9fe:a9fe',
    '2002:7f00:1::',
    '::127.0.0.1',
    'fe80::1%eth0',
  ];
  for (const address of refused)
    t.type(refusedAddress(address), 'string', `${address} refused (${refusedAddress(address)})`);
  for (const address of [
    '8.8.8.8',
    '1.1.1.1',
    '93.184.216.34',
    '100.128.0.1',
    '172.32.0.1',
    '2606:4700:4700::1111',
    '::ffff:8.8.8.8',
    '2a00:1450::1',
  ]) {
    t.equal(refusedAddress(address), null, `${address} is public`);
  }
  await t.rejects(
    resolveTarget('http://localhost:8080/', false),
    TargetRefused,
    'localhost resolves to loopback',
  );
  t.equal(
    (await resolveTarget('http://localhost:8080/', true)).url.hostname,
    'localhost',
    'allowed with WEBHOOK_ALLOW_PRIVATE',
  );
  // A name that answers one public and one internal address is refused as a whole.
  const mixed = async () => [
    { address: '93.184.216.34', family: 4 },
    { address: '10.0.0.7', family: 4 },
  ];
  const refusedMixed = await resolveTarget('https://mixed.example.test/', false, mixed).catch(
    (error: unknown) => error,
  );
  t.type(refusedMixed, TargetRefused);
  t.match(refusedMixed, {
    message: /^The host mixed\.example\.test is not a public address; /,
    internal: 'mixed.example.test resolves to 10.0.0.7, a private address',
  });
  t.notMatch((refusedMixed as Error).message, /10\.0\.0\.7/, 'the message names no address');
  const fine = await resolveTarget('https://public.example.test/x', false, async () => [
    { address: '93.184.216.34', family: 4 },
  ]);
  t.equal(fine.address, '93.184.216.34', 'the checked address is the one to connect to');
});

t.test(
  'saving a URL that reaches inside is 400 VALIDATION_FAILED, however it is spelled',
  async (t) => {
    const s = await startFlowServer(t, { webhookAllowPrivate: false });
    const urls = [
      'http://127.0.0.1:8080/x',
      'http://localhost/x',
      'http://LOCALHOST./x',
      'http://[::1]/x',
      'http://[::ffff:127.0.0.1]/x',
      'http://[::ffff:7f00:1]/x',
      'http://169.254.169.254/latest/meta-data/',
      'http://10.0.0.1/',
      'http://192.168.0.10/',
      'http://100.64.1.1/',
      'http://0.0.0.0/',
      'http://0/',
      'http://2130706433/',
      'http://0x7f.1/',
      'http://017700000001/',
      'http://[fe80::1]/',
      'http://[fd00::1]/',
      'https://224.0.0.1/',
    ];
    for (const url of urls) {
      const res = await s.api<Refusal>('POST', '/v1/webhooks', {
        token: s.adminKey,
        body: { url, events: ['flow.created'] },
      });
      assertError(t, res, 400, 'VALIDATION_FAILED', url);
      t.equal(
        res.body.error.details?.errors?.[0]?.pointer,
        '/url',
        `${url}: the problem is the url`,
      );
      const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
      // A name a resolver may not know at all (`LOCALHOST.` on some machines) is refused for that.
      if (!res.body.error.message.endsWith('does not resolve (ENOTFOUND)'))
        t.equal(
          res.body.error.message,
          `The host ${host} is not a public address; webhooks only reach public addresses ` +
            '(for local testing only, an operator may start the server with WEBHOOK_ALLOW_PRIVATE=1 to reach any)',
          `${url}: says it is not a public address, and names the setting for local testing`,
        );
      // Issue 51, item 5: a name's answer is the installation's network, not the caller's to learn.
      if (!isIP(host))
        t.notMatch(res.text, /127\.0\.0\.1|::1/, `${url}: the address it resolves to is not named`);
    }
    const [count] = await s.sql`select count(*)::int as n from webhooks`;
    t.equal(count!.n, 0, 'nothing stored');

    // Changing a saved endpoint's URL is checked the same way.
    const row = await insertWebhook(s.sql, {
      id: 'whk_public12345',
      workspaceId: s.workspaceId,
      url: 'https://hooks.example.test/',
      events: ['flow.created'],
      description: null,
      secret: newWebhookSecret(),
    });
    assertError(
      t,
      await s.api('PATCH', `/v1/webhooks/${row.id}`, {
        token: s.adminKey,
        body: { url: 'http://169.254.169.254/' },
      }),
      400,
      'VALIDATION_FAILED',
    );
  },
);

t.test(
  'checked again at delivery: a name that now resolves inside is refused and nothing is sent',
  async (t) => {
    const s = await startFlowServer(t, { webhookAllowPrivate: false, webhookRetryBaseSeconds: 60 });
    const receiver = await startReceiver(t);
    // As if the name had resolved publicly when it was saved and points at loopback now.
    const url = receiver.url.replace('127.0.0.1', 'localhost');
    const row = await insertWebhook(s.sql, {
      id: 'whk_rebound12345',
      workspaceId: s.workspaceId,
      url,
      events: ['flow.created'],
      description: null,
      secret: newWebhookSecret(),
    });
    await newFlow(t, s, { name: 'Rebound', tasks: [] });
    const delivery = await until(
      async () =>
        (
          await s.api<WebhookDeliveryList>('GET', `/v1/webhooks/${row.id}/deliveries`, {
            token: s.adminKey,
          })
        ).body.items[0],
      (d): d is WebhookDelivery => d !== undefined && d.attempts >= 1 && d.status === 'pending',
    );
    t.equal(delivery.attemptLog[0]?.statusCode, null);
    t.match(delivery.attemptLog[0]?.error, /^The host localhost is not a public address; /);
    t.notMatch(
      JSON.stringify(delivery),
      /127\.0\.0\.1|::1/,
      'the delivery log, which viewers read, names no address',
    );
    t.ok(delivery.nextAttemptAt, 'retried later (DNS may change back)');
    t.equal(receiver.received.length, 0, 'the receiver got nothing');
  },
);

t.test('the connection goes to the checked address, not to a second DNS answer', async (t) => {
  const receiver = await startReceiver(t);
  const port = new URL(receiver.url).port;
  // `rebind.invalid` has no DNS at all: reaching the receiver proves the pinned address was used.
  const target = await resolveTarget(`http://rebind.invalid:${port}/pinned`, true, async () => [
    { address: '127.0.0.1', family: 4 },
  ]);
  const connections = new Connections();
  t.teardown(() => connections.close());
  const outcome = await post(
    target,
    { 'webhook-id': 'msg_x' },
    '{"a":1}',
    2000,
    connections.agentFor(target),
  );
  t.equal(outcome.statusCode, 204);
  const [got] = await receiver.waitFor(1);
  t.equal(got!.path, '/pinned');
  t.equal(got!.headers.host, `rebind.invalid:${port}`, 'the Host header keeps the name');
});

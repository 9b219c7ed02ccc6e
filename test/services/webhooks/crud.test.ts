/**
 * Webhook endpoints over HTTP: create (secret once), list, read, change, delete; refusals
 * of bad input that change nothing; scopes and roles; another workspace's endpoints are 404.
 */
import t from 'tap';
import { SCOPES } from '../../../src/services/auth/principal.ts';
import { createKey, createWorkspace } from '../../../src/services/auth/provision.ts';
import { WEBHOOK_EVENT_TYPES } from '../../../src/contract/webhook-events.schema.ts';
import { MAX_WEBHOOKS } from '../../../src/services/webhooks/webhooks.service.ts';
import { newFlow, ok, startFlowServer } from '../../helpers/flows.ts';
import { insertLog, lockLanes } from '../../../src/storage/webhook-lanes.store.ts';
import { assertError, item, until, type TestServer } from '../../helpers/server.ts';
import { deliveriesSettled, startReceiver } from './receiver.ts';
import type {
  JsonDocument,
  Refusal,
  Webhook,
  WebhookDeliveryList,
  WebhookList,
  WebhookWithSecret,
} from '../../helpers/wire.ts';

const config = { webhookAllowPrivate: true };
const URL_OK = 'https://hooks.example.test/flowplan';

async function rows(s: TestServer): Promise<number> {
  const [row] = await s.sql`select count(*)::int as n from webhooks`;
  return row!.n;
}

t.test('create shows the secret once; list, get, patch and delete', async (t) => {
  const s = await startFlowServer(t, config);
  // An IP literal needs no DNS; with WEBHOOK_ALLOW_PRIVATE the loopback address is accepted.
  const created = await ok<WebhookWithSecret>(
    t,
    s,
    'POST',
    '/v1/webhooks',
    { url: 'http://127.0.0.1:9/in', events: ['task.completed', 'flow.created'], description: 'CI' },
    201,
  );
  t.match(created, {
    url: 'http://127.0.0.1:9/in',
    description: 'CI',
    enabled: true,
    disabledReason: null,
    previousSecretExpiresAt: null,
  });
  t.strictSame(
    created.events,
    ['task.completed', 'flow.created'],
    'both events, in the order given',
  );
  t.match(created.id, /^whk_/);
  t.match(created.secret, /^whsec_/);

  const got = await ok<Webhook>(t, s, 'GET', `/v1/webhooks/${created.id}`);
  t.notOk('secret' in got, 'the secret is not shown again');
  const { secret: _secret, ...withoutSecret } = created;
  t.strictSame(got, withoutSecret, 'GET answers what POST did, minus the secret');
  const list = await ok<WebhookList>(t, s, 'GET', '/v1/webhooks');
  t.equal(list.total, 1);
  t.strictSame(list.items, [got]);
  t.notOk(JSON.stringify(list).includes('whsec_'), 'no secret in the list');

  const second = await ok<WebhookWithSecret>(
    t,
    s,
    'POST',
    '/v1/webhooks',
    { url: 'http://127.0.0.1:9/two', events: ['task.started'] },
    201,
  );
  t.equal(second.description, null);
  t.strictSame(
    (await ok<WebhookList>(t, s, 'GET', '/v1/webhooks')).items.map((w) => w.id),
    [second.id, created.id],
    'newest first',
  );
  t.strictSame(
    (await ok<WebhookList>(t, s, 'GET', '/v1/webhooks?size=1&from=1')).items.map((w) => w.id),
    [created.id],
    'paged',
  );

  const patched = await ok<Webhook>(t, s, 'PATCH', `/v1/webhooks/${created.id}`, {
    events: ['task.started'],
    description: null,
    enabled: false,
  });
  t.match(patched, { description: null, enabled: false, url: 'http://127.0.0.1:9/in' });
  t.strictSame(patched.events, ['task.started'], 'only the event patched in');
  const moved = await ok<Webhook>(t, s, 'PATCH', `/v1/webhooks/${created.id}`, {
    url: 'http://127.0.0.1:9/moved',
    enabled: true,
  });
  t.match(moved, { url: 'http://127.0.0.1:9/moved', enabled: true });
  t.strictSame(moved.events, ['task.started'], 'the events kept');

  await ok(t, s, 'DELETE', `/v1/webhooks/${created.id}`, undefined, 204);
  assertError(
    t,
    await s.api('GET', `/v1/webhooks/${created.id}`, { token: s.adminKey }),
    404,
    'NOT_FOUND',
  );
  assertError(
    t,
    await s.api('DELETE', `/v1/webhooks/${created.id}`, { token: s.adminKey }),
    404,
    'NOT_FOUND',
  );
  t.equal((await ok<WebhookList>(t, s, 'GET', '/v1/webhooks')).total, 1);
});

t.test('bad input is refused with VALIDATION_FAILED and nothing is stored', async (t) => {
  const s = await startFlowServer(t, config);
  const bad: [string, unknown][] = [
    ['ftp scheme', { url: 'ftp://example.test/x', events: ['flow.created'] }],
    ['javascript scheme', { url: 'javascript:alert(1)', events: ['flow.created'] }],
    ['relative URL', { url: '/hooks', events: ['flow.created'] }],
    [
      'credentials in the URL',
      { url: 'https://user:pass@example.test/x', events: ['flow.created'] },
    ],
    ['a user name in the URL', { url: 'https://user@example.test/x', events: ['flow.created'] }],
    ['a fragment', { url: 'https://example.test/x#frag', events: ['flow.created'] }],
    ['URL too long', { url: `https://example.test/${'a'.repeat(2100)}`, events: ['flow.created'] }],
    ['unknown event type', { url: URL_OK, events: ['flow.exploded'] }],
    ['no events', { url: URL_OK, events: [] }],
    ['events twice', { url: URL_OK, events: ['flow.created', 'flow.created'] }],
    ['missing events', { url: URL_OK }],
    ['missing url', { events: ['flow.created'] }],
    ['url not a string', { url: 42, events: ['flow.created'] }],
    [
      'description too long',
      { url: URL_OK, events: ['flow.created'], description: 'x'.repeat(501) },
    ],
    ['unknown field', { url: URL_OK, events: ['flow.created'], secret: 'whsec_mine' }],
    [
      'host that does not resolve',
      { url: 'https://no-such-host.invalid/x', events: ['flow.created'] },
    ],
  ];
  for (const [what, body] of bad) {
    const res = await s.api<Refusal>('POST', '/v1/webhooks', { token: s.adminKey, body });
    assertError(t, res, 400, 'VALIDATION_FAILED', what);
    t.ok(Array.isArray(res.body.error.details?.errors), `${what}: details.errors`);
  }
  assertError(
    t,
    await s.api('POST', '/v1/webhooks', {
      token: s.adminKey,
      raw: '{"url":',
      headers: { 'content-type': 'application/json' },
    }),
    400,
    'VALIDATION_FAILED',
    'broken JSON',
  );
  t.equal(await rows(s), 0, 'nothing stored');

  const hook = await ok<WebhookWithSecret>(
    t,
    s,
    'POST',
    '/v1/webhooks',
    { url: 'http://127.0.0.1:9/x', events: ['flow.created'] },
    201,
  );
  const before = await ok(t, s, 'GET', `/v1/webhooks/${hook.id}`);
  for (const [what, body] of [
    ['empty patch', {}],
    ['bad scheme', { url: 'gopher://x.test/' }],
    ['credentials', { url: 'http://a:b@127.0.0.1/' }],
    ['unknown event', { events: ['nope'] }],
    ['enabled not boolean', { enabled: 'yes' }],
    ['secret not patchable', { secret: 'whsec_x' }],
  ] as const) {
    assertError(
      t,
      await s.api('PATCH', `/v1/webhooks/${hook.id}`, { token: s.adminKey, body }),
      400,
      'VALIDATION_FAILED',
      `PATCH ${what}`,
    );
  }
  t.strictSame(
    await ok(t, s, 'GET', `/v1/webhooks/${hook.id}`),
    before,
    'unchanged by refused patches',
  );
  assertError(
    t,
    await s.api('GET', '/v1/webhooks/not-an-id', { token: s.adminKey }),
    400,
    'VALIDATION_FAILED',
    'malformed id',
  );
});

t.test('a workspace has at most 50 webhooks', async (t) => {
  const s = await startFlowServer(t, config);
  for (let i = 0; i < MAX_WEBHOOKS; i++)
    await ok(
      t,
      s,
      'POST',
      '/v1/webhooks',
      { url: `http://127.0.0.1:9/${i}`, events: ['flow.created'] },
      201,
    );
  assertError(
    t,
    await s.api('POST', '/v1/webhooks', {
      token: s.adminKey,
      body: { url: 'http://127.0.0.1:9/x', events: ['flow.created'] },
    }),
    403,
    'PLAN_LIMIT_REACHED',
  );
  t.equal(await rows(s), MAX_WEBHOOKS);
});

t.test('scopes and roles: flows:read reads; writing needs admin and flows:write', async (t) => {
  const s = await startFlowServer(t, config);
  const hook = await ok<WebhookWithSecret>(
    t,
    s,
    'POST',
    '/v1/webhooks',
    { url: 'http://127.0.0.1:9/x', events: ['flow.created'] },
    201,
  );
  const key = async (role: 'admin' | 'member' | 'viewer', scopes: string[]) =>
    (await createKey(s.sql, { workspaceId: s.workspaceId, role, scopes: scopes as never })).key;
  const viewer = await key('viewer', [...SCOPES]);
  const member = await key('member', [...SCOPES]);
  const adminReadOnly = await key('admin', ['flows:read']);
  const adminNoRead = await key('admin', ['flows:write']);
  t.equal((await s.api('GET', '/v1/webhooks', { token: viewer })).status, 200, 'a viewer lists');
  t.equal(
    (await s.api('GET', `/v1/webhooks/${hook.id}/deliveries`, { token: viewer })).status,
    200,
    'and reads deliveries',
  );
  assertError(
    t,
    await s.api('GET', '/v1/webhooks', { token: adminNoRead }),
    403,
    'INSUFFICIENT_SCOPE',
    'reading needs flows:read',
  );
  const body = { url: 'http://127.0.0.1:9/y', events: ['flow.created'] };
  for (const [who, token, status, code] of [
    ['viewer', viewer, 403, 'FORBIDDEN'],
    ['member', member, 403, 'FORBIDDEN'],
    ['admin without flows:write', adminReadOnly, 403, 'INSUFFICIENT_SCOPE'],
  ] as const) {
    assertError(
      t,
      await s.api('POST', '/v1/webhooks', { token, body }),
      status,
      code,
      `${who} cannot create`,
    );
    assertError(
      t,
      await s.api('PATCH', `/v1/webhooks/${hook.id}`, { token, body: { enabled: false } }),
      status,
      code,
      `${who} cannot change`,
    );
    assertError(
      t,
      await s.api('DELETE', `/v1/webhooks/${hook.id}`, { token }),
      status,
      code,
      `${who} cannot delete`,
    );
    assertError(
      t,
      await s.api('POST', `/v1/webhooks/${hook.id}/rotate-secret`, { token }),
      status,
      code,
      `${who} cannot rotate`,
    );
  }
  assertError(t, await s.api('GET', '/v1/webhooks'), 401, 'UNAUTHORIZED', 'no credential');
  t.equal(await rows(s), 1);
  t.equal((await ok<Webhook>(t, s, 'GET', `/v1/webhooks/${hook.id}`)).enabled, true, 'unchanged');
});

t.test(
  'a URL is shown whole only to an admin with flows:write: others see its host, not the token in its path and query',
  async (t) => {
    const s = await startFlowServer(t, { ...config, webhookRetryBaseSeconds: 60 });
    const receiver = await startReceiver(t);
    // The receiver moves its endpoint: its redirect repeats the token.
    receiver.answer = () => ({
      status: 308,
      headers: { location: `${receiver.url}/v2/in?token=s3cret` },
    });
    const hook = await ok<WebhookWithSecret>(
      t,
      s,
      'POST',
      '/v1/webhooks',
      { url: `${receiver.url}/in/s3cret-path?token=s3cret`, events: ['flow.created'] },
      201,
    );
    const bare = await ok<WebhookWithSecret>(
      t,
      s,
      'POST',
      '/v1/webhooks',
      { url: 'http://127.0.0.1:9', events: ['task.started'] },
      201,
    );
    t.equal(
      hook.url,
      `${receiver.url}/in/s3cret-path?token=s3cret`,
      'the admin who registered it sees it whole',
    );
    await newFlow(t, s, { name: 'Delivered', tasks: [] });
    await until(
      async () =>
        (await ok<WebhookDeliveryList>(t, s, 'GET', `/v1/webhooks/${hook.id}/deliveries`)).items,
      (items: { attempts: number; lastError: string | null }[]) => items[0]?.lastError != null,
    );

    const key = async (role: 'admin' | 'member' | 'viewer', scopes: string[]) =>
      (await createKey(s.sql, { workspaceId: s.workspaceId, role, scopes: scopes as never })).key;
    const adminWriter = await key('admin', ['flows:read', 'flows:write']);
    const got = await ok<Webhook>(
      t,
      s,
      'GET',
      `/v1/webhooks/${hook.id}`,
      undefined,
      200,
      adminWriter,
    );
    t.equal(got.url, hook.url, 'an admin key that may change it sees it whole');
    t.ok(
      (await ok<WebhookList>(t, s, 'GET', '/v1/webhooks', undefined, 200, adminWriter)).items.some(
        (w) => w.url === hook.url,
      ),
      'in the list too',
    );

    for (const [who, token] of [
      // Issue 51, item 5: an admin's read-only key (a dashboard's) is no reason to see tokens.
      ['an admin key with flows:read only', await key('admin', ['flows:read'])],
      ['a viewer', await key('viewer', ['flows:read'])],
      ['a member with every scope', await key('member', [...SCOPES])],
    ] as const) {
      const one = await s.api<Webhook>('GET', `/v1/webhooks/${hook.id}`, { token });
      t.equal(one.status, 200);
      t.equal(one.body.url, `${receiver.url}/…`, `${who} sees the scheme and host`);
      const list = await s.api<WebhookList>('GET', '/v1/webhooks', { token });
      t.strictSame(
        list.body.items.map((w) => w.url).sort(),
        [`${receiver.url}/…`, 'http://127.0.0.1:9/'].sort(),
        `${who}: masked in the list; a URL with nothing after its host is shown as it is`,
      );
      const log = await s.api<WebhookDeliveryList>('GET', `/v1/webhooks/${hook.id}/deliveries`, {
        token,
      });
      t.equal(log.status, 200);
      t.match(
        log.body.items[0]?.lastError,
        /redirect not followed \(308 to http:\/\/127\.0\.0\.1:\d+\/…\)/,
        `${who}: the redirect's host, not where it leads`,
      );
      for (const res of [one, list, log])
        t.notOk(res.text.includes('s3cret'), `${who}: the token appears nowhere`);
    }
    t.equal(bare.url, 'http://127.0.0.1:9/');
  },
);

t.test("another workspace's webhooks are 404 everywhere and never listed", async (t) => {
  const s = await startFlowServer(t, config);
  const other = await createWorkspace(s.sql, { name: 'Other' });
  const { key } = await createKey(s.sql, {
    workspaceId: other.id,
    role: 'admin',
    scopes: [...SCOPES],
  });
  const mine = await ok<WebhookWithSecret>(
    t,
    s,
    'POST',
    '/v1/webhooks',
    { url: 'http://127.0.0.1:9/mine', events: ['flow.created'] },
    201,
  );
  await newFlow(t, s, { name: 'Delivered to mine', tasks: [] });
  const delivery = (
    await until(
      async () =>
        (await ok<WebhookDeliveryList>(t, s, 'GET', `/v1/webhooks/${mine.id}/deliveries`)).items,
      (items: { id: string }[]) => items.length > 0,
    )
  )[0]!;
  const W = `/v1/webhooks/${mine.id}`;
  for (const [method, path, body] of [
    ['GET', W],
    ['PATCH', W, { enabled: false }],
    ['DELETE', W],
    ['POST', `${W}/rotate-secret`],
    ['GET', `${W}/deliveries`],
    ['POST', `${W}/deliveries/${delivery!.id}/retry`],
  ] as const) {
    const res = await s.api(method, path, { token: key, body });
    assertError(t, res, 404, 'NOT_FOUND', `${method} ${path}`);
    t.notOk(res.text.includes('127.0.0.1'), 'leaks nothing');
  }
  t.equal(
    (await ok<WebhookList>(t, s, 'GET', '/v1/webhooks', undefined, 200, key)).total,
    0,
    'not in their list',
  );
  const still = await ok(t, s, 'GET', W);
  t.match(
    still,
    { enabled: true, url: 'http://127.0.0.1:9/mine', previousSecretExpiresAt: null },
    'untouched: still enabled, same URL, its secret not rotated',
  );
  // A delivery id of one endpoint under another endpoint of the same workspace is 404 too.
  const second = await ok<WebhookWithSecret>(
    t,
    s,
    'POST',
    '/v1/webhooks',
    { url: 'http://127.0.0.1:9/two', events: ['flow.created'] },
    201,
  );
  assertError(
    t,
    await s.api('POST', `/v1/webhooks/${second.id}/deliveries/${delivery!.id}/retry`, {
      token: s.adminKey,
    }),
    404,
    'NOT_FOUND',
  );
});

t.test(
  'the OpenAPI document has the routes and a webhooks section with every event payload',
  async (t) => {
    const s = await startFlowServer(t, config);
    const doc = (await s.api<JsonDocument>('GET', '/v1/openapi.json')).body;
    for (const path of [
      '/v1/webhooks',
      '/v1/webhooks/{webhookId}',
      '/v1/webhooks/{webhookId}/rotate-secret',
      '/v1/webhooks/{webhookId}/deliveries',
      '/v1/webhooks/{webhookId}/deliveries/{deliveryId}/retry',
    ])
      t.ok(doc.paths[path], `${path} documented`);
    t.strictSame(
      Object.keys(doc.webhooks).sort(),
      [...WEBHOOK_EVENT_TYPES].sort(),
      'one entry per event type',
    );
    const completed = doc.webhooks['task.completed'].post;
    t.strictSame(completed.requestBody.content['application/json'].schema.required, [
      'type',
      'timestamp',
      'workspaceId',
      'data',
    ]);
    t.strictSame(
      completed.parameters.map((p: { name: string }) => p.name),
      ['webhook-id', 'webhook-timestamp', 'webhook-signature'],
    );
  },
);

t.test(
  'a delete while the dispatcher records an outcome of the endpoint waits for it, then answers 204',
  async (t) => {
    // The dispatcher's outcome transaction (delivery.job.ts `record`) locks the lanes, then
    // writes the log, which locks the endpoint against deletion. A delete that locked the
    // endpoint first deadlocked with it, and the loser answered 500 (an OpenAPI sweep saw it).
    const s = await startFlowServer(t, config);
    const receiver = await startReceiver(t);
    const hook = await ok<WebhookWithSecret>(
      t,
      s,
      'POST',
      '/v1/webhooks',
      { url: receiver.url, events: ['task.started'] },
      201,
    );
    const flow = await newFlow(t, s, { name: 'Racing', tasks: [{ name: 'Only' }] });
    await ok(t, s, 'POST', `/v1/flows/${flow.id}/tasks/${item(flow.tasks).id}/start`);
    await receiver.waitFor(1);
    await deliveriesSettled(s.sql);
    const [lane] = await s.sql<
      { webhookId: string; flowKey: string; position: string }[]
    >`select webhook_id, flow_key, done_through::text as position from webhook_lanes where webhook_id = ${hook.id} and workspace_id = ${s.workspaceId}`;
    if (!lane) {
      t.fail('the delivery made a lane');
      return;
    }

    let deleted: Promise<{ status: number }> | undefined;
    await s.sql.begin(async (tx) => {
      await lockLanes(tx, [lane]);
      const [self] = await tx<{ pid: number }[]>`select pg_backend_pid() as pid`;
      deleted = s.api('DELETE', `/v1/webhooks/${hook.id}`, { token: s.adminKey });
      // Until the delete waits on this transaction (a backend of the app that it blocks).
      await until(
        async () =>
          (
            await s.sql<{ n: number }[]>`select count(*)::int as n from pg_stat_activity
              where ${self?.pid ?? 0}::int = any(pg_blocking_pids(pid))`
          )[0]?.n,
        (n) => n === 1,
      );
      await insertLog(tx, [
        {
          webhookId: lane.webhookId,
          position: lane.position,
          flowKey: lane.flowKey,
          type: 'task.started',
          eventCreatedAt: new Date(),
          attempt: 2,
          manual: true,
          sent: true,
          outcome: 'delivered',
          startedAt: new Date(),
          durationMs: 1,
          statusCode: 204,
          error: null,
          retryAfter: null,
        },
      ]);
    });
    t.equal((await deleted)?.status, 204, 'the delete answered once the outcome was written');
    await assertError(
      t,
      await s.api('GET', `/v1/webhooks/${hook.id}`, { token: s.adminKey }),
      404,
      'NOT_FOUND',
    );
    const [left] = await s.sql<{ n: number }[]>`select
      ((select count(*) from webhook_lanes where webhook_id = ${hook.id} and workspace_id = ${s.workspaceId}) + (select count(*) from webhook_log where webhook_id = ${hook.id} and workspace_id = ${s.workspaceId}))::int as n`;
    t.equal(left?.n, 0, 'its lanes and log went with it');
  },
);

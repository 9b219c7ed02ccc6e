/**
 * The live streams: Server-Sent Events at /v1/events/stream and the WebSocket at /v1/stream
 * (JSON or MessagePack frames; the bearer as a subprotocol or in the first message). Resume
 * from a cursor, filters, a revoked credential's streams closing, a slow consumer closed with
 * "resume from your cursor", events written on one process reaching subscribers on another.
 */
import t, { type Test } from 'tap';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { SCOPES } from '../../../src/services/auth/principal.ts';
import { createKey } from '../../../src/services/auth/provision.ts';
import { startChildServer } from '../jobs/child.ts';
import { assertError, cli, startTestServer, until } from '../../helpers/server.ts';
import { newFlow, socket, sse } from './clients.ts';
import type { EventPage, JsonDocument } from '../../helpers/wire.ts';

const server = (t: Test, overrides = {}) =>
  startTestServer(t, { rateLimitPerMinute: 1_000_000, rateLimitBurst: 1_000_000, ...overrides });

t.test('SSE: live events with the cursor as id, resume with Last-Event-ID, filters', async (t) => {
  const s = await server(t);
  const before = (await s.api<EventPage>('GET', '/v1/events', { token: s.adminKey })).body.next;
  const stream = await sse(t, s.url, s.adminKey);
  t.equal(stream.res.status, 200);
  t.match(stream.res.headers.get('content-type'), /^text\/event-stream/);
  t.equal(stream.res.headers.get('cache-control'), 'no-store');
  const filtered = await sse(t, s.url, s.adminKey, '?types=task.started');
  const flow = await newFlow(s, 'Live');
  await s.api('POST', `/v1/flows/${flow.id}/tasks/${flow.tasks[0]!.id}/start`, {
    token: s.adminKey,
  });
  await until(
    async () => stream.events().length,
    (n) => n >= 2,
    30_000,
  );
  const [created, started] = stream.events();
  t.match(created, {
    type: 'flow.created',
    id: /^evt_/,
    cursor: /^[A-Za-z0-9_-]{22}$/,
    workspaceId: s.workspaceId,
    data: { flowId: flow.id, name: 'Live' },
  });
  t.match(started, { type: 'task.started', data: { taskId: flow.tasks[0]!.id } });
  t.equal(stream.frames[0]!.id, created!.cursor, 'the SSE id is the cursor');
  t.equal(stream.frames[0]!.event, 'flow.created', 'the SSE event is the type');
  // The same events as the feed, byte for byte in meaning.
  const feed = await s.api<EventPage>('GET', `/v1/events?after=${before}`, { token: s.adminKey });
  t.same(
    feed.body.items.slice(0, 2),
    [created, started],
    'the feed and the stream agree on ids and cursors',
  );
  await until(
    async () => filtered.events().length,
    (n) => n >= 1,
    30_000,
  );
  t.same(
    filtered.events().map((e) => e.type),
    ['task.started'],
    'types filter',
  );

  // A reconnect with the last id it saw gets what it missed, then goes on live.
  await s.api('POST', `/v1/flows/${flow.id}/tasks/${flow.tasks[0]!.id}/complete`, {
    token: s.adminKey,
  });
  const resumed = await sse(t, s.url, s.adminKey, '', { 'last-event-id': created!.cursor });
  await until(
    async () => resumed.events().length,
    (n) => n >= 3,
    30_000,
  );
  t.same(
    resumed.events().map((e) => e.type),
    ['task.started', 'task.completed', 'task.unblocked'],
    'from after the cursor, in order',
  );
  await s.api('PATCH', `/v1/flows/${flow.id}`, {
    token: s.adminKey,
    body: { description: 'later' },
  });
  await until(
    async () => resumed.events().length,
    (n) => n >= 4,
    30_000,
  );
  t.equal(resumed.events()[3]!.type, 'flow.updated', 'then live');
  const ids = resumed.events().map((e) => e.id);
  t.equal(new Set(ids).size, ids.length, 'nothing twice across catch-up and live');

  const expired = await fetch(`${s.url}/v1/events/stream`, {
    headers: { authorization: `Bearer ${s.adminKey}`, 'last-event-id': 'x' },
  });
  t.equal(expired.status, 400, 'a malformed Last-Event-ID is refused before the stream opens');
  await expired.body?.cancel();
  const unauthorized = await fetch(`${s.url}/v1/events/stream`);
  t.equal(unauthorized.status, 401);
  await unauthorized.body?.cancel();
});

t.test(
  'WebSocket: JSON and MessagePack frames, the bearer as a subprotocol or first message',
  async (t) => {
    const s = await server(t);
    // From a cursor: whenever each socket is subscribed, it has everything after it.
    const { next } = (await s.api<EventPage>('GET', '/v1/events', { token: s.adminKey })).body;
    const json = socket(t, s.url, ['flowplan.v1.json', `bearer.${s.adminKey}`], `?after=${next}`);
    const packed = socket(
      t,
      s.url,
      ['flowplan.v1.msgpack', `bearer.${s.adminKey}`],
      `?after=${next}`,
    );
    const late = socket(t, s.url, ['flowplan.v1.json'], `?after=${next}`);
    t.ok(await json.opened, 'json socket opened');
    t.ok(await packed.opened, 'msgpack socket opened');
    t.ok(await late.opened, 'first-message socket opened');
    t.equal(
      json.state.protocol,
      'flowplan.v1.json',
      'the format protocol is chosen, never the bearer',
    );
    t.equal(packed.state.protocol, 'flowplan.v1.msgpack');
    late.ws.send(JSON.stringify({ token: s.adminKey }));
    const flow = await newFlow(s, 'Sockets');
    for (const client of [json, packed, late]) {
      await until(
        async () => client.events.filter((e) => e.data.flowId === flow.id).length,
        (n) => n >= 1,
        30_000,
      );
    }
    const jsonEvent = json.events.find((e) => e.data.flowId === flow.id);
    t.match(jsonEvent, {
      type: 'flow.created',
      id: /^evt_/,
      cursor: /^[A-Za-z0-9_-]{22}$/,
      data: { name: 'Sockets' },
    });
    t.same(
      packed.events.find((e) => e.data.flowId === flow.id),
      jsonEvent,
      'MessagePack decodes to the same event',
    );
    t.same(
      late.events.find((e) => e.data.flowId === flow.id),
      jsonEvent,
      'first-message auth streams the same',
    );

    const refused = socket(t, s.url, ['flowplan.v1.json', 'bearer.fpk_nope']);
    t.notOk(await refused.opened);
    t.equal(refused.state.status, 401, 'a bad bearer subprotocol is refused before the upgrade');
    const badFirst = socket(t, s.url, ['flowplan.v1.json']);
    t.ok(await badFirst.opened);
    badFirst.ws.send(JSON.stringify({ token: 'fpk_nope' }));
    await until(
      async () => badFirst.state.code,
      (c) => c !== null,
      30_000,
    );
    t.equal(badFirst.state.code, 4401, 'a bad first-message bearer closes with 4401');
    const badQuery = socket(t, s.url, [`bearer.${s.adminKey}`], '?types=nope');
    t.notOk(await badQuery.opened);
    t.equal(badQuery.state.status, 400, 'a bad filter is refused before the upgrade');
    const plain = await s.api('GET', '/v1/stream', { token: s.adminKey });
    assertError(t, plain, 426, 'UPGRADE_REQUIRED');
  },
);

t.test("a revoked credential's streams close within a second or so", async (t) => {
  const s = await server(t);
  const { id, key } = await createKey(s.sql, {
    workspaceId: s.workspaceId,
    role: 'admin',
    scopes: [...SCOPES],
  });
  const stream = await sse(t, s.url, key);
  const ws = socket(t, s.url, ['flowplan.v1.json', `bearer.${key}`]);
  t.ok(await ws.opened);
  const revoked = await cli(s.databaseUrl, ['key', 'revoke', '--id', id]);
  t.equal(revoked.code, 0, revoked.stderr);
  const at = Date.now();
  await until(
    async () => ws.state.code,
    (c) => c !== null,
    30_000,
  );
  await until(
    async () => stream.ended(),
    (e) => e,
    30_000,
  );
  t.equal(
    ws.state.code,
    4401,
    `closed with 4401${ws.state.error === null ? '' : ` (the client's error: ${ws.state.error})`}`,
  );
  t.match(stream.frames.at(-1), { event: 'close', data: /4401/ });
  t.comment(`closed ${Date.now() - at} ms after the revocation was committed`);
});

t.test(
  'a slow consumer is closed with "resume from your cursor", and resumes losing nothing',
  async (t) => {
    const s = await server(t, { streamMaxBufferedBytes: 16 * 1024 });
    const slow = socket(t, s.url, ['flowplan.v1.json', `bearer.${s.adminKey}`]);
    t.ok(await slow.opened);
    const flow = await newFlow(s, 'Big');
    await until(
      async () => slow.events.length,
      (n) => n >= 1,
      30_000,
    );
    const resumeFrom = slow.events[0]!.cursor;
    // The client stops reading; large events fill the socket buffers, then the server's limit.
    (slow.ws as unknown as { _socket: { pause(): void } })._socket.pause();
    const big = 'x'.repeat(200_000);
    for (let i = 0; i < 60; i++) {
      await s.sql`insert into outbox (workspace_id, flow_id, type, data) values (${s.workspaceId}, ${flow.id}, 'task.updated', ${s.sql.json({ flowId: flow.id, taskId: `tsk_${i}`, changes: ['description'], pad: big })})`;
    }
    (slow.ws as unknown as { _socket: { resume(): void } })._socket.resume();
    await until(
      async () => slow.state.code,
      (c) => c !== null,
      60_000,
    );
    t.equal(slow.state.code, 4000, 'closed as a slow consumer');
    t.match(slow.state.reason, /resume from your cursor/);
    // It resumes from the last cursor it read and gets the rest exactly once.
    const lastRead = slow.events.at(-1)!.cursor;
    const again = socket(
      t,
      s.url,
      ['flowplan.v1.json', `bearer.${s.adminKey}`],
      `?after=${lastRead}`,
    );
    t.ok(await again.opened);
    await until(
      async () => slow.events.length + again.events.length,
      (n) => n >= 61,
      60_000,
    );
    const all = [...slow.events, ...again.events];
    all.splice(
      0,
      all.findIndex((e) => e.cursor === resumeFrom),
    );
    const tasks = all.filter((e) => e.type === 'task.updated').map((e) => e.data.taskId);
    t.same(
      tasks,
      Array.from({ length: 60 }, (_, i) => `tsk_${i}`),
      'every event once, in order, across the close',
    );
    const metrics = await s.metrics();
    t.match(metrics, /flowplan_stream_closes_total\{reason="slow"\} [1-9]/);
  },
);

t.test('an event written on one process reaches subscribers on another', async (t) => {
  const s = await server(t);
  const child = await startChildServer(t, s.databaseUrl);
  const onChild = socket(t, child.url, ['flowplan.v1.json', `bearer.${s.adminKey}`]);
  const sseOnChild = await sse(t, child.url, s.adminKey);
  t.ok(await onChild.opened);
  const flow = await newFlow(s, 'Across');
  await until(
    async () => onChild.events.length + sseOnChild.events().length,
    (n) => n >= 2,
    30_000,
  );
  t.match(onChild.events[0], { type: 'flow.created', data: { flowId: flow.id } });
  t.match(sseOnChild.events()[0], { type: 'flow.created', data: { flowId: flow.id } });
});

t.test(
  'the AsyncAPI 3.0 document describes both streams, every event type, the close codes and frame, and is valid',
  async (t) => {
    const s = await server(t);
    const res = await s.api<JsonDocument>('GET', '/v1/asyncapi.json');
    t.equal(res.status, 200);
    const doc = res.body;
    t.equal(doc.asyncapi, '3.0.0');
    // Valid against the AsyncAPI 3.0.0 JSON Schema (its bundled copy of the draft-07 meta-schema is Ajv's own).
    const specs = (await import('@asyncapi/specs')).default;
    const schema = structuredClone(specs.schemas['3.0.0']) as {
      definitions: Record<string, unknown>;
    };
    delete schema.definitions['http://json-schema.org/draft-07/schema'];
    const ajv = new Ajv({ allErrors: true, strict: false });
    addFormats.default(ajv);
    const validate = ajv.compile(schema);
    t.ok(validate(doc), JSON.stringify(validate.errors?.slice(0, 3)));
    t.ok(doc.info.license?.name, 'a licence');

    t.equal(doc.channels.socket.address, '/v1/stream');
    t.equal(doc.channels.socketMsgpack.address, '/v1/stream');
    t.equal(doc.channels.sse.address, '/v1/events/stream');
    const { WEBHOOK_EVENT_TYPES } = await import('../../../src/contract/webhook-events.schema.ts');
    const names = (messages: Record<string, { name: string }>) =>
      Object.values(messages)
        .map((m) => m.name)
        .sort();
    t.same(names(doc.channels.socket.messages), [...WEBHOOK_EVENT_TYPES].sort());
    t.same(
      names(doc.channels.socketMsgpack.messages),
      [...WEBHOOK_EVENT_TYPES].sort(),
      'the MessagePack variant of every type',
    );
    t.ok(
      Object.values(doc.channels.socketMsgpack.messages).every(
        (m) => (m as { contentType: string }).contentType === 'application/vnd.msgpack',
      ),
    );
    t.match(
      doc.channels.socketMsgpack.bindings.ws.headers.properties['Sec-WebSocket-Protocol']
        .description,
      /flowplan\.v1\.msgpack/,
    );
    t.same(
      names(doc.channels.sse.messages),
      [...WEBHOOK_EVENT_TYPES, 'close'].sort(),
      'the SSE close frame',
    );
    t.same(doc.channels.sse.messages.close.payload.required, ['code', 'reason']);
    t.same(
      Object.keys(doc.operations.receiveOverSse.bindings.http.query.properties).sort(),
      ['after', 'flowId', 'types'],
      'the SSE filters',
    );
    t.match(doc.channels.sse['x-headers'].properties, {
      'Last-Event-ID': { type: 'string' },
      Authorization: { type: 'string' },
    });
    t.match(doc.channels.sse.description, /Last-Event-ID/);
    t.match(doc.components.securitySchemes.bearer, { type: 'http', scheme: 'bearer' });
    t.match(doc.components.securitySchemes.bearerSubprotocol, {
      type: 'httpApiKey',
      in: 'header',
      name: 'Sec-WebSocket-Protocol',
    });
    t.same(doc.servers.sse.security, [{ $ref: '#/components/securitySchemes/bearer' }]);
    for (const message of Object.values(doc.components.messages) as {
      name: string;
      payload: { required: string[]; properties: Record<string, unknown> };
    }[]) {
      if (message.name === 'close') continue;
      t.same([...message.payload.required].sort(), [
        'cursor',
        'data',
        'id',
        'timestamp',
        'type',
        'workspaceId',
      ]);
    }
    for (const op of Object.values(doc.operations) as {
      channel: { $ref: string };
      messages: { $ref: string }[];
      security: { $ref: string }[];
    }[]) {
      for (const ref of [
        op.channel.$ref,
        ...op.messages.map((m) => m.$ref),
        ...op.security.map((m) => m.$ref),
      ]) {
        const target = ref
          .slice(2)
          .split('/')
          .reduce(
            (node: Record<string, unknown> | undefined, key) =>
              node?.[key] as Record<string, unknown> | undefined,
            doc,
          );
        t.ok(target, `${ref} resolves`);
      }
    }
    t.match(doc.info.description, /4000 \(slow consumer: resume from your cursor\)/);
    t.match(doc.info.description, /1013 \(credential could not be checked/);
  },
);

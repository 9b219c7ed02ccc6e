/**
 * The edge's conventions on every route (CONTRACT §1): 404/405, ETag and 304, probes and
 * metrics, request ids, JSON-body refusals (415, 413, 400 with pointers) and oversized or
 * overcrowded headers, all through real HTTP.
 */
import net from 'node:net';
import t, { type Test } from 'tap';
import { HTTP_STATUS } from '../../../src/web/http/error-status.ts';
import { createKey } from '../../../src/services/auth/provision.ts';
import { addTestRoutes } from '../../helpers/routes.ts';
import { frame, rawRequest } from '../../helpers/raw.ts';
import { assertError, startTestServer, type ApiResponse } from '../../helpers/server.ts';
import type { Refusal } from '../../helpers/wire.ts';

const GENERATED_ID = /^[\w.:-]{1,128}$/;
const RANDOM_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const MAX_BODY = 4 * 1024 * 1024;

t.test('edge', async (t) => {
  const s = await startTestServer(t);
  const echo = await addTestRoutes(s);
  const { key: otherKey } = await createKey(s.sql, {
    workspaceId: s.workspaceId,
    role: 'admin',
    scopes: ['flows:read', 'flows:write'],
  });

  /** Every refusal below must leave the echo table as it was. */
  const noWrites = async (t: Test, label: string) =>
    t.equal(await echo.rows(), 0, `${label}: nothing was written`);

  t.test('unknown route: 404 NOT_FOUND, with or without a credential', async (t) => {
    // (`/` is not unknown: it sends a browser to the web app, test/web/app/signin.test.ts.)
    for (const path of ['/v1/nope', '/nope', '/v1/me/extra', '/v1']) {
      assertError(t, await s.api('GET', path), 404, 'NOT_FOUND', `GET ${path}`);
      assertError(
        t,
        await s.api('GET', path, { token: s.adminKey }),
        404,
        'NOT_FOUND',
        `GET ${path} with a key`,
      );
    }
    assertError(
      t,
      await s.api('POST', '/v1/nope', { token: s.adminKey, body: { name: 'x' } }),
      404,
      'NOT_FOUND',
    );
  });

  t.test('known path, wrong method: 405 METHOD_NOT_ALLOWED with Allow', async (t) => {
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      const res = await s.api(method, '/v1/me', { token: s.adminKey });
      assertError(t, res, 405, 'METHOD_NOT_ALLOWED', `${method} /v1/me`);
      t.equal(res.headers.get('allow'), 'GET');
    }
    const token = await s.api('GET', '/v1/oauth/token');
    assertError(t, token, 405, 'METHOD_NOT_ALLOWED');
    t.equal(token.headers.get('allow'), 'POST');
    const echoGet = await s.api('DELETE', '/v1/test/echo', { token: s.adminKey });
    assertError(t, echoGet, 405, 'METHOD_NOT_ALLOWED');
    t.equal(echoGet.headers.get('allow'), 'POST');
  });

  t.test('ETag, Vary and If-None-Match on GET /v1/me', async (t) => {
    const first = await s.api('GET', '/v1/me', { token: s.adminKey });
    t.equal(first.status, 200);
    const etag = first.headers.get('etag')!;
    t.match(etag, /^"[^"]+"$/, 'a strong entity tag');
    t.equal(
      first.headers.get('vary'),
      'Authorization, Accept',
      'the answer varies by credential and by Accept (JSON or MessagePack)',
    );

    for (const ifNoneMatch of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const res = await s.api('GET', '/v1/me', {
        token: s.adminKey,
        headers: { 'if-none-match': ifNoneMatch },
      });
      t.equal(res.status, 304, `If-None-Match: ${ifNoneMatch}`);
      t.equal(res.text, '', '304 has no body');
      t.equal(res.headers.get('etag'), etag);
      t.equal(res.headers.get('vary'), 'Authorization, Accept');
      t.notOk(res.headers.get('content-type'), 'no content type without a body');
    }
    const stale = await s.api('GET', '/v1/me', {
      token: s.adminKey,
      headers: { 'if-none-match': '"stale"' },
    });
    t.equal(stale.status, 200, 'a tag that does not match answers the representation');
    t.same(stale.body, first.body);

    // Another credential sees another representation under the same URL: its tag differs.
    const other = await s.api('GET', '/v1/me', {
      token: otherKey,
      headers: { 'if-none-match': etag },
    });
    t.equal(other.status, 200);
    t.not(other.headers.get('etag'), etag);
  });

  t.test('healthz, readyz and metrics answer without a credential', async (t) => {
    const health = await s.api('GET', '/healthz');
    t.equal(health.status, 200);
    t.same(health.body, { status: 'ok' });
    const ready = await s.api('GET', '/readyz');
    t.equal(ready.status, 200);
    t.same(ready.body, { status: 'ready' });

    await s.api('GET', '/v1/me', { token: s.adminKey });
    await s.api('GET', '/v1/test/items/itm_secret123', { token: s.adminKey });
    await s.api('GET', '/v1/unmatched-path-xyz');
    const metrics = await fetch(s.app.metricsUrl).then(async (res) => ({
      status: res.status,
      headers: res.headers,
      text: await res.text(),
    }));
    t.equal(metrics.status, 200);
    t.match(metrics.headers.get('content-type'), /^text\/plain/);
    t.ok(new URL(s.app.metricsUrl).port !== String(s.app.port), 'on a listener of its own');
    assertError(t, await s.api('GET', '/metrics'), 404, 'NOT_FOUND', 'not on the API port');
    t.match(
      metrics.text,
      /^flowplan_http_request_duration_seconds_bucket\{[^}]*route="\/v1\/me"[^}]*\} \d+$/m,
      'latency by route',
    );
    t.match(metrics.text, /flowplan_http_request_duration_seconds_count\{[^}]*route="\/v1\/me"/);
    t.match(
      metrics.text,
      /route="\/v1\/test\/items\/\{itemId\}"/,
      'the route template is the label',
    );
    t.notMatch(metrics.text, /itm_secret123/, 'never the raw path');
    t.notMatch(metrics.text, /unmatched-path-xyz/, 'unknown paths do not make labels');
    t.match(metrics.text, /route="unmatched"/);
    t.match(metrics.text, /^# TYPE flowplan_rate_limit_refusals_total counter$/m);
  });

  t.test('X-Request-Id is echoed when sane, generated otherwise, on every answer', async (t) => {
    const echoed = await s.api('GET', '/healthz', { headers: { 'x-request-id': 'req-42.a:b_c' } });
    t.equal(echoed.headers.get('x-request-id'), 'req-42.a:b_c');
    const generated: string[] = [];
    for (let i = 0; i < 20; i += 1)
      generated.push((await s.api('GET', '/healthz')).headers.get('x-request-id') ?? '');
    for (const id of generated) t.match(id, GENERATED_ID);
    t.equal(new Set(generated).size, generated.length, 'each request gets its own id');
    // Random, so an id tells nobody how many requests came before it: a UUID v4 (122 random
    // bits), and no run shares even its first 8 characters (a process prefix and a counter
    // would share them all; 20 random ones collide there with odds of about 1 in 20 million).
    for (const id of generated) t.match(id, RANDOM_ID, `${id} is random`);
    t.equal(
      new Set(generated.map((id) => id.slice(0, 8))).size,
      generated.length,
      'no shared prefix',
    );
    for (const bad of ['has space', 'x'.repeat(129), 'a"b', '<script>']) {
      const res = await s.api('GET', '/healthz', { headers: { 'x-request-id': bad } });
      const id = res.headers.get('x-request-id');
      t.match(id, GENERATED_ID, `replaced: ${bad.slice(0, 20)}`);
      t.not(id, bad);
    }
    const answers: [string, ApiResponse][] = [
      ['404', await s.api('GET', '/v1/nope', { headers: { 'x-request-id': 'r1' } })],
      ['405', await s.api('PUT', '/v1/me', { headers: { 'x-request-id': 'r1' } })],
      ['401', await s.api('GET', '/v1/me', { headers: { 'x-request-id': 'r1' } })],
      [
        '415',
        await s.api('POST', '/v1/test/echo', {
          token: s.adminKey,
          raw: 'x',
          headers: { 'content-type': 'text/plain', 'x-request-id': 'r1' },
        }),
      ],
      [
        '413',
        await s.api('POST', '/v1/test/echo', {
          token: s.adminKey,
          raw: Buffer.alloc(MAX_BODY + 1, 0x20),
          headers: { 'content-type': 'application/json', 'x-request-id': 'r1' },
        }),
      ],
    ];
    for (const [label, res] of answers)
      t.equal(res.headers.get('x-request-id'), 'r1', `${label} carries the request id`);
    await noWrites(t, 'request ids');
  });

  t.test('415 UNSUPPORTED_MEDIA_TYPE for a body that is not JSON', async (t) => {
    for (const type of [
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/jsonx',
      '',
    ]) {
      const res = await s.api('POST', '/v1/test/echo', {
        token: s.adminKey,
        raw: '{"name":"a"}',
        headers: type ? { 'content-type': type } : {},
      });
      assertError(t, res, 415, 'UNSUPPORTED_MEDIA_TYPE', `content-type ${JSON.stringify(type)}`);
    }
    await noWrites(t, '415');
    for (const type of [
      'application/json; charset=utf-8',
      'APPLICATION/JSON',
      'application/merge-patch+json',
    ]) {
      const res = await s.api('POST', '/v1/test/echo', {
        token: s.adminKey,
        raw: '{"name":"ok"}',
        headers: { 'content-type': type },
      });
      t.equal(res.status, 201, `${type} is JSON`);
    }
    t.equal(await echo.rows(), 3);
    await s.sql`delete from echo_rows`;
  });

  t.test('413 PAYLOAD_TOO_LARGE over the body limit, declared or streamed', async (t) => {
    const big = Buffer.alloc(MAX_BODY + 1, 0x20);
    const declared = await s.api<Refusal>('POST', '/v1/test/echo', {
      token: s.adminKey,
      raw: big,
      headers: { 'content-type': 'application/json' },
    });
    assertError(t, declared, 413, 'PAYLOAD_TOO_LARGE', 'Content-Length over the limit');
    t.equal(declared.body.error.details.limit, MAX_BODY);

    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < 5; i += 1) controller.enqueue(new Uint8Array(MAX_BODY / 4));
        controller.close();
      },
    });
    const chunked = await fetch(`${s.url}/v1/test/echo`, {
      method: 'POST',
      body: stream,
      duplex: 'half',
      headers: { authorization: `Bearer ${s.adminKey}`, 'content-type': 'application/json' },
    } as RequestInit);
    t.equal(chunked.status, 413, 'a chunked body is cut off at the limit too');
    t.equal(
      ((await chunked.json()) as { error: { code: string } }).error.code,
      'PAYLOAD_TOO_LARGE',
    );

    // Exactly at the limit the body is read and judged on its content.
    const prefix = '{"name":"x","pad":"';
    const atLimit = prefix + 'a'.repeat(MAX_BODY - prefix.length - 2) + '"}';
    t.equal(Buffer.byteLength(atLimit), MAX_BODY);
    const judged = await s.api<Refusal>('POST', '/v1/test/echo', {
      token: s.adminKey,
      raw: atLimit,
      headers: { 'content-type': 'application/json' },
    });
    assertError(
      t,
      judged,
      400,
      'VALIDATION_FAILED',
      'a body at the limit is parsed, not refused for size',
    );
    t.same(
      judged.body.error.details.errors.map((e: { pointer: string }) => e.pointer),
      ['/pad'],
    );
    await noWrites(t, '413');
    t.equal((await s.api('GET', '/healthz')).status, 200, 'still serving');
  });

  t.test(
    'a 20 MB body gets its 413: undici, a client that reads only after sending it all, chunked, Expect',
    async (t) => {
      const port = Number(new URL(s.url).port);
      const big = Buffer.alloc(20 * 1024 * 1024, 0x20);
      const viaUndici = await fetch(`${s.url}/v1/test/echo`, {
        method: 'POST',
        body: big,
        headers: { authorization: `Bearer ${s.adminKey}`, 'content-type': 'application/json' },
      });
      t.equal(viaUndici.status, 413, 'fetch (undici) reads the answer');
      t.equal(
        ((await viaUndici.json()) as { error: { code: string } }).error.code,
        'PAYLOAD_TOO_LARGE',
      );

      const head = `POST /v1/test/echo HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer ${s.adminKey}\r\nContent-Type: application/json\r\n`;
      const declared = await sendAllThenRead(port, `${head}Content-Length: ${big.length}\r\n\r\n`, [
        big,
      ]);
      t.equal(declared.error, null, 'the upload was not cut off (no EPIPE or reset)');
      t.equal(
        declared.status,
        413,
        'declared length: answered, and the answer is still there after the upload',
      );
      t.match(declared.text, /"code":"PAYLOAD_TOO_LARGE"/);
      t.match(declared.text, /\r\nconnection: close\r\n/i, 'and the client is told to close');

      const chunk = (b: Buffer) =>
        Buffer.concat([Buffer.from(`${b.length.toString(16)}\r\n`), b, Buffer.from('\r\n')]);
      const pieces = Array.from({ length: 20 }, () => chunk(big.subarray(0, 1024 * 1024)));
      const chunked = await sendAllThenRead(port, `${head}Transfer-Encoding: chunked\r\n\r\n`, [
        ...pieces,
        Buffer.from('0\r\n\r\n'),
      ]);
      t.equal(chunked.error, null, 'chunked: not cut off either');
      t.equal(chunked.status, 413);

      // uWS answers 100 Continue itself before any handler runs, so the 413 follows it.
      const expecting = await rawRequest(
        port,
        `${head}Content-Length: ${big.length}\r\nExpect: 100-continue\r\n\r\n`,
      );
      t.equal(expecting.status, 413, 'Expect: 100-continue: refused before the body is sent');
      t.equal((await s.api('GET', '/healthz')).status, 200, 'still serving');
    },
  );

  t.test('400 VALIDATION_FAILED lists each problem with its pointer', async (t) => {
    const send = (raw: string) =>
      s.api<Refusal>('POST', '/v1/test/echo', {
        token: s.adminKey,
        raw,
        headers: { 'content-type': 'application/json' },
      });
    const problems = (res: ApiResponse<Refusal>) =>
      res.body.error.details.errors as { in: string; pointer: string; message: string }[];
    const pointers = (res: ApiResponse<Refusal>) =>
      problems(res)
        .map((e) => e.pointer)
        .sort();

    const wrongType = await send('{"name":5}');
    assertError(t, wrongType, 400, 'VALIDATION_FAILED');
    t.same(problems(wrongType), [
      { in: 'body', pointer: '/name', message: problems(wrongType)[0]!.message },
    ]);
    t.match(problems(wrongType)[0]!.message, /string/);

    const unknown = await send('{"name":"a","nmae":"b"}');
    assertError(t, unknown, 400, 'VALIDATION_FAILED');
    t.same(problems(unknown), [{ in: 'body', pointer: '/nmae', message: 'is not a known field' }]);

    const missing = await send('{"count":1}');
    assertError(t, missing, 400, 'VALIDATION_FAILED');
    t.same(problems(missing), [{ in: 'body', pointer: '/name', message: 'is required' }]);

    const several = await send(
      '{"name":"' + 'n'.repeat(51) + '","count":1.5,"extra":true,"a/b~c":1}',
    );
    assertError(t, several, 400, 'VALIDATION_FAILED');
    t.same(
      pointers(several),
      ['/a~1b~0c', '/count', '/extra', '/name'],
      'every problem, pointers escaped (RFC 6901)',
    );
    for (const problem of problems(several)) {
      t.equal(problem.in, 'body');
      t.type(problem.message, 'string');
    }

    for (const raw of [
      '{"name":',
      '{name:"a"}',
      "{'name':'a'}",
      '{"name":"a"}}',
      'nul',
      '\u00ff\u00fe',
    ]) {
      const res = await send(raw);
      assertError(t, res, 400, 'VALIDATION_FAILED', `malformed ${JSON.stringify(raw)}`);
      t.same(
        problems(res).map((e) => [e.in, e.pointer]),
        [['body', '']],
      );
    }
    for (const raw of ['[]', 'null', '"name"', '42', 'true']) {
      assertError(t, await send(raw), 400, 'VALIDATION_FAILED', `not an object: ${raw}`);
    }
    const empty = await s.api('POST', '/v1/test/echo', {
      token: s.adminKey,
      headers: { 'content-type': 'application/json' },
    });
    assertError(t, empty, 400, 'VALIDATION_FAILED', 'an empty body where one is required');
    const emptyUntyped = await s.api('POST', '/v1/test/echo', { token: s.adminKey });
    assertError(t, emptyUntyped, 400, 'VALIDATION_FAILED', 'no body and no content type');

    // Values that pass the schema but not the column: refused as the client's fault, never a 500.
    assertError(
      t,
      await send('{"name":"a","count":99999999999}'),
      400,
      'VALIDATION_FAILED',
      'integer out of the column range',
    );
    assertError(
      t,
      await send('{"name":"nul\\u0000byte"}'),
      400,
      'VALIDATION_FAILED',
      'a NUL character Postgres text cannot hold',
    );

    // Query and path parameters are checked and pointed at too.
    const query = await s.api<Refusal>('GET', '/v1/test/items/itm_1?size=0&bogus=1', {
      token: s.adminKey,
    });
    assertError(t, query, 400, 'VALIDATION_FAILED');
    t.same(
      problems(query)
        .map((e) => [e.in, e.pointer])
        .sort(),
      [
        ['query', '/bogus'],
        ['query', '/size'],
      ],
    );
    const path = await s.api<Refusal>('GET', '/v1/test/items/nope', { token: s.adminKey });
    assertError(t, path, 400, 'VALIDATION_FAILED');
    t.same(
      problems(path).map((e) => [e.in, e.pointer]),
      [['path', '/itemId']],
    );
    const fine = await s.api('GET', '/v1/test/items/itm_1?size=7', { token: s.adminKey });
    t.equal(fine.status, 200);
    t.same(fine.body, { id: 'itm_1', size: 7 }, 'query values are coerced to their declared types');
    await noWrites(t, '400');

    const ok = await send('{"name":"fine","count":3}');
    t.equal(ok.status, 201);
    t.hasStrict(ok.body, { name: 'fine', count: 3 });
    t.equal(await echo.rows(), 1, 'the valid request wrote once');
    await s.sql`delete from echo_rows`;
  });

  t.test(
    'a huge header and a crowd of headers get a clear refusal or a closed connection, never a crash',
    async (t) => {
      const port = s.app.port;
      const huge = await rawRequest(
        port,
        frame('GET', '/v1/me', [
          ['Authorization', `Bearer ${s.adminKey}`],
          ['X-Big', 'a'.repeat(20_000)],
        ]),
      );
      t.equal(huge.status, 200, 'a 20 KB header is served: 64 KB is the cap on either transport');

      const oversize = await rawRequest(
        port,
        frame('GET', '/healthz', [['X-Big', 'a'.repeat(1_000_000)]]),
      );
      t.ok(
        oversize.status === null || (oversize.status >= 400 && oversize.status < 500),
        `1 MB header: ${oversize.status ?? oversize.ended}`,
      );

      const crowd = await rawRequest(
        port,
        frame(
          'GET',
          '/v1/me',
          Array.from({ length: 150 }, (_, i) => ['X-Repeated', String(i)] as [string, string]),
        ),
        2000,
      );
      t.equal(crowd.status, 431, '150 headers: 431');
      // node:http's transport answers in the envelope; uWebSockets.js refuses the crowd itself
      // (its own HTML page), before any of our code runs.
      if (s.app.transport === 'node') {
        const body = JSON.parse(crowd.body) as { error: { code: string } };
        t.equal(body.error.code, 'VALIDATION_FAILED', 'in the error envelope');
      } else t.match(crowd.body, /Request Header Fields Too Large/, "uWS's own refusal");

      const after = await s.api('GET', '/v1/me', { token: s.adminKey });
      t.equal(after.status, 200, 'the server still serves afterwards');
      t.equal((await s.api('GET', '/healthz')).status, 200);
    },
  );

  t.test('every error status matches the code table', async (t) => {
    // Every one a refusal.
    const samples: ApiResponse<Refusal>[] = [
      await s.api('GET', '/v1/nope'),
      await s.api('PATCH', '/v1/me'),
      await s.api('GET', '/v1/me'),
      await s.api('POST', '/v1/test/echo', {
        token: s.adminKey,
        raw: 'x',
        headers: { 'content-type': 'text/plain' },
      }),
      await s.api('POST', '/v1/test/echo', { token: s.adminKey, body: { bad: 1 } }),
    ];
    for (const res of samples) {
      const code = res.body.error.code as keyof typeof HTTP_STATUS;
      t.equal(HTTP_STATUS[code], res.status, `${code} is ${res.status}`);
      t.match(res.headers.get('content-type'), /^application\/json/);
    }
  });
});

/**
 * A client that writes the whole request before it reads anything (as Python's requests
 * does): reading stays paused until the last byte is written, so a server that closed early
 * and reset the connection leaves it nothing to read.
 */
function sendAllThenRead(
  port: number,
  head: string,
  body: Buffer[],
): Promise<{ status: number | null; text: string; error: string | null }> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.pause();
    let error: string | null = null;
    const received: Buffer[] = [];
    socket.on('error', (e: NodeJS.ErrnoException) => {
      error ??= e.code ?? e.message;
    });
    const done = () => {
      const text = Buffer.concat(received).toString('latin1');
      resolve({
        status: /^HTTP\/1\.1 (\d{3})/.exec(text)
          ? Number(/^HTTP\/1\.1 (\d{3})/.exec(text)![1])
          : null,
        text,
        error,
      });
    };
    socket.on('close', done);
    socket.on('data', (c: Buffer) => {
      received.push(c);
      const text = Buffer.concat(received).toString('latin1');
      const length = /\r\ncontent-length: *(\d+)/i.exec(text);
      const split = text.indexOf('\r\n\r\n');
      if (length && split > 0 && text.length >= split + 4 + Number(length[1])) socket.destroy();
    });
    void (async () => {
      for (const piece of [Buffer.from(head), ...body]) {
        if (error) break;
        if (!socket.write(piece))
          await new Promise((r) => {
            socket.once('drain', r);
            socket.once('close', r);
          });
      }
      socket.resume();
    })();
  });
}

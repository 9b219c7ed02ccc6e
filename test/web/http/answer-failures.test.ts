/**
 * Issue 51, item 1: no exception while answering ends the process. Routes added to the app's
 * own edge (`edge.add`, the way the composition root gives it every route) throw from a
 * handler, hand back headers, cookies and statuses no transport may write, bodies a serializer
 * cannot make (a BigInt, a cycle, a function, MessagePack of what is not JSON), a stream whose
 * opener throws and one whose later write throws, and an error page that fails to render.
 * Before any byte is out the client gets the 500 in the envelope with its request id, logged
 * with that id at error level; after, the connection closes. Every time the next request is
 * answered, and a close with all the time in the world ends: nothing stayed in flight.
 *
 * Then the signin links that took the process down: `next` beyond Latin-1 with a signed-in
 * session (GET) and with a correct password (POST) redirect, percent-encoded.
 *
 * Served by a listener of the app's own transport (uWS on Node 24, node:http here) over the
 * app's edge, so its close can be awaited without a deadline.
 */
import t, { type Test } from 'tap';
import { DomainError } from '../../../src/platform/errors.ts';
import { appPrefix } from '../../../src/web/app-url.ts';
import { openTransport } from '../../../src/web/http/transport.ts';
import type { HttpStream } from '../../../src/web/http/request.ts';
import type { Reply, Route } from '../../../src/web/http/route.ts';
import { createPerson } from '../../helpers/people.ts';
import { frame, rawRequest } from '../../helpers/raw.ts';
import { request, startTestServer } from '../../helpers/server.ts';
import { Agent } from '../../services/auth/agent.ts';

/** Longer than any test run: a close that waits for a request left in flight never ends. */
const NO_DEADLINE_MS = 60 * 60_000;

const ok = (body: unknown, extra: Partial<Reply> = {}): Reply =>
  ({ status: 200, body, ...extra }) as Reply;

/** Answers a handler returns that no transport can write, by name. */
const UNWRITABLE: Record<string, () => Reply> = {
  'header beyond Latin-1': () => ok({}, { headers: { 'X-Slash': '\u2215' } }),
  'header with CR/LF': () => ok({}, { headers: { 'X-Split': 'a\r\nSet-Cookie: owned=1' } }),
  'header with a control character': () => ok({}, { headers: { 'X-Nul': 'a\u0000b' } }),
  'header beyond ASCII in Latin-1': () => ok({}, { headers: { 'X-Latin': 'caf\u00e9' } }),
  'header name that is no token': () => ok({}, { headers: { 'Bad Name': 'x' } }),
  'header value that is no text': () => ok({}, { headers: { 'X-Number': 7 as unknown as string } }),
  'cookie with CR/LF': () => ok({}, { cookies: ['a=1\r\nX-Injected: 1'] }),
  'status node rejects': () => ({ status: 1000 }),
  'status below 200': () => ({ status: 42 }),
  'JSON of a BigInt': () => ok({ n: 1n }),
  'JSON of a cycle': () => {
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    return ok(cycle);
  },
  'JSON of a function (no text at all)': () => ok(() => 1),
};

const unwritable = (kind: string): Reply => {
  const make = UNWRITABLE[kind];
  if (!make) throw new Error(`no such kind: ${kind}`);
  return make();
};

t.test('an exception while answering is one failed answer, never the process', async (t) => {
  const s = await startTestServer(t);
  /** Each stream route's end as the route sees it (its onClose). */
  const streamEnds = new Map<string, Promise<void>>();
  const streamRoute = (name: string, open: (stream: HttpStream) => void): Route => {
    let ended!: () => void;
    streamEnds.set(name, new Promise((resolve) => (ended = resolve)));
    return {
      method: 'GET',
      path: `/v1/test/fail/stream-${name}`,
      operationId: `failStream_${name}`,
      summary: name,
      auth: 'none',
      responses: { 200: { description: 'stream' } },
      handler: () => ({
        status: 200,
        contentType: 'text/event-stream',
        stream: (stream) => {
          stream.onClose(ended);
          open(stream);
        },
      }),
    };
  };
  const routes: Route[] = [
    {
      method: 'GET',
      path: '/v1/test/fail/handler',
      operationId: 'failHandler',
      summary: 'throws',
      auth: 'none',
      responses: { 200: { description: 'never' } },
      handler: () => {
        throw new Error('a handler that throws');
      },
    },
    {
      method: 'GET',
      path: '/v1/test/fail/unwritable',
      operationId: 'failUnwritable',
      summary: 'answers what cannot be written',
      auth: 'none',
      responses: { 200: { description: 'never' } },
      handler: ({ query }) => unwritable(String(query.kind)),
    },
    {
      method: 'POST',
      path: '/v1/test/fail/unwritable',
      operationId: 'failUnwritableBody',
      summary: 'reads a body, then answers what cannot be written',
      auth: 'none',
      bodyKind: 'bytes',
      responses: { 200: { description: 'never' } },
      handler: ({ rawBody }) => unwritable(rawBody.toString()),
    },
    {
      method: 'GET',
      path: '/v1/test/fail/not-json',
      operationId: 'failMsgpack',
      summary: 'JSON bytes that are not JSON: MessagePack cannot encode them',
      auth: 'none',
      responses: { 200: { description: 'never' } },
      handler: () => ({
        status: 200,
        body: Buffer.from('{not json'),
        contentType: 'application/json',
      }),
    },
    {
      method: 'GET',
      path: '/v1/test/fail/page',
      operationId: 'failPage',
      summary: 'a refusal whose error page fails to render',
      auth: 'none',
      responses: { 200: { description: 'never' } },
      renderError: () => {
        throw new Error('a renderer that throws');
      },
      handler: () => {
        throw new DomainError('NOT_FOUND', 'Nothing here');
      },
    },
    streamRoute('opener', () => {
      throw new Error('an opener that throws');
    }),
    streamRoute('write', (stream) => {
      stream.write('data: one\n\n');
      // Later, from the route's own code: a chunk that is no text.
      setImmediate(() => stream.write(42 as unknown as string));
    }),
  ];
  s.app.edge.add(routes);
  const { listen } = await openTransport(s.app.transport);
  const server = await listen(s.app.edge, '127.0.0.1', 0);
  const base = `http://127.0.0.1:${server.port}`;
  let n = 0;

  /** The next request is answered as ever. */
  const alive = async (t: Test, label: string) =>
    t.equal(
      (await request(base, 'GET', '/healthz')).status,
      200,
      `${label}: the next request is answered`,
    );

  const failsWithEnvelope = async (
    label: string,
    method: string,
    path: string,
    body?: string,
    headers: Record<string, string> = {},
  ) => {
    const id = `fail-${(n += 1)}`;
    const res = await request<{ error?: { code?: string } }>(base, method, path, {
      raw: body,
      headers: { 'x-request-id': id, ...headers },
    });
    t.equal(res.status, 500, `${label}: 500`);
    t.equal(res.body?.error?.code, 'INTERNAL', `${label}: in the envelope`);
    t.match(res.headers.get('content-type'), /^application\/json/, `${label}: JSON`);
    t.equal(res.headers.get('x-request-id'), id, `${label}: with its request id`);
    t.notOk(res.headers.get('set-cookie'), `${label}: nothing of the failed answer is sent`);
    t.ok(
      s.logged.some((line) => {
        const entry = JSON.parse(line) as { level: number; requestId?: string };
        return entry.level >= 50 && entry.requestId === id;
      }),
      `${label}: logged at error level with its request id`,
    );
    await alive(t, label);
  };

  await failsWithEnvelope('a handler that throws', 'GET', '/v1/test/fail/handler');
  for (const kind of Object.keys(UNWRITABLE)) {
    await failsWithEnvelope(
      kind,
      'GET',
      `/v1/test/fail/unwritable?kind=${encodeURIComponent(kind)}`,
    );
    await failsWithEnvelope(`${kind}, after a body`, 'POST', '/v1/test/fail/unwritable', kind);
  }
  await failsWithEnvelope(
    'MessagePack of what is not JSON',
    'GET',
    '/v1/test/fail/not-json',
    undefined,
    {
      accept: 'application/msgpack',
    },
  );

  t.test('an error page that fails to render: the refusal in the envelope', async (t) => {
    const id = `fail-${(n += 1)}`;
    const res = await request<{ error?: { code?: string } }>(base, 'GET', '/v1/test/fail/page', {
      headers: { 'x-request-id': id },
    });
    t.equal(res.status, 404, 'the refusal it was');
    t.equal(res.body?.error?.code, 'NOT_FOUND');
    t.equal(res.headers.get('x-request-id'), id);
    t.ok(
      s.logged.some((line) => line.includes(id) && line.includes('a renderer that throws')),
      "the renderer's failure is logged with the request id",
    );
    await alive(t, 'a renderer that throws');
  });

  for (const name of ['opener', 'write']) {
    t.test(`a stream whose ${name} throws: its connection closes`, async (t) => {
      const id = `fail-${(n += 1)}`;
      const res = await rawRequest(
        server.port,
        frame('GET', `/v1/test/fail/stream-${name}`, [['X-Request-Id', id]]),
      );
      t.not(res.ended, 'silent', 'the connection is closed, not left hanging');
      t.notOk(res.body.endsWith('0\r\n\r\n'), 'the stream does not end as if complete');
      await streamEnds.get(name);
      t.pass("the route's stream ends (its onClose ran)");
      t.ok(
        s.logged.some((line) => line.includes(id) && line.includes('answer not written')),
        'logged with the request id',
      );
      await alive(t, `a stream's ${name}`);
    });
  }

  t.test('nothing stayed in flight: a close without a deadline ends', async (t) => {
    await server.close(NO_DEADLINE_MS);
    t.pass('closed');
  });
});

t.test(
  'a signin link with `next` beyond Latin-1 redirects there, percent-encoded (issue 51)',
  async (t) => {
    const s = await startTestServer(t);
    const prefix = appPrefix(s.app.services.config);
    const email = 'nowhere@example.com';
    const password = 'correct horse battery staple';
    // An account in no workspace is enough.
    await createPerson(s.sql, { email, name: 'No Where', password });
    const next = `${prefix}/\u2215`;
    const encoded = `${prefix}/%E2%88%95`;
    const agent = new Agent(s.url);
    const page = await agent.get(`${prefix}/signin`);
    const signedIn = await agent.post(`${prefix}/signin`, { email, password, next }, page);
    t.equal(signedIn.status, 303, 'POST with a correct password: signed in');
    t.equal(signedIn.location, encoded, 'to the page asked for, percent-encoded');
    const link = await agent.get(`${prefix}/signin?next=${encodeURIComponent(next)}`);
    t.equal(link.status, 303, 'GET with a signed-in session');
    t.equal(link.location, encoded);
    const spaced = await agent.get(`${prefix}/signin?next=${encodeURIComponent(`${prefix}/a b`)}`);
    t.equal(spaced.location, `${prefix}/a%20b`, 'a space, too');
    const controls = await agent.get(
      `${prefix}/signin?next=${encodeURIComponent(`${prefix}/\r\nSet-Cookie: x=1`)}`,
    );
    t.equal(controls.location, prefix, 'control characters: not an app path, so home');
    t.equal((await request(s.url, 'GET', '/healthz')).status, 200, 'the process lives');
  },
);

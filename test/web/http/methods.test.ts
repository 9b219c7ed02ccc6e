/**
 * Issue 29, item 4: every method that reaches flowplan gets an answer in the envelope: a
 * known path answers 405 METHOD_NOT_ALLOWED with Allow, an unknown one 404. HEAD answers the
 * GET's head with no body: a body after a HEAD's head was read by keep-alive clients as the
 * start of the next answer. A method token no route has is answered the same way, on either
 * transport (README, "Runtime").
 */
import net from 'node:net';
import t from 'tap';
import { frame, rawRequest } from '../../helpers/raw.ts';
import { startTestServer, until } from '../../helpers/server.ts';

t.test(
  "HEAD: the GET's status and length, no body; the next request on the connection is answered cleanly",
  async (t) => {
    const s = await startTestServer(t);
    const port = Number(new URL(s.url).port);
    const get = await s.api('GET', '/healthz');
    const socket = net.connect(port, '127.0.0.1');
    let text = '';
    socket.on('data', (chunk) => (text += chunk.toString('latin1')));
    const closed = new Promise((resolve) => socket.on('close', resolve));
    await new Promise((resolve) => socket.once('connect', resolve));
    // On one keep-alive connection: a HEAD, then, once its head is in, a GET that closes it.
    socket.write('HEAD /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await until(
      async () => text,
      (received) => received.includes('\r\n\r\n'),
      10_000,
    );
    socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
    await closed;
    const firstEnd = text.indexOf('\r\n\r\n');
    const head = text.slice(0, firstEnd);
    t.match(head, /^HTTP\/1\.1 200 /, 'HEAD: 200');
    t.match(
      head,
      new RegExp(`\\r\\ncontent-length: ${Buffer.byteLength(get.text)}(\\r\\n|$)`, 'i'),
      "with the GET's Content-Length",
    );
    const rest = text.slice(firstEnd + 4);
    t.match(
      rest,
      /^HTTP\/1\.1 200 /,
      "no body after the HEAD's head: the next bytes are the GET's answer",
    );
    t.ok(rest.endsWith(get.text), 'and the GET has its body');

    const missing = await rawRequest(port, frame('HEAD', '/nowhere'));
    t.equal(missing.status, 404);
    t.equal(missing.body, '', 'a refused HEAD has no body either');
  },
);

t.test(
  'every method uWebSockets.js routes: 405 with Allow on a known path, 404 on an unknown one, in the envelope',
  async (t) => {
    const s = await startTestServer(t);
    const port = Number(new URL(s.url).port);
    for (const method of ['OPTIONS', 'TRACE', 'CONNECT', 'PUT', 'PATCH', 'DELETE', 'POST']) {
      const known = await rawRequest(port, frame(method, '/healthz'));
      t.equal(known.status, 405, `${method} /healthz`);
      t.equal(known.headers['allow'], 'GET');
      t.strictSame(
        JSON.parse(known.body).error.details,
        { allow: ['GET'] },
        'the envelope names GET, the one method allowed',
      );
      t.equal(JSON.parse(known.body).error.code, 'METHOD_NOT_ALLOWED');
      const unknown = await rawRequest(port, frame(method, '/nowhere'));
      t.equal(unknown.status, 404, `${method} /nowhere`);
      t.equal(JSON.parse(unknown.body).error.code, 'NOT_FOUND');
    }
  },
);

t.test(
  'a method token no route has (QUERY, PROPFIND, FOO, a lower-case get) is answered 405 with Allow, or 404',
  async (t) => {
    const s = await startTestServer(t);
    const port = Number(new URL(s.url).port);
    for (const method of ['QUERY', 'PROPFIND', 'FOO', 'get']) {
      const known = await rawRequest(port, frame(method, '/healthz'), 10_000);
      t.equal(known.status, 405, `${method} /healthz`);
      t.equal(known.headers['allow'], 'GET', 'naming GET');
      t.equal(JSON.parse(known.body).error.code, 'METHOD_NOT_ALLOWED', 'in the envelope');
      const unknown = await rawRequest(port, frame(method, '/nowhere'), 10_000);
      t.equal(unknown.status, 404, `${method} /nowhere`);
      t.equal(JSON.parse(unknown.body).error.code, 'NOT_FOUND');
    }
    t.equal((await s.api('GET', '/healthz')).status, 200, 'and still serving');
  },
);

/**
 * Issue 30, item 1: the process's body allowance (MAX_BUFFERED_BODY_BYTES) was reserved from
 * the declared Content-Length when a head was admitted, and routes without a credential took
 * up to 4 MiB: seventeen connections declaring 4 MiB and sending nothing made every write
 * answer 503. Now bytes are held as they arrive, a form takes at most 64 KiB, a route that
 * takes no body refuses one, and one address may hold a quarter of the allowance.
 */
import net from 'node:net';
import t from 'tap';
import { SCOPES } from '../../src/services/auth/principal.ts';
import { createKey, createWorkspace } from '../../src/services/auth/provision.ts';
import { frame, rawRequest } from '../helpers/raw.ts';
import { startTestServer, until, type TestServer } from '../helpers/server.ts';
import type { Flow, JsonDocument, Refusal } from '../helpers/wire.ts';

const KiB = 1024;
const MiB = 1024 * KiB;

interface Held {
  socket: net.Socket;
  answer: () => string;
}

/** A request that sends its head, then `send` bytes of the `declared` body, and holds. */
function hold(
  s: TestServer,
  path: string,
  headers: Record<string, string>,
  declared: number,
  send = 0,
): Promise<Held> {
  const { port } = new URL(s.url);
  const socket = net.connect(Number(port), '127.0.0.1');
  let answer = '';
  socket.on('data', (chunk) => (answer += chunk.toString('latin1')));
  socket.on('error', () => {});
  const lines = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  return new Promise((resolve) =>
    socket.once('connect', () => {
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${lines}Content-Length: ${declared}\r\n\r\n`,
      );
      if (send > 0) socket.write(Buffer.alloc(send, 0x20));
      resolve({ socket, answer: () => answer });
    }),
  );
}

async function strangerKey(s: TestServer): Promise<string> {
  const { id } = await createWorkspace(s.sql, { name: 'Stranger' });
  return (await createKey(s.sql, { workspaceId: id, role: 'admin', scopes: [...SCOPES] })).key;
}

t.test(
  "40 connections declaring 4 MiB and sending nothing hold nothing: an admin's writes go on answering 201",
  async (t) => {
    const s = await startTestServer(t);
    const stranger = await strangerKey(s);
    t.equal((await s.api('GET', '/v1/me', { token: stranger })).status, 200);
    const held = await Promise.all([
      // No credential: the token endpoint.
      ...Array.from({ length: 20 }, () =>
        hold(
          s,
          '/v1/oauth/token',
          { 'Content-Type': 'application/x-www-form-urlencoded' },
          4 * MiB,
        ),
      ),
      // Another workspace's own key.
      ...Array.from({ length: 20 }, () =>
        hold(
          s,
          '/v1/flows',
          { Authorization: `Bearer ${stranger}`, 'Content-Type': 'application/json' },
          4 * MiB,
        ),
      ),
    ]);
    t.teardown(() => held.forEach((h) => h.socket.destroy()));
    // The forms are refused at once for their size; the others are admitted and wait for bytes.
    for (const h of held.slice(0, 20)) {
      t.match(
        await until(
          async () => h.answer(),
          (a) => a.includes('\r\n\r\n'),
        ),
        /^HTTP\/1\.1 413 /,
        'a 4 MiB form: 413 at once',
      );
    }
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) {
      statuses.push(
        (
          await s.api('POST', '/v1/flows', {
            token: s.adminKey,
            body: { name: `Write ${i}`, tasks: [{ name: 'A' }] },
          })
        ).status,
      );
    }
    t.strictSame(statuses, Array(10).fill(201), 'every write of the admin answered 201');
    t.ok(
      held.slice(20).every((h) => h.answer() === ''),
      'the held bodies are still waiting, unanswered',
    );
  },
);

t.test(
  'a body on a route that takes none is refused 413; a form over 64 KiB is refused 413',
  async (t) => {
    const s = await startTestServer(t);
    const { port } = new URL(s.url);
    const healthz = await rawRequest(
      Number(port),
      frame('GET', '/healthz', [['Content-Type', 'application/json']], '{"a":1}'),
    );
    t.equal(healthz.status, 413, 'GET /healthz with a body');
    const body = JSON.parse(healthz.body);
    t.equal(body.error.code, 'PAYLOAD_TOO_LARGE');
    t.equal(body.error.details.limit, 0);
    t.equal((await s.api('GET', '/healthz')).status, 200, 'without one, 200');
    const flow = (
      await s.api<Flow>('POST', '/v1/flows', {
        token: s.adminKey,
        body: { name: 'Actions', tasks: [{ name: 'A' }] },
      })
    ).body;
    t.equal(
      (await s.api('POST', `/v1/flows/${flow.id}/publish`, { token: s.adminKey, body: {} })).status,
      200,
      "a credential's action ignores a `{}`",
    );
    const padded = await s.api<Refusal>('POST', `/v1/flows/${flow.id}/unpublish`, {
      token: s.adminKey,
      body: { padding: 'a'.repeat(2048) },
    });
    t.equal(padded.status, 413, 'but takes no more than 1 KiB');
    t.equal(padded.body.error.details.limit, 1024);

    const big = `grant_type=client_credentials&client_id=x&padding=${'a'.repeat(100 * KiB)}`;
    const token = await s.api<Refusal>('POST', '/v1/oauth/token', {
      raw: big,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    t.equal(token.status, 413, 'a 100 KiB token request');
    t.equal(token.body.error.code, 'PAYLOAD_TOO_LARGE');
    t.equal(token.body.error.details.limit, 64 * KiB);
    const doc = (await s.api<JsonDocument>('GET', '/v1/openapi.json')).body;
    t.ok(
      doc.paths['/v1/oauth/token'].post.responses['413'],
      'the OpenAPI document lists the 413 of the token endpoint',
    );
    const small = await s.api('POST', '/v1/oauth/token', {
      raw: 'grant_type=client_credentials&client_id=nobody&client_secret=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    t.equal(small.status, 401, 'a token request of ordinary size is judged as before');
  },
);

t.test(
  'one address holds at most a quarter of the allowance; another address is unaffected',
  async (t) => {
    // 8 MiB allowance: 2 MiB per address. Addresses come from X-Forwarded-For through one trusted hop.
    const s = await startTestServer(t, { maxBufferedBodyBytes: 8 * MiB }, { TRUST_PROXY: '1' });
    const stranger = await strangerKey(s);
    const from = (address: string, token: string) => ({
      Authorization: `Bearer ${token}`,
      'Content-Type': 'application/json',
      'X-Forwarded-For': address,
    });
    // Three bodies of 1 MiB, all but their last byte sent: two fit in the address's 2 MiB.
    const held = await Promise.all(
      [0, 1, 2].map(() => hold(s, '/v1/flows', from('203.0.113.9', stranger), MiB, MiB - 1)),
    );
    t.teardown(() => held.forEach((h) => h.socket.destroy()));
    const answers = await until(
      async () => held.map((h) => h.answer()),
      (a) => a.some((answer) => answer.includes('\r\n\r\n')),
      15_000,
    );
    const refused = answers.filter(Boolean);
    t.equal(refused.length, 1, 'one of the three is refused, whichever came last');
    t.match(refused[0], /^HTTP\/1\.1 503 /, 'with 503');
    t.match(refused[0], /retry-after: 1/i);
    t.match(refused[0], /This address is sending too many request bodies/);
    const other = await s.api('POST', '/v1/flows', {
      token: s.adminKey,
      body: { name: 'Elsewhere', tasks: [{ name: 'A' }] },
      headers: { 'x-forwarded-for': '198.51.100.7' },
    });
    t.equal(other.status, 201, 'another address writes as usual');
  },
);

t.test(
  'requests without a credential hold at most an eighth of the allowance, whatever their addresses',
  async (t) => {
    // 8 MiB allowance: 1 MiB for strangers, so sixteen 64-KiB forms fill it.
    const s = await startTestServer(t, { maxBufferedBodyBytes: 8 * MiB }, { TRUST_PROXY: '1' });
    const form = (i: number) => ({
      'Content-Type': 'application/x-www-form-urlencoded',
      'X-Forwarded-For': `203.0.113.${i}`,
    });
    const held = await Promise.all(
      Array.from({ length: 17 }, (_, i) =>
        hold(s, '/v1/oauth/token', form(i), 64 * KiB, 64 * KiB - 1),
      ),
    );
    t.teardown(() => held.forEach((h) => h.socket.destroy()));
    const answers = await until(
      async () => held.map((h) => h.answer()),
      (a) => a.some((answer) => answer.includes('\r\n\r\n')),
      15_000,
    );
    const refused = answers.filter(Boolean);
    t.equal(refused.length, 1, 'the seventeenth stranger is refused');
    t.match(refused[0], /^HTTP\/1\.1 503 /);
    t.match(refused[0], /without a credential/);
    const admin = await s.api('POST', '/v1/flows', {
      token: s.adminKey,
      body: { name: 'Still writing', tasks: [{ name: 'A' }] },
    });
    t.equal(admin.status, 201, "a credential's body still has room");
  },
);

/**
 * Issue 17, item 2: bodies cannot exhaust a process's memory. 30 held, unauthenticated 25 MiB
 * uploads took a process from 137 MB to 870 MB: the edge read every body before checking the
 * credential. Now the head decides first (an unauthenticated request with a body is answered
 * 401 with Connection: close at once, its body never kept), uploads are written to storage in
 * bounded chunks as they arrive, and MAX_BUFFERED_BODY_BYTES caps what one process holds.
 *
 * The server runs in a process of its own, so its resident memory is its alone. The bound
 * stated: holding 30 unauthenticated and 30 authenticated 25 MiB uploads (10 MiB of each sent,
 * the rest held back), the server's RSS grows by less than 200 MB (each admitted upload holds
 * at most a 2 MiB window, 30 × 2 = 60 MiB, besides what Postgres' client buffers).
 */
import net from 'node:net';
import { readFileSync } from 'node:fs';
import t from 'tap';
import { startChildServer } from '../services/jobs/child.ts';
import { newFlow, startFlowServer } from '../helpers/flows.ts';
import { item, until } from '../helpers/server.ts';

const MiB = 1024 * 1024;
const DECLARED = 25 * MiB;
const SENT = 10 * MiB;

function rssOf(pid: number): number {
  return (
    Number(/^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) * 1024
  );
}

interface Held {
  socket: net.Socket;
  /** The answer's head, once one came. */
  answer: () => string;
  sent: () => number;
  closed: () => boolean;
}

/** An upload that sends its head, then up to SENT bytes of a DECLARED body as fast as the server takes them, then holds. */
function holdUpload(url: string, path: string, token: string | null): Promise<Held> {
  const { hostname, port } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  let answer = '';
  let sent = 0;
  let closed = false;
  socket.on('data', (chunk) => (answer += chunk.toString('latin1')));
  socket.on('error', () => {});
  socket.on('close', () => (closed = true));
  const piece = Buffer.alloc(256 * 1024, 0x61);
  return new Promise((resolve) => {
    socket.once('connect', () => {
      socket.write(
        `POST ${path} HTTP/1.1\r\nHost: ${hostname}\r\n${token ? `Authorization: Bearer ${token}\r\n` : ''}Content-Type: application/octet-stream\r\nContent-Length: ${DECLARED}\r\n\r\n`,
      );
      const pump = () => {
        // Only what the socket takes: the test's own memory stays flat whatever the server does.
        while (sent < SENT && !closed) {
          sent += piece.length;
          if (!socket.write(piece)) return void socket.once('drain', pump);
        }
      };
      pump();
      resolve({ socket, answer: () => answer, sent: () => sent, closed: () => closed });
    });
  });
}

t.test(
  '60 held 25 MiB uploads: unauthenticated ones refused at once, the rest bounded; /healthz answers throughout',
  async (t) => {
    const s = await startFlowServer(t);
    const flow = await newFlow(t, s, { name: 'Uploads', tasks: [{ name: 'A' }] });
    const path = `/v1/flows/${flow.id}/tasks/${item(flow.tasks).id}/attachments?name=big.bin`;
    const child = await startChildServer(t, s.databaseUrl);
    const pid = child.process.pid!;
    await fetch(`${child.url}/healthz`);
    const before = rssOf(pid);

    const strangers = await Promise.all(
      Array.from({ length: 30 }, () => holdUpload(child.url, path, null)),
    );
    const members = await Promise.all(
      Array.from({ length: 30 }, () => holdUpload(child.url, path, s.adminKey)),
    );
    t.teardown(() => [...strangers, ...members].forEach((h) => h.socket.destroy()));

    for (const held of strangers) {
      const head = (
        await until(
          async () => held.answer(),
          (answer) => answer.includes('\r\n\r\n'),
        )
      ).split('\r\n\r\n')[0]!;
      t.match(head, /^HTTP\/1\.1 401 /, 'unauthenticated: 401 at once, before its body was sent');
      t.match(head, /\r\nConnection: close/i, 'with Connection: close');
    }
    t.ok((await fetch(`${child.url}/healthz`)).ok, '/healthz answers while 60 uploads are held');
    // Every admitted upload has sent what it will, or been paused by the server at its window.
    await until(
      async () => members.map((m) => m.sent()),
      (sent) => sent.every((n) => n >= 2 * MiB),
    );
    const grown = rssOf(pid) - before;
    t.ok(
      grown < 200 * MiB,
      `the server's RSS grew by ${(grown / MiB).toFixed(0)} MB (bound 200 MB), from ${(before / MiB).toFixed(0)} MB`,
    );
    const answered = members
      .filter((m) => m.answer().length > 0)
      .map((m) => m.answer().split('\r\n')[0]);
    t.ok(
      answered.every((line) => /^HTTP\/1\.1 503 /.test(line!)),
      `an upload refused for room is 503 (${answered.length} of 30)`,
    );
    t.ok((await fetch(`${child.url}/healthz`)).ok, '/healthz still answers');
  },
);

t.test(
  'MAX_BUFFERED_BODY_BYTES: past it, 503 with Retry-After; a finished upload gives its room back',
  async (t) => {
    const s = await startFlowServer(t);
    const flow = await newFlow(t, s, { name: 'Room', tasks: [{ name: 'A' }] });
    const path = `/v1/flows/${flow.id}/tasks/${item(flow.tasks).id}/attachments?name=held.bin`;
    // Room for two uploads' windows (2 MiB each) from one address (a quarter of the allowance) and nothing more.
    const child = await startChildServer(t, s.databaseUrl, { MAX_BUFFERED_BODY_BYTES: '16MiB' });
    const held = await Promise.all([
      holdUpload(child.url, path, s.adminKey),
      holdUpload(child.url, path, s.adminKey),
    ]);
    t.teardown(() => held.forEach((h) => h.socket.destroy()));
    // Both admitted and streaming: each has written chunks.
    await until(
      async () =>
        (
          await s.sql<{ n: number }[]>`select count(distinct blob_id)::int as n from blob_chunks`
        )[0]!.n,
      (n) => n === 2,
    );
    const third = await fetch(`${child.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.adminKey}`, 'content-type': 'text/plain' },
      body: 'x'.repeat(1000),
    });
    t.equal(third.status, 503, 'no room for a third body');
    t.equal(third.headers.get('retry-after'), '1');
    t.equal(
      ((await third.json()) as { error: { code: string } }).error.code,
      'SERVICE_UNAVAILABLE',
    );
    held[0]!.socket.destroy();
    const after = await until(
      () =>
        fetch(`${child.url}${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${s.adminKey}`, 'content-type': 'text/plain' },
          body: 'small',
        }),
      (res) => res.status !== 503,
    );
    t.equal(after.status, 201, 'a client gone gives its room back');
  },
);

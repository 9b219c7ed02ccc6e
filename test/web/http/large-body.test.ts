/**
 * A large body (a big flow's JSON) reaches readers whole however slowly they read: clients
 * that stop reading mid-body while another reads the same version at full speed each get
 * every byte, and the connection then answers its next request. (Requests pipelined behind a
 * body the reader is not taking: uWebSockets.js resets that connection, 2026-11-27; browsers
 * and fetch do not pipeline.)
 */
import net from 'node:net';
import t from 'tap';
import { startTestServer } from '../../helpers/server.ts';
import type { Flow } from '../../helpers/wire.ts';

/**
 * Sends `first` on a keep-alive connection and reads nothing until `resume` resolves; once its
 * answer is in, sends `then` on the same connection. The bytes of both answers.
 */
function pausedReader(
  port: number,
  first: string,
  then: string,
  resume: Promise<void>,
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let sentThen = false;
    socket.pause();
    socket.on('data', (chunk) => {
      chunks.push(chunk);
      const answered = bodies(Buffer.concat(chunks)).length;
      if (answered === 1 && !sentThen) {
        sentThen = true;
        socket.write(then);
      }
      if (answered >= 2) {
        socket.destroy();
        resolve(Buffer.concat(chunks));
      }
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(Buffer.concat(chunks)));
    socket.write(first);
    void resume.then(() => socket.resume());
  });
}

/** The bodies of the complete Content-Length answers at the start of `bytes`. */
function bodies(bytes: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let at = 0;
  while (at < bytes.length) {
    const headEnd = bytes.indexOf('\r\n\r\n', at);
    if (headEnd < 0) break;
    const head = bytes.subarray(at, headEnd).toString('latin1');
    const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
    if (bytes.length < headEnd + 4 + length) break;
    out.push(bytes.subarray(headEnd + 4, headEnd + 4 + length));
    at = headEnd + 4 + length;
  }
  return out;
}

t.test('a large body reaches slow and fast readers whole', async (t) => {
  const s = await startTestServer(t, { rateLimitPerMinute: 1_000_000, rateLimitBurst: 1_000_000 });
  const tasks = Array.from({ length: 4000 }, (_, i) => ({
    name: `Task ${i} with a longer name to make the body larger`,
    estimateHours: 1 + (i % 7),
    ...(i > 0 ? { after: [i - 1] } : {}),
  }));
  const flow = (
    await s.api<Flow>('POST', '/v1/flows', { token: s.adminKey, body: { name: 'Big', tasks } })
  ).body;
  const path = `/v1/flows/${flow.id}`;
  const whole = Buffer.from(
    await (
      await fetch(s.url + path, { headers: { authorization: `Bearer ${s.adminKey}` } })
    ).arrayBuffer(),
  );
  t.ok(whole.length > 1_000_000, `a body of ${whole.length} bytes`);

  const port = Number(new URL(s.url).port);
  const request = `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${s.adminKey}\r\n\r\n`;
  const small = `GET /v1/me HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${s.adminKey}\r\n\r\n`;
  let letGo!: () => void;
  const resume = new Promise<void>((resolve) => (letGo = resolve));
  // Three readers that read nothing yet: each server write stops at a full socket.
  const slow = [0, 1, 2].map(() => pausedReader(port, request, small, resume));
  // Meanwhile a reader at full speed gets the same version whole.
  const fast = Buffer.from(
    await (
      await fetch(s.url + path, { headers: { authorization: `Bearer ${s.adminKey}` } })
    ).arrayBuffer(),
  );
  t.ok(fast.equals(whole), 'the fast reader got every byte');
  letGo();
  for (const [i, reading] of slow.entries()) {
    const [body, next] = bodies(await reading);
    t.ok(body?.equals(whole), `slow reader ${i}: every byte, in order`);
    t.match(
      next?.toString('utf8') ?? '',
      /"workspaceId"/,
      `slow reader ${i}: the next answer on the connection`,
    );
  }
});

/**
 * Graceful shutdown through the real entry point (`SERVER_MAIN`) as a child process on a fresh
 * database, SIGTERM while requests are in flight.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import http from 'node:http';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import t, { type Test } from 'tap';
import { freePort } from '../../../src/storage/embedded.ts';
import { createTestDatabase } from '../../helpers/database.ts';
import { SERVER_MAIN } from '../../helpers/process.ts';
import { startTestServer, until as waitFor } from '../../helpers/server.ts';

interface Server {
  child: ChildProcessWithoutNullStreams;
  port: number;
  base: string;
  /** Everything written to stdout so far. */
  stdout: () => string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

async function start(databaseUrl: string): Promise<Server> {
  const port = await freePort();
  const child = spawn(process.execPath, SERVER_MAIN, {
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      METRICS_PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
    },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  let gone = false;
  void exited.then(() => (gone = true));
  const base = `http://127.0.0.1:${port}`;
  const until = Date.now() + 60_000;
  for (;;) {
    if (gone)
      throw new Error(`server exited before listening\nstdout:\n${stdout}\nstderr:\n${stderr}`);
    if (Date.now() > until) {
      child.kill('SIGKILL');
      throw new Error(`server not listening after 60 s\nstdout:\n${stdout}\nstderr:\n${stderr}`);
    }
    const ok = await fetch(`${base}/healthz`).then(
      (r) => r.ok,
      () => false,
    );
    // The banner is written right after listening: wait for it too.
    if (ok && stdout.includes('flowplan is running at')) break;
    await sleep(50);
  }
  return { child, port, base, stdout: () => stdout, stderr: () => stderr, exited };
}

/** Waits for exit, or kills the child and fails after `ms`. */
async function exitWithin(
  t: Test,
  server: Server,
  ms: number,
): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  const cancel = new AbortController();
  const timeout = sleep(ms, null, { signal: cancel.signal }).catch(() => null);
  const result = await Promise.race([server.exited, timeout]);
  cancel.abort();
  if (!result) {
    server.child.kill('SIGKILL');
    t.fail(
      `did not exit within ${ms} ms\nstdout:\n${server.stdout()}\nstderr:\n${server.stderr()}`,
    );
    return server.exited;
  }
  return result;
}

type Outcome =
  | { kind: 'response'; status: number; body: string; complete: boolean }
  | { kind: 'refused' }
  | { kind: 'error'; code: string; message: string };

/**
 * One GET on a connection of its own (no keep-alive pool), so that "accepted" is exact:
 * `connected` resolves once the TCP connection is established and the request written.
 */
function get(
  port: number,
  pathname: string,
  token: string,
): { connected: Promise<boolean>; outcome: Promise<Outcome> } {
  let markConnected: (value: boolean) => void = () => {};
  const connected = new Promise<boolean>((resolve) => (markConnected = resolve));
  const outcome = new Promise<Outcome>((resolve) => {
    const request = http.request(
      {
        host: '127.0.0.1',
        port,
        path: pathname,
        method: 'GET',
        agent: false,
        headers: { authorization: `Bearer ${token}` },
      },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () =>
          resolve({
            kind: 'response',
            status: response.statusCode ?? 0,
            body,
            complete: response.complete,
          }),
        );
        response.on('error', (error: NodeJS.ErrnoException) =>
          resolve({ kind: 'error', code: error.code ?? 'ERROR', message: error.message }),
        );
      },
    );
    request.on('socket', (socket) => socket.once('connect', () => markConnected(true)));
    request.on('error', (error: NodeJS.ErrnoException) => {
      markConnected(false);
      resolve(
        error.code === 'ECONNREFUSED'
          ? { kind: 'refused' }
          : { kind: 'error', code: error.code ?? 'ERROR', message: error.message },
      );
    });
    request.end();
  });
  return { connected, outcome };
}

/**
 * A flow created with a body that arrives in two parts: the request is accepted and in flight
 * from the first part on, and cannot be answered before `finish()` sends the rest.
 */
async function slowPost(
  port: number,
  token: string,
): Promise<{ finish: () => void; outcome: Promise<Outcome> }> {
  const socket = net.connect(port, '127.0.0.1');
  await new Promise<void>(
    (resolve, reject) => (socket.once('connect', resolve), socket.once('error', reject)),
  );
  const outcome = new Promise<Outcome>((resolve) => {
    let raw = Buffer.alloc(0);
    const settle = (error?: NodeJS.ErrnoException) => {
      const text = raw.toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      if (split < 0) {
        resolve({
          kind: 'error',
          code: error?.code ?? 'EOF',
          message: error?.message ?? `closed after ${raw.length} bytes`,
        });
        return;
      }
      const head = text.slice(0, split);
      const body = text.slice(split + 4);
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? NaN);
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
      resolve({ kind: 'response', status, body, complete: Buffer.byteLength(body) === length });
    };
    socket.on('data', (chunk: Buffer) => {
      raw = Buffer.concat([raw, chunk]);
      const text = raw.toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      const length = Number(
        /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, Math.max(split, 0)))?.[1] ?? NaN,
      );
      if (split >= 0 && Buffer.byteLength(text.slice(split + 4)) >= length) {
        socket.destroy();
        settle();
      }
    });
    socket.once('error', (error: NodeJS.ErrnoException) => settle(error));
    socket.once('close', () => settle());
  });
  socket.write(
    `POST /v1/flows HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 15\r\n\r\n{"name":"Sl`,
  );
  return { finish: () => void socket.write('ow"}'), outcome };
}

function refusesConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => (socket.destroy(), resolve(false)));
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

function logLines(stdout: string): Array<Record<string, unknown>> {
  return stdout.split('\n').flatMap((line) => {
    if (!line.startsWith('{')) return [];
    try {
      return [JSON.parse(line) as Record<string, unknown>];
    } catch {
      return [];
    }
  });
}

t.test(
  'SIGTERM drains in-flight requests and exits 0; a second start prints no new key',
  async (t) => {
    const databaseUrl = await createTestDatabase(t);

    // First start: banner with the base URL and the Demo admin key, once.
    const first = await start(databaseUrl);
    t.teardown(() => void first.child.kill('SIGKILL'));
    const banner = first.stdout();
    t.ok(banner.includes(`flowplan is running at ${first.base}`), 'prints the base URL');
    const key = /\b(fpk_[A-Za-z0-9_-]+)/.exec(banner)?.[1];
    t.ok(key, 'prints an fpk_ admin key');
    t.ok(banner.includes(`Web app: ${first.base}/app/signin`), 'names the web app');
    t.match(
      banner,
      /Sign in to the web app as demo@flowplan\.localhost, .*\n\n {2}\S+\n/,
      'with a demo person and their password',
    );
    t.ok(
      banner.includes(`export BASE=${first.base} KEY=${key}`),
      'and a line to paste into a shell',
    );
    if (!key) return;
    const me = await fetch(`${first.base}/v1/me`, { headers: { authorization: `Bearer ${key}` } });
    t.equal(me.status, 200, 'GET /v1/me with that key answers 200');
    t.equal(((await me.json()) as { workspaceName?: string }).workspaceName, 'Demo');

    // In flight at SIGTERM: 3 requests whose bodies are only half sent (they cannot finish
    // before the rest arrives), and a burst of 50 on fresh connections.
    const slow = await Promise.all([1, 2, 3].map(() => slowPost(first.port, key)));
    const burst = Array.from({ length: 50 }, () => get(first.port, '/v1/me', key));
    await Promise.all(burst.map((r) => r.connected));
    const signalled = Date.now();
    first.child.kill('SIGTERM');
    const burstOutcomes = await Promise.all(burst.map((r) => r.outcome));

    // Draining: the listener is closed, the process waits for the half-sent requests.
    const until = Date.now() + 60_000;
    while (!first.stdout().includes('shutting down') && Date.now() < until) await sleep(20);
    t.match(first.stdout(), /shutting down/, 'logs that it is shutting down');
    // The listener closes once connections made before the signal have been accepted: moments.
    t.ok(
      await waitFor(
        () => refusesConnections(first.port),
        (refused) => refused,
        10_000,
      ),
      'new connections are refused while draining',
    );
    // Not waiting for a condition: a chance for a process that does not wait for them to exit.
    await sleep(300);
    t.equal(first.child.exitCode, null, 'still running while requests are in flight');
    for (const request of slow) request.finish();
    const slowOutcomes = await Promise.all(slow.map((r) => r.outcome));
    const exit = await exitWithin(t, first, 60_000);

    const outcomes = [...slowOutcomes, ...burstOutcomes];
    const responses = outcomes.filter(
      (o): o is Extract<Outcome, { kind: 'response' }> => o.kind === 'response',
    );
    const refused = outcomes.filter((o) => o.kind === 'refused').length;
    const failed = outcomes.filter(
      (o): o is Extract<Outcome, { kind: 'error' }> => o.kind === 'error',
    );
    t.comment(
      `of ${outcomes.length} in flight at SIGTERM: ${responses.length} answered, ${refused} refused, ${failed.length} failed; exit ${Date.now() - signalled} ms after SIGTERM`,
    );
    t.same(failed, [], 'no accepted request was reset or cut off');
    t.same(
      slowOutcomes.map((o) => o.kind === 'response' && o.complete && o.status),
      [201, 201, 201],
      'the half-sent requests were answered 201 after SIGTERM',
    );
    const burstResponses = burstOutcomes.filter(
      (o): o is Extract<Outcome, { kind: 'response' }> => o.kind === 'response',
    );
    const complete200 = burstResponses.filter(
      (r) =>
        r.status === 200 &&
        r.complete &&
        (JSON.parse(r.body) as { workspaceName?: string }).workspaceName === 'Demo',
    );
    t.equal(
      complete200.length,
      burstResponses.length,
      'every answered GET is a complete 200 with the Context body',
    );

    t.same(
      { code: exit.code, signal: exit.signal },
      { code: 0, signal: null },
      'exits with code 0 once they are answered',
    );
    t.ok(await refusesConnections(first.port), 'new connections are refused after exit');

    const log = logLines(first.stdout());
    t.equal(
      log.filter((line) => line.transport === 'uws' || line.transport === 'node').length,
      1,
      'one log line names the HTTP transport',
    );
    t.ok(
      log.some(
        (line) =>
          typeof line.msg === 'string' &&
          line.msg.includes('shutting down') &&
          line.signal === 'SIGTERM',
      ),
      "the log says 'shutting down' on SIGTERM",
    );
    t.notOk(/"level":(50|60)/.test(first.stdout()), 'no error or fatal log lines');

    // Second start on the same database: no new workspace, no key printed.
    const second = await start(databaseUrl);
    t.teardown(() => void second.child.kill('SIGKILL'));
    t.ok(
      second.stdout().includes(`flowplan is running at ${second.base}`),
      'second start prints the base URL',
    );
    t.notMatch(second.stdout(), /fpk_/, 'second start prints no key');
    t.notMatch(second.stdout(), /password/, 'nor a password');
    t.ok(second.stdout().includes(`Web app: ${second.base}/app/signin`), 'but the web app, again');
    const again = await fetch(`${second.base}/v1/me`, {
      headers: { authorization: `Bearer ${key}` },
    });
    t.equal(again.status, 200, 'the first key still works');
    await again.arrayBuffer();
    second.child.kill('SIGTERM');
    const secondExit = await exitWithin(t, second, 60_000);
    t.same(
      { code: secondExit.code, signal: secondExit.signal },
      { code: 0, signal: null },
      'second start exits with code 0 on SIGTERM',
    );
  },
);

t.test(
  'close() ends the idle keep-alive connections once drained, so an embedding process can exit',
  async (t) => {
    const server = await startTestServer(t);
    const { port } = new URL(server.url);
    const socket = net.connect(Number(port), '127.0.0.1');
    const closed = new Promise<number>((resolve) =>
      socket.once('close', () => resolve(Date.now())),
    );
    socket.on('error', () => {});
    let received = '';
    const answered = new Promise<void>((resolve) =>
      socket.on('data', (chunk: Buffer) => {
        received += chunk.toString('utf8');
        if (/\r\n\r\n[\s\S]*\}$/.test(received)) resolve();
      }),
    );
    socket.write(
      `GET /v1/me HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${server.adminKey}\r\n\r\n`,
    );
    await answered;
    t.match(received, /^HTTP\/1\.1 200 /, 'answered, and the connection kept alive');
    t.notMatch(received, /\r\nconnection: close/i);
    await server.app.close();
    const cancel = new AbortController();
    const closedAt = await Promise.race([
      closed,
      sleep(5_000, null, { signal: cancel.signal }).catch(() => null),
    ]);
    cancel.abort();
    // Left open, uWS would end it only at its 10 s idle timeout.
    t.ok(
      closedAt,
      'the idle connection is closed by close(), not left to the client or an idle timeout',
    );
    socket.destroy();
  },
);

/**
 * A real server on loopback over a fresh database of its own (test/helpers/database.ts).
 */
import { spawn } from 'node:child_process';
import { Socket } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import tap, { type Test } from 'tap';
import { startApp, type RunningApp, type StartOptions } from '../../src/compose.ts';
import { loadConfig, type Overrides } from '../../src/platform/config.ts';
import { workerModule } from '../../src/platform/worker-pool.ts';
import type { Sql } from '../../src/storage/db.ts';
import { createTestDatabase } from './database.ts';
import type { ErrorBody } from './wire.ts';

/**
 * A test file's process ends once its tests have, even when a client library leaves a socket
 * half-open after every pool was ended: twice (CI and locally) a file whose tests had all passed
 * then sat until tap's 10-minute timeout on one socket to Postgres holding 9 unread bytes (the
 * server's password request) after its app and databases were closed. The service itself
 * exits on SIGTERM after `close()`, so only test processes wait on such a socket. What was
 * left is printed, so the leak stays visible.
 */
tap.teardown(() => {
  setTimeout(() => {
    const sockets = (process as unknown as { _getActiveHandles(): unknown[] })
      ._getActiveHandles()
      .filter(
        (h): h is Socket =>
          h instanceof Socket &&
          h !== process.stdout &&
          h !== process.stderr &&
          h !== process.stdin,
      )
      .map(
        (s) =>
          `${s.localPort ?? '-'}→${s.remotePort ?? '-'} ${s.readyState} read=${s.bytesRead} written=${s.bytesWritten} [${s.eventNames().join(',')}]`,
      );
    process.stderr.write(
      `# ${path.basename(process.argv[1] ?? '')}: still running 15 s after its tests ended; exiting. Open sockets: ${sockets.join('; ') || 'none'}\n`,
    );
    process.exit();
  }, 15_000).unref();
});

export interface TestServer {
  app: RunningApp;
  url: string;
  sql: Sql;
  databaseUrl: string;
  /** The Demo workspace's admin key (every scope). */
  adminKey: string;
  workspaceId: string;
  /** `T`: what the caller reads the body as, the operation's schema type (helpers/wire.ts: `Static<typeof FlowSchema>`). */
  api: <T = unknown>(
    method: string,
    path: string,
    options?: RequestOptions,
  ) => Promise<ApiResponse<T>>;
  /** The Prometheus text, from the metrics listener (never the API port). */
  metrics: () => Promise<string>;
  /** What the server logged at level error or above (the last 100 lines): a 500's cause, for a report. */
  logged: readonly string[];
}

export interface RequestOptions {
  token?: string;
  body?: unknown;
  /** Sent as-is (no JSON encoding). */
  raw?: string | Buffer;
  headers?: Record<string, string>;
}

/**
 * An answer; `body` is its JSON parsed (undefined when there is none), typed as the caller
 * names it (the operation's schema type) and not checked: the sweeps check bodies against the
 * document.
 */
export interface ApiResponse<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export async function startTestServer(
  t: Test,
  overrides: Overrides = {},
  env: Record<string, string> = {},
  /**
   * Test hooks of startApp; the recompute pool starts cold, and no demo person is made (a
   * password hash at the floor), unless a test asks otherwise.
   */
  hooks: Pick<
    StartOptions,
    'failRenders' | 'renderDelayMs' | 'recomputeWorker' | 'coldRecomputePool' | 'skipDemoPerson'
  > = {},
): Promise<TestServer> {
  const databaseUrl = await createTestDatabase(t);
  // Metrics on a free port even when a test fixes the API port: 9464 is one per machine.
  // HTTP_TRANSPORT from the run's environment: `npm run test:node24` holds every server to uWS.
  const transport = process.env.HTTP_TRANSPORT;
  const config = loadConfig(
    {
      LOG_LEVEL: 'silent',
      METRICS_PORT: '0',
      ...(transport ? { HTTP_TRANSPORT: transport } : {}),
      ...env,
    },
    { port: 0, databaseUrl, ...overrides },
  );
  const logged: string[] = [];
  // The app logs through this logger, not one at LOG_LEVEL: nothing reaches the test's stdout,
  // and the errors are kept for its reports.
  const log = pino(
    { level: 'error' },
    {
      write: (line: string) => {
        if (logged.push(line.trimEnd()) > 100) logged.shift();
      },
    },
  );
  const app = await startApp(config, {
    coldRecomputePool: true,
    skipDemoPerson: true,
    log,
    ...hooks,
  });
  t.teardown(() => app.close());
  const url = app.url;
  return {
    app,
    url,
    databaseUrl,
    sql: app.services.sql,
    adminKey: app.demo!.key,
    workspaceId: app.demo!.workspaceId,
    api: (method, path, options) => request(url, method, path, options),
    metrics: async () => (await fetch(app.metricsUrl)).text(),
    logged,
  };
}

export async function request<T = unknown>(
  base: string,
  method: string,
  path: string,
  options: RequestOptions = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  let body: string | Buffer | undefined = options.raw;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(base + path, { method, headers, body });
  const text = await response.text();
  let parsed: unknown = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, body: parsed as T, text };
}

/** Item `i` of a list a test knows holds it (a flow's tasks, a page's items); throws when it does not. */
export function item<T>(items: readonly T[], i = 0): T {
  const found = items[i];
  if (found === undefined) throw new Error(`no item ${i} of ${items.length}`);
  return found;
}

/** Reads until `done` holds (what a client polling for an outcome does); throws with the last value after `timeoutMs`. */
export async function until<T, U extends T>(
  read: () => Promise<T>,
  done: (value: T) => value is U,
  timeoutMs?: number,
): Promise<U>;
export async function until<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs?: number,
): Promise<T>;
export async function until<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 60_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`not reached in time: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Where this run's compiled module `relative` (to test/helpers/) is, or null when the tests run
 * the TypeScript through tsx: `npm test` runs them as JavaScript compiled under
 * .flowplan/test-build (test/run.ts), where the sources' compiled forms lie beside them.
 */
export function compiledModule(relative: string): string | null {
  const url = workerModule(relative, import.meta.url);
  return url.pathname.endsWith('.js') ? fileURLToPath(url) : null;
}

/**
 * The operator command as `cli` runs it: bin/flowplan.js, which runs the sources through tsx in
 * this checkout; in a compiled run, the compiled CLI, as bin/flowplan.js runs dist's in a
 * production tree (through tsx's loader a command that opens the database spent about 0.35 s
 * more of CPU). test/cli/database.test.ts runs bin/flowplan.js.
 */
const CLI_MAIN = compiledModule('../../src/cli/main.ts') ?? 'bin/flowplan.js';

/** Runs the operator CLI against a database, as an operator would; its stdin holds `stdin` (or nothing) and is then closed. */
export function cli(
  databaseUrl: string,
  args: string[],
  stdin = '',
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI_MAIN, ...args], {
      env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' },
    });
    child.stdin.end(stdin);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('exit', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}

/** Asserts the spec's error envelope with this status and code. */
export function assertError(
  t: Test,
  response: ApiResponse,
  status: number,
  code: string,
  message?: string,
): void {
  // Whatever the caller read the body as, a refusal's is the envelope (or not JSON at all).
  const body = response.body as Partial<ErrorBody> | undefined;
  t.equal(response.status, status, message ?? `status ${status} ${code}`);
  t.equal(body?.error?.code, code, `code ${code}`);
  t.type(body?.error?.message, 'string', 'error has a message');
}

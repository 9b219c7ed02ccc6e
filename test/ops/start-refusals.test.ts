/**
 * A start that cannot be a server on its own refuses in one line and leaves nothing running:
 * a second server on a port in use (uWS would otherwise share it through SO_REUSEPORT, the two
 * answering the same key 401 or 200 at random), on a metrics port in use, or on a data directory
 * another server uses; and a start that fails after starting its embedded Postgres stops it.
 * Real processes: the server's entry (`SERVER_MAIN`).
 */
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { freePort } from '../../src/storage/embedded.ts';
import { createTestDatabase } from '../helpers/database.ts';
import {
  bannerKey,
  operatorEnv,
  SERVER_MAIN,
  startServer,
  type Finished,
} from '../helpers/process.ts';
import { request } from '../helpers/server.ts';

function serverEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const { DATABASE_URL: _shared, ...rest } = operatorEnv({
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    ...env,
  });
  return env.DATABASE_URL ? { ...rest, DATABASE_URL: env.DATABASE_URL } : rest;
}

/** A start expected to refuse: it runs to its end; one that serves anyway is stopped (and fails the test) instead of running for ever. */
function refused(env: NodeJS.ProcessEnv): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, SERVER_MAIN, { env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      if (stdout.includes('flowplan is running at')) child.kill('SIGKILL');
    });
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('exit', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** Processes whose command line names this directory (the embedded Postgres runs with `-D <dir>/postgres`). */
function processesIn(dir: string): string[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((pid) => {
      try {
        const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
        return args.includes(dir) ? [`${pid}: ${args}`] : [];
      } catch {
        return []; // gone meanwhile
      }
    });
}

t.test(
  'a second server on a port in use refuses, naming PORT (or METRICS_PORT); the first still answers',
  async (t) => {
    const [first, second] = await Promise.all([
      createTestDatabase(t, { empty: true }),
      createTestDatabase(t, { empty: true }),
    ]);
    const [port, metricsPort] = [await freePort(), await freePort()];
    const a = await startServer(t, process.execPath, SERVER_MAIN, {
      port,
      env: serverEnv({
        DATABASE_URL: first,
        PORT: String(port),
        METRICS_PORT: String(metricsPort),
      }),
    });
    const key = bannerKey(a.stdout())!;

    const sameApi = await refused(
      serverEnv({ DATABASE_URL: second, PORT: String(port), METRICS_PORT: '0' }),
    );
    t.equal(sameApi.code, 1, 'exits 1');
    t.equal(
      sameApi.stderr,
      `flowplan: cannot listen on 127.0.0.1:${port}: another process listens there, or HOST is not an address of this machine; set PORT to a free port (0: any free one)\n`,
      'one line naming PORT',
    );
    t.notMatch(sameApi.stdout, /running at/, 'no banner');

    const sameMetrics = await refused(
      serverEnv({ DATABASE_URL: second, PORT: '0', METRICS_PORT: String(metricsPort) }),
    );
    t.equal(sameMetrics.code, 1, 'exits 1');
    t.match(
      sameMetrics.stderr,
      new RegExp(
        `^flowplan: cannot serve metrics on 127\\.0\\.0\\.1:${metricsPort} \\(EADDRINUSE\\): set METRICS_PORT to a free port, or 0 for any\\n$`,
      ),
      'one line naming METRICS_PORT',
    );

    for (let i = 0; i < 20; i++) {
      t.equal(
        (await request(a.base, 'GET', '/v1/me', { token: key })).status,
        200,
        `the first server answers its own key (${i})`,
      );
    }
    t.match(
      await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text(),
      /flowplan_/,
      'and its metrics',
    );
  },
);

t.test(
  'embedded Postgres: one server per data directory, and a failed start stops the Postgres it started',
  async (t) => {
    // Reachable by the `postgres` account when the tests run as root.
    const dataDir = mkdtempSync(path.join(tmpdir(), 'flowplan-refusals-'));
    chmodSync(dataDir, 0o755);
    const cluster = path.join(dataDir, 'postgres');
    t.teardown(() => {
      // A Postgres left behind by a failing run is this test's to stop.
      const pidFile = path.join(cluster, 'postmaster.pid');
      if (existsSync(pidFile)) {
        try {
          process.kill(Number.parseInt(readFileSync(pidFile, 'utf8'), 10), 'SIGQUIT');
        } catch {
          /* already gone */
        }
      }
      rmSync(dataDir, { recursive: true, force: true });
    });
    const port = await freePort();
    const a = await startServer(t, process.execPath, SERVER_MAIN, {
      port,
      env: serverEnv({ FLOWPLAN_DATA_DIR: dataDir, PORT: String(port), METRICS_PORT: '0' }),
    });

    const second = await refused(
      serverEnv({ FLOWPLAN_DATA_DIR: dataDir, PORT: '0', METRICS_PORT: '0' }),
    );
    t.equal(second.code, 1, 'a second server on the same data directory exits 1');
    t.equal(second.stderr.split('\n').length, 2, `one line: ${second.stderr}`);
    t.match(
      second.stderr,
      `flowplan: the data directory ${dataDir} is in use by another flowplan server (pid ${a.child.pid})`,
      'naming the directory and the pid',
    );
    t.equal(
      (await request(a.base, 'GET', '/healthz')).status,
      200,
      'the first server still answers',
    );
    t.equal((await a.stop()).code, 0, 'and stops cleanly');
    t.same(processesIn(dataDir), [], 'its Postgres stopped with it');

    // The port is taken by another program: this start opens the embedded Postgres, then cannot listen.
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(port, '127.0.0.1', resolve));
    t.teardown(() => holder.close());
    const failed = await refused(
      serverEnv({ FLOWPLAN_DATA_DIR: dataDir, PORT: String(port), METRICS_PORT: '0' }),
    );
    t.equal(failed.code, 1, 'exits 1');
    t.match(
      failed.stderr,
      /^flowplan: cannot listen on 127\.0\.0\.1:\d+: [^\n]*set PORT[^\n]*\n$/,
      'says why in one line',
    );
    t.same(processesIn(dataDir), [], 'no Postgres left running for its data directory');
    t.notOk(existsSync(path.join(cluster, 'postmaster.pid')), 'the cluster was shut down');
    t.notOk(existsSync(path.join(dataDir, 'server.pid')), 'and the data directory released');
  },
);

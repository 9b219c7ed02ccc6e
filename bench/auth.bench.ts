/**
 * `npm run bench:auth`: the token endpoint and person tokens through the real app.
 *  - `client_credentials` grants per second;
 *  - `refresh_token` grants per second (chains of rotations: each refresh presents the token
 *    the previous one returned, as a client must);
 *  - `GET /v1/me` with person tokens (re-checked against Postgres on every request) against
 *    API keys (served from the cache);
 *  - `GET /v1/me` p99 with API keys, alone and while 20 sign-ins per second are attempted:
 *    scrypt runs on libuv's threadpool, so hashing must not stall the event loop; sign-ins
 *    beyond what the cores can hash are shed with 503 (counted, not failures).
 * Prints one JSON line on stdout. Load generators run in worker threads.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import pino from 'pino';
import { startApp } from '../src/compose.ts';
import { SCOPES } from '../src/services/auth/principal.ts';
import { createClient, createKey, createUser } from '../src/services/auth/provision.ts';
import { newId } from '../src/platform/ids.ts';
import { newSecret, sha256 } from '../src/services/auth/secrets.ts';
import { loadConfig } from '../src/platform/config.ts';
import { insertFamily, insertRefreshToken } from '../src/storage/people.store.ts';
import { personToken } from '../test/helpers/people.ts';
import { benchDatabase, machine } from './support.ts';

const SECONDS = 8;
const CONNECTIONS = 32;

const require = createRequire(import.meta.url);

interface Load {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  shed?: number;
}

/** autocannon in a worker: GET with one bearer per connection, or POST of fixed form bodies. */
function cannon(options: {
  url: string;
  seconds: number;
  bearers?: string[];
  forms?: string[];
}): Promise<Load> {
  const code = `
    const { parentPort, workerData: w } = require('node:worker_threads');
    const autocannon = require(w.autocannon);
    let next = 0;
    const opts = { url: w.url, connections: w.connections, duration: w.seconds,
      setupClient: (client) => {
        const i = next++;
        if (w.bearers) client.setHeaders({ authorization: 'Bearer ' + w.bearers[i % w.bearers.length] });
        if (w.forms) {
          client.setHeaders({ 'content-type': 'application/x-www-form-urlencoded' });
          client.setBody(w.forms[i % w.forms.length]);
        }
      },
      method: w.forms ? 'POST' : 'GET' };
    autocannon(opts, (error, raw) => {
      if (error) return parentPort.postMessage({ error: String(error) });
      const r = autocannon.aggregateResult([raw], opts);
      parentPort.postMessage({ total: r.requests.total, duration: r.duration, non2xx: r.non2xx, p50: r.latency.p50, p99: r.latency.p99 });
    });`;
  return run(code, {
    autocannon: require.resolve('autocannon'),
    connections: CONNECTIONS,
    ...options,
  });
}

/** Chains of refreshes: each chain presents the refresh token the previous grant returned. */
function refreshChains(
  url: string,
  clientId: string,
  tokens: string[],
  seconds: number,
): Promise<Load> {
  const code = `
    const { parentPort, workerData: w } = require('node:worker_threads');
    const latencies = [];
    let failures = 0;
    const end = Date.now() + w.seconds * 1000;
    const started = Date.now();
    async function chain(token) {
      while (Date.now() < end) {
        const t0 = performance.now();
        const res = await fetch(w.url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: token, client_id: w.clientId }) });
        const body = await res.json();
        latencies.push(performance.now() - t0);
        if (res.status !== 200) { failures++; return; }
        token = body.refresh_token;
      }
    }
    Promise.all(w.tokens.map(chain)).then(() => {
      latencies.sort((a, b) => a - b);
      const q = (p) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))] * 100) / 100;
      parentPort.postMessage({ total: latencies.length, duration: (Date.now() - started) / 1000, non2xx: failures, p50: q(0.5), p99: q(0.99) });
    });`;
  return run(code, { url, clientId, tokens, seconds });
}

/** Sign-ins at a steady rate through the app's form (one CSRF cookie and token for all). */
function signins(
  base: string,
  email: string,
  password: string,
  perSecond: number,
  seconds: number,
): Promise<Load> {
  const code = `
    const { parentPort, workerData: w } = require('node:worker_threads');
    (async () => {
      const page = await fetch(w.base + '/app/signin');
      const cookie = page.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
      const csrf = /name="csrf" value="([^"]+)"/.exec(await page.text())[1];
      const body = new URLSearchParams({ csrf, email: w.email, password: w.password }).toString();
      const latencies = [];
      let failures = 0;
      let shed = 0;
      const pending = [];
      const started = Date.now();
      for (let i = 0; i < w.perSecond * w.seconds; i++) {
        const due = started + (i * 1000) / w.perSecond;
        await new Promise((r) => setTimeout(r, Math.max(0, due - Date.now())));
        const t0 = performance.now();
        pending.push(fetch(w.base + '/app/signin', { method: 'POST', redirect: 'manual', body,
          headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' } }).then((res) => {
            if (res.status === 503) return void shed++;
            latencies.push(performance.now() - t0);
            if (res.status !== 303) failures++;
          }));
      }
      await Promise.all(pending);
      latencies.sort((a, b) => a - b);
      const q = (p) => Math.round(latencies[Math.floor(p * (latencies.length - 1))] * 10) / 10;
      parentPort.postMessage({ total: latencies.length, duration: (Date.now() - started) / 1000, non2xx: failures, p50: q(0.5), p99: q(0.99), shed });
    })();`;
  return run(code, { base, email, password, perSecond, seconds });
}

function run(code: string, workerData: Record<string, unknown>): Promise<Load> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(code, { eval: true, workerData });
    worker.once('error', reject);
    worker.once(
      'message',
      (m: {
        error?: string;
        total: number;
        duration: number;
        non2xx: number;
        p50: number;
        p99: number;
        shed?: number;
      }) => {
        void worker.terminate();
        if (m.error) return reject(new Error(m.error));
        if (m.non2xx > 0) return reject(new Error(`${m.non2xx} refusals out of ${m.total}`));
        resolve({
          rps: Math.round(m.total / m.duration),
          p50Ms: m.p50,
          p99Ms: m.p99,
          ...(m.shed !== undefined ? { shed: m.shed } : {}),
        });
      },
    );
  });
}

const database = await benchDatabase('auth');
let exitCode = 0;
try {
  const log = pino({ level: 'warn' }, pino.destination(2));
  const config = loadConfig(
    { LOG_LEVEL: 'warn' },
    {
      port: 0,
      databaseUrl: database.url,
      rateLimitPerMinute: 1e9,
      rateLimitBurst: 1e9,
      addressRateLimitPerMinute: 1e9,
      addressRateLimitBurst: 1e9,
    },
  );
  const app = await startApp(config, { log });
  try {
    const { sql } = app.services;
    const workspaceId = app.demo!.workspaceId;
    const server = { app, url: app.url, sql, workspaceId } as Parameters<typeof personToken>[0];
    const client = await createClient(sql, {
      workspaceId,
      role: 'admin',
      scopes: [...SCOPES],
      name: 'bench',
    });
    const forms = [
      new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: client.clientId,
        client_secret: client.clientSecret!,
      }).toString(),
    ];
    const password = 'bench password long enough';
    const { id: userId } = await createUser(sql, {
      email: 'bench@example.com',
      name: 'Bench',
      password,
      workspaceId,
      role: 'admin',
    });
    const keys: string[] = [];
    const people: string[] = [];
    for (let i = 0; i < 8; i++) {
      keys.push((await createKey(sql, { workspaceId, role: 'admin', scopes: [...SCOPES] })).key);
      people.push(await personToken(server, userId));
    }

    await cannon({ url: `${app.url}/v1/me`, seconds: 2, bearers: keys });
    const clientCredentials = await cannon({
      url: `${app.url}/v1/oauth/token`,
      seconds: SECONDS,
      forms,
    });
    // Refresh chains start from refresh tokens stored exactly as the authorization-code grant stores them.
    const firstParty = await createClient(sql, {
      workspaceId,
      role: 'admin',
      scopes: [...SCOPES],
      firstParty: true,
      redirectUris: ['http://127.0.0.1/cb'],
    });
    const chains: string[] = [];
    for (let i = 0; i < CONNECTIONS; i++) {
      const familyId = newId('fam');
      const token = newSecret('fpr');
      await insertFamily(sql, { id: familyId, clientId: firstParty.clientId, userId });
      await insertRefreshToken(sql, {
        id: newId('rft'),
        hash: sha256(token),
        familyId,
        workspaceId,
        scopes: [...SCOPES],
        expiresAt: new Date(Date.now() + 86_400_000),
      });
      chains.push(token);
    }
    const refresh = await refreshChains(
      `${app.url}/v1/oauth/token`,
      firstParty.clientId,
      chains,
      SECONDS,
    );
    const meKey = await cannon({ url: `${app.url}/v1/me`, seconds: SECONDS, bearers: keys });
    const mePerson = await cannon({ url: `${app.url}/v1/me`, seconds: SECONDS, bearers: people });
    const [meUnderSignins, signin] = await Promise.all([
      cannon({ url: `${app.url}/v1/me`, seconds: SECONDS, bearers: keys }),
      signins(app.url, 'bench@example.com', password, 20, SECONDS),
    ]);
    process.stdout.write(
      JSON.stringify({
        name: 'auth',
        machine: machine(),
        clientCredentialsPerSecond: clientCredentials.rps,
        clientCredentialsP99Ms: clientCredentials.p99Ms,
        refreshPerSecond: refresh.rps,
        refreshP99Ms: refresh.p99Ms,
        meApiKey: meKey,
        mePersonToken: mePerson,
        meP99MsAlone: meKey.p99Ms,
        meP99MsDuring20SigninsPerSecond: meUnderSignins.p99Ms,
        meRpsDuringSignins: meUnderSignins.rps,
        signinsPerSecondServed: signin.rps,
        signinsShed503: signin.shed,
        signinP50Ms: signin.p50Ms,
        signinP99Ms: signin.p99Ms,
      }) + '\n',
    );
  } finally {
    await app.close();
  }
} catch (error) {
  process.stderr.write(
    `bench:auth failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  exitCode = 1;
} finally {
  await database.drop();
}
process.exit(exitCode);

/**
 * The runtime, as README states it: the Node range in package.json is the one the start-up
 * check enforces, and below it `npm start` and the CLI print one line and exit 1; a server
 * serves on uWebSockets.js where a build of it loads and on node:http where none does, says
 * which in its log, and refuses to start when HTTP_TRANSPORT=uws cannot be had.
 * Another Node is simulated by overriding `process.versions.node` in a preloaded module.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import pino from 'pino';
import t from 'tap';
import { startApp } from '../../src/compose.ts';
import { loadConfig } from '../../src/platform/config.ts';
import { SUPPORTED_NODE, unsupportedNode } from '../../src/platform/node-version.js';
import { freePort } from '../../src/storage/embedded.ts';
import { createTestDatabase } from '../helpers/database.ts';
import { operatorEnv, run } from '../helpers/process.ts';
import { uwsLoads } from '../helpers/uws.ts';
import { thisPlatform, uwsLoadFailure } from '../../src/web/http/transport.ts';
import { request, startTestServer } from '../helpers/server.ts';

/** The error loading uWebSockets.js throws here (where it loads, none). */
function uwsError(): unknown {
  try {
    createRequire(import.meta.url)('uWebSockets.js');
    return null;
  } catch (error) {
    return error;
  }
}

const asNode = (version: string) =>
  `data:text/javascript,Object.defineProperty(process.versions,"node",{value:"${version}"})`;

t.test('package.json engines is the range the start-up check enforces', async (t) => {
  const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { engines: { node: string } };
  t.equal(pkg.engines.node, SUPPORTED_NODE);
  for (const version of ['20.12.0', '20.19.5', '22.12.0', '24.11.0', '25.2.1'])
    t.equal(unsupportedNode(version), null, `${version} runs`);
  for (const version of ['18.20.4', '20.11.1'])
    t.equal(
      unsupportedNode(version),
      `flowplan: Node ${version} is not supported: flowplan runs on Node >=20.12, because it uses APIs that Node 20.12 added (README: Runtime).`,
      `${version} is refused, saying why`,
    );
});

const refusalEnv = operatorEnv({ DATABASE_URL: 'postgres://127.0.0.1:1/none', LOG_LEVEL: 'info' });

t.test('npm start on an unsupported Node: one line, exit 1', async (t) => {
  const result = await run(
    process.execPath,
    ['--import', 'tsx', '--import', asNode('20.11.1'), 'src/main.ts'],
    { env: refusalEnv },
  );
  t.equal(result.code, 1, 'exits 1');
  t.equal(result.stdout, '', 'nothing on stdout');
  t.equal(result.stderr, `${unsupportedNode('20.11.1')}\n`, 'one line on stderr, no stack trace');
});

t.test('the CLI on an unsupported Node: one line, exit 1', async (t) => {
  const result = await run(
    process.execPath,
    ['--import', asNode('20.11.1'), 'bin/flowplan.js', 'migrate', '--json'],
    { env: refusalEnv },
  );
  t.equal(result.code, 1, 'exits 1');
  t.equal(result.stdout, '', 'nothing on stdout');
  t.equal(result.stderr, `${unsupportedNode('20.11.1')}\n`, 'one line on stderr, no stack trace');
});

t.test(
  'auto serves on uWebSockets.js where it loads, else on node:http, and logs which',
  async (t) => {
    const lines: { level: number; msg: string; transport?: string; reason?: string }[] = [];
    const log = pino(
      { level: 'info' },
      { write: (line: string) => void lines.push(JSON.parse(line)) },
    );
    const databaseUrl = await createTestDatabase(t);
    const app = await startApp(loadConfig({ METRICS_PORT: '0' }, { port: 0, databaseUrl }), {
      log,
      coldRecomputePool: true,
      skipDemoPerson: true,
    });
    t.teardown(() => app.close());
    t.equal(app.transport, uwsLoads ? 'uws' : 'node');
    const said = lines.filter(({ msg }) => msg.startsWith('http transport'));
    t.equal(said.length, 1, 'one line says which transport');
    if (uwsLoads)
      t.hasStrict(said[0], { level: 30, transport: 'uws', msg: 'http transport: uWebSockets.js' });
    else {
      // The reason is this system's own: its glibc, read here as the server reads it.
      const reason = uwsLoadFailure(uwsError(), thisPlatform());
      t.hasStrict(said[0], {
        level: 40,
        transport: 'node',
        reason,
        msg: `http transport: serving on node:http, since uWebSockets.js cannot load here: ${reason}`,
      });
      t.notMatch(said[0]?.msg, /supports only Node/, "not uWS's own words, which blame the Node");
      const glibc = thisPlatform().glibc;
      if (glibc) t.match(reason, `glibc ${glibc} here is older than the glibc `, 'names the glibc');
    }
    const me = await request(app.url, 'GET', '/v1/me', { token: app.demo?.key ?? 'no demo key' });
    t.equal(me.status, 200, 'and answers');
  },
);

t.test('HTTP_TRANSPORT=node serves on node:http wherever uWS loads', async (t) => {
  const s = await startTestServer(t, {}, { HTTP_TRANSPORT: 'node' });
  t.equal(s.app.transport, 'node');
  t.equal((await s.api('GET', '/v1/me', { token: s.adminKey })).status, 200);
});

t.test(
  'HTTP_TRANSPORT=uws where no build loads: one line, exit 1',
  { skip: uwsLoads && 'uWS loads here' },
  async (t) => {
    const databaseUrl = await createTestDatabase(t, { empty: true });
    const result = await run(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: operatorEnv({
        HTTP_TRANSPORT: 'uws',
        DATABASE_URL: databaseUrl,
        PORT: String(await freePort()),
        HOST: '127.0.0.1',
        METRICS_PORT: '0',
        LOG_LEVEL: 'silent',
        FLOWPLAN_DEMO: '0',
      }),
    });
    t.equal(result.code, 1, 'exits 1');
    t.equal(result.stdout, '', 'nothing on stdout: never listened');
    t.equal(
      result.stderr,
      `flowplan: HTTP_TRANSPORT=uws, but no uWebSockets.js build loads here (${uwsLoadFailure(uwsError(), thisPlatform())}); unset HTTP_TRANSPORT to serve on node:http (README: Runtime)\n`,
      "one line on stderr saying why, in this system's terms, and what to do",
    );
  },
);

/**
 * The runtime, as README states it: the Node range in package.json is the one the start-up
 * check enforces; on another Node, `npm start` and the CLI print one line and exit 1 before
 * anything loads uWebSockets.js; a server whose uWS binary did not load says so and stops.
 * Another Node is simulated by overriding `process.versions.node` in a preloaded module.
 */
import { readFileSync } from 'node:fs';
import t from 'tap';
import { SUPPORTED_NODE, unsupportedNode } from '../../src/platform/node-version.ts';
import { freePort } from '../../src/storage/embedded.ts';
import { createTestDatabase } from '../helpers/database.ts';
import { operatorEnv, run } from '../helpers/process.ts';

const asNode = (version: string) =>
  `data:text/javascript,Object.defineProperty(process.versions,"node",{value:"${version}"})`;

t.test('package.json engines is the range the start-up check enforces', async (t) => {
  const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { engines: { node: string } };
  t.equal(pkg.engines.node, SUPPORTED_NODE);
  for (const version of ['20.12.0', '20.19.5', '20.20.2'])
    t.equal(unsupportedNode(version), null, `${version} runs`);
  for (const version of ['18.20.4', '20.11.1', '21.7.3', '22.12.0', '24.11.0']) {
    t.match(
      unsupportedNode(version),
      `Node ${version} is not supported: flowplan runs on Node ${SUPPORTED_NODE}, because`,
      `${version} is refused`,
    );
  }
  t.match(
    unsupportedNode('24.11.0'),
    /uWebSockets\.js build has native binaries up to Node 20/,
    'a newer Node: the uWS binary is why',
  );
  t.match(
    unsupportedNode('20.11.1'),
    /APIs that Node 20\.12 added/,
    'an older Node: the missing APIs are why',
  );
});

// UWS_USE_FALLBACK makes the uWS package announce itself on stdout when loaded: stdout stays
// empty only if nothing loaded it.
const refusalEnv = operatorEnv({
  UWS_USE_FALLBACK: '1',
  DATABASE_URL: 'postgres://127.0.0.1:1/none',
  LOG_LEVEL: 'info',
});

t.test('npm start on an unsupported Node: one line, exit 1, uWS never loaded', async (t) => {
  for (const version of ['22.12.0', '24.11.0', '20.11.1']) {
    const result = await run(
      process.execPath,
      ['--import', 'tsx', '--import', asNode(version), 'src/main.ts'],
      { env: refusalEnv },
    );
    t.equal(result.code, 1, `Node ${version}: exits 1`);
    t.equal(result.stdout, '', 'nothing on stdout');
    t.equal(result.stderr, `${unsupportedNode(version)}\n`, 'one line on stderr, no stack trace');
  }
});

t.test('the CLI on an unsupported Node: one line, exit 1', async (t) => {
  const result = await run(
    process.execPath,
    ['--import', asNode('22.12.0'), 'bin/flowplan.js', 'migrate', '--json'],
    { env: refusalEnv },
  );
  t.equal(result.code, 1, 'exits 1');
  t.equal(result.stdout, '', 'nothing on stdout');
  t.equal(result.stderr, `${unsupportedNode('22.12.0')}\n`, 'one line on stderr, no stack trace');
});

t.test('a server whose uWS binary did not load says so and does not start', async (t) => {
  // The fallback would crash the process at its first request (src/web/http/uws/server.ts NativeUwsUnavailable).
  const databaseUrl = await createTestDatabase(t, { empty: true });
  const port = await freePort();
  const result = await run(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: operatorEnv({
      UWS_USE_FALLBACK: '1',
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      HOST: '127.0.0.1',
      METRICS_PORT: '0',
      LOG_LEVEL: 'info',
    }),
  });
  t.equal(result.code, 1, 'exits 1');
  const lines = result.stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  t.matchOnlyStrict(
    lines.map(({ level, native, implementation }) => ({ level, native, implementation })),
    [{ level: 40, native: false, implementation: /fallback/ }],
    'one warn-level log line: not native, and nothing after it',
  );
  t.match(
    result.stderr,
    /^flowplan: the native uWebSockets\.js binary did not load \(Node [\d.]+, ABI \d+, [\w-]+; .*\), and its fallback cannot serve flowplan: not starting \(README: Runtime\)\n$/,
    'one line on stderr saying why',
  );
  t.notMatch(result.stdout, /flowplan is running/, 'no banner');
});

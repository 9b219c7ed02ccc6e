/**
 * Production is not a demo: a start under NODE_ENV=production (what `npm run start:prod` and the
 * container set) on an empty database creates no Demo workspace, key or person and prints no
 * secret, only how to make a workspace with the CLI; FLOWPLAN_DEMO=1 opts in, FLOWPLAN_DEMO=0
 * opts a development start out.
 */
import { readFileSync } from 'node:fs';
import postgres from 'postgres';
import t, { type Test } from 'tap';
import { freePort } from '../../src/storage/embedded.ts';
import { createTestDatabase } from '../helpers/database.ts';
import { bannerKey, operatorEnv, run, startServer } from '../helpers/process.ts';

const MAIN = ['--import', 'tsx', 'src/main.ts'];

async function counts(
  databaseUrl: string,
): Promise<{ workspaces: number; users: number; credentials: number }> {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
  try {
    const [row] = await sql<{ workspaces: number; users: number; credentials: number }[]>`select
      (select count(*) from workspaces)::int as workspaces, (select count(*) from users)::int as users, (select count(*) from credentials)::int as credentials`;
    return row!;
  } finally {
    await sql.end();
  }
}

async function start(t: Test, env: Record<string, string>) {
  const databaseUrl = await createTestDatabase(t, { empty: true });
  const port = await freePort();
  const server = await startServer(t, process.execPath, MAIN, {
    port,
    env: operatorEnv({
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      HOST: '127.0.0.1',
      METRICS_PORT: '0',
      LOG_LEVEL: 'warn',
      ...env,
    }),
  });
  await server.stop();
  return { databaseUrl, stdout: server.stdout() };
}

t.test('npm run start:prod sets NODE_ENV=production', async (t) => {
  const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as {
    scripts: Record<string, string>;
  };
  t.match(pkg.scripts['start:prod'], /^NODE_ENV=production node dist\/src\/main\.js$/);
  t.match(
    readFileSync('Dockerfile', 'utf8'),
    /^ENV NODE_ENV=production$/m,
    'and so does the container',
  );
});

t.test(
  'a production start on an empty database: no demo, no secret printed, the way to a first workspace',
  async (t) => {
    const { databaseUrl, stdout } = await start(t, { NODE_ENV: 'production' });
    t.match(stdout, /flowplan is running at/);
    t.equal(bannerKey(stdout), undefined, 'no API key in the output');
    t.notMatch(stdout, /password|Demo workspace|export BASE=/i, 'no password, no demo');
    t.match(
      stdout,
      /The database has no workspace.*npx flowplan workspace create --name N --json.*npx flowplan key create/,
      'says how to make one',
    );
    t.same(
      await counts(databaseUrl),
      { workspaces: 0, users: 0, credentials: 0 },
      'nothing was created',
    );

    const created = await run(
      process.execPath,
      ['bin/flowplan.js', 'workspace', 'create', '--name', 'Acme', '--json'],
      { env: operatorEnv({ DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' }) },
    );
    t.equal(created.code, 0, 'the CLI makes the first workspace');
    t.match(JSON.parse(created.stdout), { id: /^wsp_/ });
  },
);

t.test('FLOWPLAN_DEMO opts in under production, and out in development', async (t) => {
  const optIn = await start(t, { NODE_ENV: 'production', FLOWPLAN_DEMO: '1' });
  t.match(bannerKey(optIn.stdout), /^fpk_/, 'FLOWPLAN_DEMO=1: the Demo admin key is printed');
  t.strictSame(await counts(optIn.databaseUrl), { workspaces: 1, users: 1, credentials: 1 });

  const optOut = await start(t, { FLOWPLAN_DEMO: '0' });
  t.equal(bannerKey(optOut.stdout), undefined, 'FLOWPLAN_DEMO=0: no key');
  t.same(await counts(optOut.databaseUrl), { workspaces: 0, users: 0, credentials: 0 });

  const bad = await run(process.execPath, MAIN, {
    env: operatorEnv({ FLOWPLAN_DEMO: 'yes', DATABASE_URL: 'postgres://127.0.0.1:1/none' }),
  });
  t.equal(bad.code, 1);
  t.equal(
    bad.stderr,
    'flowplan: FLOWPLAN_DEMO must be 1 or 0, got "yes"\n',
    'a value that means nothing is refused in one line',
  );
});

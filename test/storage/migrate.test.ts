/**
 * Migrations and the first start (CONTRACT §0): concurrent migrators apply each file exactly
 * once, a second run applies nothing, `flowplan migrate --json` reports `{ "applied": [] }`,
 * and the Demo workspace with its admin key and owner is created once, even by two starts at once.
 */
import t from 'tap';
import { SCOPES } from '../../src/services/auth/principal.ts';
import { startApp } from '../../src/compose.ts';
import { verifyPassword } from '../../src/services/auth/secrets.ts';
import { loadConfig } from '../../src/platform/config.ts';
import { connect } from '../../src/storage/db.ts';
import { listMigrations, migrate } from '../../src/storage/migrate.ts';
import { createTestDatabase } from '../helpers/database.ts';
import { cli, request, startTestServer } from '../helpers/server.ts';

t.test('two concurrent migrators apply each file exactly once', async (t) => {
  const url = await createTestDatabase(t, { empty: true });
  // Two pools: two processes starting at once.
  const a = connect(url, 2);
  const b = connect(url, 2);
  t.teardown(async () => {
    await a.end();
    await b.end();
  });
  const files = listMigrations().map((m) => m.name);
  t.ok(files.length >= 1, `${files.length} migration files`);

  const [first, second] = await Promise.all([migrate(a), migrate(b)]);
  t.same([...first, ...second].sort(), [...files].sort(), 'between them, every file applied once');
  t.same(
    first.filter((name) => second.includes(name)),
    [],
    'no file applied by both',
  );

  const rows = await a<
    { version: number; name: string }[]
  >`select version, name from schema_migrations order by version`;
  t.equal(rows.length, files.length, 'one schema_migrations row per file');
  t.same(
    rows.map((r) => r.name),
    files,
  );

  t.same(await migrate(a), [], 'a second run applies nothing');
  t.same(await migrate(b), []);
  t.equal((await a`select count(*)::int as n from schema_migrations`)[0]!.n, files.length);

  const result = await cli(url, ['migrate', '--json']);
  t.equal(result.code, 0, result.stderr);
  t.same(
    JSON.parse(result.stdout),
    { applied: [] },
    'flowplan migrate --json on an up-to-date database',
  );
  t.equal(result.stdout.trim().split('\n').length, 1, 'one line of output');
});

t.test('flowplan migrate applies everything on an empty database', async (t) => {
  const url = await createTestDatabase(t, { empty: true });
  const result = await cli(url, ['migrate', '--json']);
  t.equal(result.code, 0, result.stderr);
  t.same(
    JSON.parse(result.stdout),
    { applied: listMigrations().map((m) => m.name) },
    'reports every file it applied',
  );
  const sql = connect(url, 1);
  t.teardown(() => sql.end());
  t.equal(
    (await sql`select count(*)::int as n from schema_migrations`)[0]!.n,
    listMigrations().length,
    'the schema is complete',
  );
});

t.test(
  'a fresh start creates one Demo workspace and admin key; later starts create none',
  async (t) => {
    const url = await createTestDatabase(t, { empty: true });
    const config = loadConfig({ LOG_LEVEL: 'silent' }, { port: 0, databaseUrl: url });
    // Two processes starting at once on an empty database.
    const [one, two] = await Promise.all([startApp(config), startApp(config)]);
    t.teardown(async () => {
      await one.close();
      await two.close();
    });
    const demos = [one.demo, two.demo].filter((demo) => demo !== null);
    t.equal(demos.length, 1, 'exactly one of the two starts created the Demo workspace');
    const demo = demos[0]!;
    t.match(demo.key, /^fpk_/);

    const sql = one.services.sql;
    const workspaces = await sql<
      { id: string; name: string; plan: string; seats: number }[]
    >`select id, name, plan, seats from workspaces`;
    t.equal(workspaces.length, 1, 'one workspace');
    t.hasStrict(workspaces[0], { id: demo.workspaceId, name: 'Demo', plan: 'pro', seats: 25 });
    const credentials = await sql<
      {
        kind: string;
        role: string;
        scopes: string[];
        workspaceId: string;
        revokedAt: Date | null;
      }[]
    >`
    select kind, role, scopes, workspace_id, revoked_at from credentials`;
    t.equal(credentials.length, 1, 'one credential');
    t.match(credentials[0], {
      kind: 'key',
      role: 'admin',
      workspaceId: demo.workspaceId,
      revokedAt: null,
    });
    t.same([...credentials[0]!.scopes].sort(), [...SCOPES].sort(), 'holding every scope');

    const me = await request(one.url, 'GET', '/v1/me', { token: demo.key });
    t.equal(me.status, 200, 'the printed key works');
    t.match(me.body, {
      workspaceId: demo.workspaceId,
      workspaceName: 'Demo',
      role: 'admin',
      plan: 'pro',
    });
    t.equal(
      (await request(two.url, 'GET', '/v1/me', { token: demo.key })).status,
      200,
      'on either process',
    );

    // And its owner, for the web app: the password returned once, only its hash stored (at the floor).
    t.equal(demo.person?.email, 'demo@flowplan.localhost');
    const people = await sql<
      { email: string; passwordHash: string; role: string; workspaceId: string }[]
    >`
    select u.email, u.password_hash, m.role, m.workspace_id from users u join memberships m on m.user_id = u.id`;
    t.strictSame(
      people.map(({ email, role, workspaceId }) => ({ email, role, workspaceId })),
      [{ email: 'demo@flowplan.localhost', role: 'owner', workspaceId: demo.workspaceId }],
      "one person, the Demo workspace's owner",
    );
    t.match(people[0]?.passwordHash, /^scrypt\$131072\$8\$1\$/, 'hashed at the floor');
    t.ok(
      await verifyPassword(demo.person!.password, people[0]!.passwordHash),
      'the password returned is theirs',
    );

    const three = await startApp(config);
    t.teardown(() => three.close());
    t.equal(three.demo, null, 'a later start on the same database creates nothing');
    t.equal((await sql`select count(*)::int as n from workspaces`)[0]!.n, 1);
    t.equal((await sql`select count(*)::int as n from credentials`)[0]!.n, 1);
    t.equal((await sql`select count(*)::int as n from users`)[0]!.n, 1);
  },
);

t.test(
  'a test server makes the Demo workspace and key but no demo person (skipDemoPerson)',
  async (t) => {
    const s = await startTestServer(t);
    t.match(s.app.demo, { workspaceId: s.workspaceId, key: s.adminKey, person: null });
    t.equal((await s.sql`select count(*)::int as n from users`)[0]!.n, 0);
  },
);

/**
 * `flowplan workspace list`, `user list`, `key list`, `client list`: an aligned table for people,
 * `{ "items": [...] }` with --json, and never a secret, a key, a password or any of their hashes.
 */
import t from 'tap';
import type { Test } from 'tap';
import { createClient, createKey, createWorkspace } from '../../src/services/auth/provision.ts';
import { revokeCredential } from '../../src/storage/credentials.store.ts';
import { createPerson } from '../helpers/people.ts';
import { cli, startTestServer } from '../helpers/server.ts';
import { databaseLine, runJson, type Json } from './output.ts';

/** Every column starts at the same place on every line as its header does. */
function aligned(t: Test, text: string, headers: string[]): string[] {
  const [header, ...rows] = text.trimEnd().split('\n');
  t.match(
    header,
    new RegExp(`^${headers.map((h) => h.replace(/[()]/g, '\\$&')).join(' {2,}')}$`),
    `header ${headers.join(', ')}`,
  );
  t.ok(rows.length > 0, 'rows under the header');
  for (const name of headers.slice(1)) {
    const at = header!.indexOf(`  ${name}`) + 2;
    for (const row of rows)
      t.ok(
        row[at - 1] === ' ' && row[at] !== ' ' && row[at] !== undefined,
        `${name} lines up in: ${row}`,
      );
  }
  return rows;
}

t.test('list commands', async (t) => {
  const s = await startTestServer(t);
  const db = s.databaseUrl;
  const { id: second } = await createWorkspace(s.sql, { name: 'Second', plan: 'free' });
  const password = 'a password that must never be printed';
  const { id: ada } = await createPerson(s.sql, {
    email: 'ada@example.com',
    name: 'Ada',
    password,
    workspaceId: s.workspaceId,
    role: 'admin',
  });
  await createPerson(s.sql, { email: 'ada@example.com', workspaceId: second, role: 'viewer' });
  const { id: bob } = await createPerson(s.sql, {
    email: 'bob@example.com',
    name: 'Bob',
    password,
    workspaceId: s.workspaceId,
    role: 'member',
  });
  const robot = await createKey(s.sql, {
    workspaceId: s.workspaceId,
    role: 'member',
    scopes: ['flows:read', 'work:write'],
    name: 'Robot',
  });
  await revokeCredential(s.sql, robot.id);
  const client = await createClient(s.sql, {
    workspaceId: s.workspaceId,
    role: 'member',
    scopes: ['flows:read'],
    name: 'Integration',
  });
  const app = await createClient(s.sql, {
    workspaceId: second,
    role: 'admin',
    scopes: ['flows:read'],
    name: 'Desk app',
    firstParty: true,
    redirectUris: ['http://127.0.0.1/cb'],
  });

  const table = (args: string[]) => cli(db, args);
  const [
    workspaces,
    users,
    keys,
    clients,
    workspacesJson,
    usersJson,
    keysJson,
    clientsJson,
    noWorkspace,
  ] = await Promise.all([
    table(['workspace', 'list']),
    table(['user', 'list']),
    table(['key', 'list', '--workspace', s.workspaceId]),
    table(['client', 'list']),
    runJson(t, db, ['workspace', 'list']),
    runJson(t, db, ['user', 'list', '--workspace', second]),
    runJson(t, db, ['key', 'list', '--workspace', s.workspaceId]),
    runJson(t, db, ['client', 'list', '--workspace', s.workspaceId]),
    cli(db, ['key', 'list', '--workspace', 'wsp_nope', '--json']),
  ]);

  t.test('tables', async (t) => {
    for (const result of [workspaces, users, keys, clients]) {
      t.equal(result.code, 0, result.stderr);
      t.equal(result.stderr, databaseLine(db), 'stderr names the database');
    }
    const workspaceRows = aligned(t, workspaces.stdout, [
      'ID',
      'NAME',
      'PLAN',
      'MEMBERS',
      'PAST DUE',
      'CREATED (UTC)',
    ]);
    t.match(
      workspaceRows.find((row) => row.startsWith(s.workspaceId)),
      /^wsp_\S+ +Demo +pro +2\/25 +no +\d{4}-\d\d-\d\d \d\d:\d\d$/,
    );
    t.match(
      workspaceRows.find((row) => row.startsWith(second)),
      / Second +free +1\/2 +no /,
    );

    const userRows = aligned(t, users.stdout, [
      'ID',
      'EMAIL',
      'NAME',
      'CREATED (UTC)',
      'WORKSPACES',
    ]);
    t.match(
      userRows.find((row) => row.startsWith(ada)),
      new RegExp(
        ` ada@example\\.com +Ada +.* ${s.workspaceId} \\(admin\\), ${second} \\(viewer\\)$`,
      ),
    );
    t.match(
      userRows.find((row) => row.startsWith(bob)),
      / bob@example\.com +Bob /,
    );

    const keyRows = aligned(t, keys.stdout, [
      'ID',
      'NAME',
      'ROLE',
      'CREATED (UTC)',
      'REVOKED (UTC)',
      'SCOPES',
    ]);
    t.match(
      keyRows.find((row) => row.startsWith(robot.id)),
      / Robot +member +\S+ \S+ +\d{4}-\d\d-\d\d \d\d:\d\d +flows:read work:write$/,
      'a revoked key, with when',
    );
    t.match(
      keyRows.find((row) => / Demo admin key /.test(row)),
      / admin +\S+ \S+ +- +all$/,
      'a live key; every scope reads "all"',
    );

    const clientRows = aligned(t, clients.stdout, [
      'ID',
      'NAME',
      'KIND',
      'WORKSPACE',
      'ROLE',
      'CREATED (UTC)',
      'DELETED (UTC)',
      'SCOPES',
    ]);
    t.match(
      clientRows.find((row) => row.startsWith(client.clientId)),
      / Integration +confidential +wsp_\S+ +member /,
    );
    t.match(
      clientRows.find((row) => row.startsWith(app.clientId)),
      / Desk app +first-party +wsp_\S+ +admin /,
    );
  });

  t.test('--json', async (t) => {
    const items = (result: Json) => result.items as Json[];
    t.same(Object.keys(workspacesJson), ['items']);
    t.match(
      items(workspacesJson).find((w) => w.id === second),
      {
        name: 'Second',
        plan: 'free',
        pastDue: false,
        seats: 2,
        members: 1,
        createdAt: /^\d{4}-.*Z$/,
      },
    );
    t.same(Object.keys(items(workspacesJson)[0]!), [
      'id',
      'name',
      'plan',
      'pastDue',
      'seats',
      'members',
      'createdAt',
    ]);

    t.same(
      items(usersJson).map((u) => [u.id, u.email, u.workspaces]),
      [[ada, 'ada@example.com', [{ id: second, role: 'viewer' }]]],
      'only the members of the workspace asked for, with their role there',
    );
    t.same(Object.keys(items(usersJson)[0]!), ['id', 'email', 'name', 'createdAt', 'workspaces']);

    const listedKeys = items(keysJson);
    t.same(Object.keys(listedKeys[0]!), [
      'id',
      'workspaceId',
      'name',
      'role',
      'scopes',
      'createdAt',
      'revokedAt',
    ]);
    t.match(
      listedKeys.find((k) => k.id === robot.id),
      { name: 'Robot', role: 'member', revokedAt: /Z$/ },
    );
    t.strictSame(
      listedKeys.find((k) => k.id === robot.id)?.scopes,
      ['flows:read', 'work:write'],
      'exactly the scopes given',
    );
    t.match(
      listedKeys.find((k) => k.name === 'Demo admin key'),
      { role: 'admin', revokedAt: null },
    );

    t.same(
      items(clientsJson)
        .map((c) => [c.id, c.firstParty])
        .sort(),
      [
        [client.clientId, false],
        [app.clientId, true],
      ].sort(),
      "a workspace's clients: its own and the installation's first-party ones",
    );
    t.match(
      items(clientsJson).find((c) => c.id === app.clientId),
      { workspaceId: second, revokedAt: null },
    );
    t.strictSame(
      items(clientsJson).find((c) => c.id === app.clientId)?.redirectUris,
      ['http://127.0.0.1/cb'],
      'its one redirect URI',
    );

    t.equal(noWorkspace.code, 1);
    t.match(JSON.parse(noWorkspace.stdout), { error: { code: 'NOT_FOUND', message: /wsp_nope/ } });
  });

  t.test('no secret, key, password or hash anywhere in the output', async (t) => {
    const printed =
      [workspaces, users, keys, clients].map((r) => r.stdout + r.stderr).join('') +
      JSON.stringify([workspacesJson, usersJson, keysJson, clientsJson]);
    const hashes = await s.sql<
      { h: string }[]
    >`select secret_hash as h from credentials where secret_hash is not null
      union all select password_hash from users`;
    t.ok(hashes.length >= 5);
    for (const secret of [
      s.adminKey,
      robot.key,
      client.clientSecret!,
      password,
      ...hashes.map((row) => row.h),
    ]) {
      t.notOk(printed.includes(secret), `not printed: ${secret.slice(0, 8)}…`);
    }
    t.notMatch(printed, /scrypt\$|fpk_|fps_|secretHash|passwordHash/);
  });
});

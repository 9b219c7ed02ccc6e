/**
 * Issue 51, item 5: names reach the operator's terminal. A tenant admin names keys (on the API
 * access page) and people name themselves, and names stored before they were held to one line
 * may hold anything: an escape sequence (`ESC [2K`, CR) in a key's name let `flowplan key list`
 * erase its own line and print a forged one, and a bidirectional override reorders what follows.
 * Every table prints such a character as its `\uXXXX` escape, --json as well (the same JSON), and
 * `--name` refuses them.
 */
import t from 'tap';
import { createClient, createKey, createWorkspace } from '../../src/services/auth/provision.ts';
import { createPerson } from '../helpers/people.ts';
import { cli, item, startTestServer } from '../helpers/server.ts';
import { databaseLine, runJson } from './output.ts';

/** What must never reach the terminal raw: C0 (but the table's own line breaks), DEL, C1, line separators, bidi controls. */
const RAW =
  /[\u0000-\u0009\u000B-\u001F\u007F-\u009F\u2028\u2029\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/;

t.test(
  'names with control and bidirectional characters print escaped; --name refuses them',
  async (t) => {
    const s = await startTestServer(t);
    const db = s.databaseUrl;
    const { id: workspace } = await createWorkspace(s.sql, { name: 'Plain' });
    const key = await createKey(s.sql, {
      workspaceId: workspace,
      role: 'admin',
      scopes: ['flows:read'],
      name: 'Robot',
    });
    const client = await createClient(s.sql, {
      workspaceId: workspace,
      role: 'member',
      scopes: ['flows:read'],
      name: 'Sync',
    });
    const { id: person } = await createPerson(s.sql, {
      email: 'eve@example.com',
      name: 'Eve',
      password: 'a long enough password',
      workspaceId: workspace,
      role: 'admin',
    });
    // Stored as names were before the rule, straight into Postgres: erase the line and write a
    // forged one; CSI in its one-byte C1 form; an override; a line separator.
    const forged = 'Robot\u001B[2K\rkey_forged  admin  revoked';
    await s.sql`update credentials set name = ${forged} where id = ${key.id}`;
    await s.sql`update credentials set name = ${'Sync\u009B31m red'} where id = ${client.clientId}`;
    await s.sql`update users set name = ${'Eve\u202Etxt.exe'} where id = ${person}`;
    await s.sql`update workspaces set name = ${'Plain\u2028second line'} where id = ${workspace}`;

    const [keys, clients, users, workspaces] = await Promise.all([
      cli(db, ['key', 'list', '--workspace', workspace]),
      cli(db, ['client', 'list', '--workspace', workspace]),
      cli(db, ['user', 'list', '--workspace', workspace]),
      cli(db, ['workspace', 'list']),
    ]);
    for (const [what, result] of Object.entries({ keys, clients, users, workspaces })) {
      t.equal(result.code, 0, `${what}: ${result.stderr}`);
      t.notMatch(result.stdout, RAW, `${what}: no control or bidirectional character printed raw`);
    }
    const keyLine = keys.stdout.split('\n').find((line) => line.startsWith(key.id));
    t.match(
      keyLine,
      /^key_\S+ +Robot\\u001b\[2K\\u000dkey_forged {2}admin {2}revoked +admin +\d{4}-/,
      'the key is one line, its name escaped: the forged text is plainly part of it',
    );
    t.equal(keys.stdout.trimEnd().split('\n').length, 2, 'a header and the one key');
    t.match(clients.stdout, / Sync\\u009b31m red +confidential /);
    t.match(users.stdout, / eve@example\.com +Eve\\u202etxt\.exe +/);
    t.match(workspaces.stdout, / Plain\\u2028second line +pro +/);

    const json = await runJson(t, db, ['key', 'list', '--workspace', workspace]);
    t.equal(
      item(json.items as { name: string }[]).name,
      forged,
      '--json: the same name, character for character, once parsed',
    );
    const clientsJson = await cli(db, ['client', 'list', '--workspace', workspace, '--json']);
    t.notMatch(clientsJson.stdout, RAW, '--json: C1 and bidi characters escaped too');
    t.match(clientsJson.stdout, /"name":"Sync\\u009b31m red"/);
    t.equal(
      item((JSON.parse(clientsJson.stdout) as { items: { name: string }[] }).items).name,
      'Sync\u009B31m red',
    );

    // New names are held to the rules of every name: a usage error, nothing created.
    const refusals: [string[], RegExp][] = [
      [
        [
          'key',
          'create',
          '--workspace',
          workspace,
          '--role',
          'admin',
          '--scopes',
          'all',
          '--name',
          'a\u001B[31mb',
        ],
        /--name must not contain control characters \(U\+0000–U\+001F, U\+007F–U\+009F\)/,
      ],
      [
        [
          'client',
          'create',
          '--workspace',
          workspace,
          '--role',
          'member',
          '--scopes',
          'all',
          '--name',
          'x\u0085y',
        ],
        /--name must not contain control characters/,
      ],
      [
        ['workspace', 'create', '--name', 'Acme\u202Eevil'],
        /--name must not contain bidirectional controls \(U\+061C, U\+200E, U\+200F, U\+202A–U\+202E, U\+2066–U\+2069\)/,
      ],
      [
        [
          'user',
          'create',
          '--email',
          'new@example.com',
          '--name',
          'New\u2066',
          '--password',
          'a long enough password',
        ],
        /--name must not contain bidirectional controls/,
      ],
    ];
    const results = await Promise.all(refusals.map(([args]) => cli(db, args)));
    refusals.forEach(([args, message], i) => {
      const result = item(results, i);
      t.equal(result.code, 2, `${args.slice(0, 2).join(' ')}: a usage error`);
      t.match(result.stderr, message, 'says why, in words');
      t.equal(result.stdout, '', 'prints nothing');
    });
    t.equal(
      item(results).stderr.startsWith(databaseLine(db)),
      false,
      'refused before opening the database',
    );
    const [counts] = await s.sql<
      { keys: number; clients: number; workspaces: number; users: number }[]
    >`select
    (select count(*)::int from credentials where workspace_id = ${workspace} and kind = 'key') as keys,
    (select count(*)::int from credentials where workspace_id = ${workspace} and kind = 'client') as clients,
    (select count(*)::int from workspaces where name like 'Acme%') as workspaces,
    (select count(*)::int from users where email = 'new@example.com') as users`;
    t.strictSame(counts, { keys: 1, clients: 1, workspaces: 0, users: 0 }, 'nothing was created');
  },
);

/**
 * The operator CLI (CONTRACT §0) against the same database as a running server: every
 * command with --json prints exactly one JSON object on stdout, secrets are stored hashed,
 * stderr names the database and nothing else, and bad arguments fail with a non-zero exit and
 * a message on stderr.
 */
import t from 'tap';
import { SCOPES } from '../../src/services/auth/principal.ts';
import { sha256 } from '../../src/services/auth/secrets.ts';
import { afterAuthChange } from '../helpers/routes.ts';
import { cli, startTestServer } from '../helpers/server.ts';
import { fails, runJson as run } from './output.ts';
import type { Context, Refusal, Token } from '../helpers/wire.ts';

t.test('cli', async (t) => {
  const s = await startTestServer(t);
  const db = s.databaseUrl;

  t.test('migrate', async (t) => {
    t.same(
      await run(t, db, ['migrate']),
      { applied: [] },
      'nothing to apply on a migrated database',
    );
  });

  t.test('workspace create and set', async (t) => {
    const [pro, free, custom] = await Promise.all([
      run(t, db, ['workspace', 'create', '--name', 'Acme']),
      run(t, db, ['workspace', 'create', '--name', 'Tiny', '--plan', 'free']),
      run(t, db, ['workspace', 'create', '--name', 'Big', '--plan', 'pro', '--seats', '100']),
    ]);
    for (const created of [pro, free, custom]) {
      t.same(Object.keys(created), ['id']);
      t.match(created.id, /^wsp_/);
    }
    const rows = await s.sql<
      { id: string; name: string; plan: string; seats: number; pastDue: boolean }[]
    >`
      select id, name, plan, seats, past_due from workspaces where id in ${s.sql([pro.id as string, free.id as string, custom.id as string])}`;
    const byId = new Map(rows.map((row) => [row.id, row]));
    t.hasStrict(
      byId.get(pro.id as string),
      { name: 'Acme', plan: 'pro', seats: 25, pastDue: false },
      'a pro workspace gets 25 seats',
    );
    t.hasStrict(
      byId.get(free.id as string),
      { name: 'Tiny', plan: 'free', seats: 2 },
      'a free workspace gets 2 seats',
    );
    t.hasStrict(byId.get(custom.id as string), { plan: 'pro', seats: 100 });

    const set = await run(t, db, [
      'workspace',
      'set',
      '--id',
      free.id as string,
      '--plan',
      'pro',
      '--past-due',
      'true',
      '--seats',
      '7',
    ]);
    t.same(set, { id: free.id, plan: 'pro', pastDue: true, seats: 7 });
    const [row] =
      await s.sql`select plan, past_due, seats from workspaces where id = ${free.id as string}`;
    t.hasStrict(row, { plan: 'pro', pastDue: true, seats: 7 });
    const partial = await run(t, db, [
      'workspace',
      'set',
      '--id',
      free.id as string,
      '--past-due',
      'false',
    ]);
    t.same(
      partial,
      { id: free.id, plan: 'pro', pastDue: false, seats: 7 },
      'unnamed fields are left alone',
    );
  });

  t.test('user create: hashed password, one account per email, membership added', async (t) => {
    const password = 'correct horse battery staple';
    const created = await run(t, db, [
      'user',
      'create',
      '--email',
      'ada@example.com',
      '--name',
      'Ada',
      '--password',
      password,
      '--workspace',
      s.workspaceId,
      '--role',
      'admin',
    ]);
    t.same(Object.keys(created), ['id']);
    t.match(created.id, /^usr_/);
    const [user] = await s.sql<
      { passwordHash: string; name: string }[]
    >`select password_hash, name from users where id = ${created.id as string}`;
    t.equal(user!.name, 'Ada');
    t.not(user!.passwordHash, password, 'the password is not stored');
    t.notMatch(user!.passwordHash, password);
    t.match(user!.passwordHash, /^scrypt\$/, 'stored as a scrypt hash');

    const { id: other } = await run(t, db, ['workspace', 'create', '--name', 'Second']);
    const again = await run(t, db, [
      'user',
      'create',
      '--email',
      'ADA@example.com',
      '--workspace',
      other as string,
      '--role',
      'viewer',
    ]);
    t.equal(
      again.id,
      created.id,
      'the same person (email matched case-insensitively), the same id',
    );
    const memberships = await s.sql<
      { workspaceId: string; role: string }[]
    >`select workspace_id, role from memberships where user_id = ${created.id as string} order by role`;
    t.same(
      memberships.map((m) => [m.workspaceId, m.role]),
      [
        [s.workspaceId, 'admin'],
        [other, 'viewer'],
      ],
    );
    t.equal(
      (await s.sql`select 1 from users where lower(email) = 'ada@example.com'`).length,
      1,
      'one account',
    );

    const loner = await run(t, db, [
      'user',
      'create',
      '--email',
      'bob@example.com',
      '--name',
      'Bob',
      '--password',
      'pw-bob-123',
    ]);
    t.match(loner.id, /^usr_/);
    t.equal(
      (await s.sql`select 1 from memberships where user_id = ${loner.id as string}`).length,
      0,
      'no workspace, no membership',
    );
  });

  t.test('key create and revoke: shown once, stored as a sha256 hash', async (t) => {
    const created = await run(t, db, [
      'key',
      'create',
      '--workspace',
      s.workspaceId,
      '--role',
      'member',
      '--scopes',
      'flows:read work:write',
      '--name',
      'Robot',
    ]);
    t.same(Object.keys(created).sort(), ['id', 'key']);
    t.match(created.id, /^key_/);
    t.match(created.key, /^fpk_/);
    const key = created.key as string;
    const rows = await s.sql`select * from credentials`;
    t.notMatch(JSON.stringify(rows), key, 'the key text is nowhere in the credentials table');
    const [row] = await s.sql<
      { secretHash: string; role: string; scopes: string[]; name: string }[]
    >`select secret_hash, role, scopes, name from credentials where id = ${created.id as string}`;
    t.equal(row!.secretHash, sha256(key));
    t.match(row, { role: 'member', name: 'Robot' });
    t.strictSame(row?.scopes, ['flows:read', 'work:write'], 'exactly the scopes given');

    const me = await s.api<Context>('GET', '/v1/me', { token: key });
    t.match(
      me.body,
      { credentialId: created.id, role: 'member' },
      'the key works on the running server',
    );
    t.strictSame(me.body.scopes, ['flows:read', 'work:write'], 'exactly the scopes given');

    const all = await run(t, db, [
      'key',
      'create',
      '--workspace',
      s.workspaceId,
      '--role',
      'viewer',
      '--scopes',
      'all',
    ]);
    t.same(
      (await s.api<Context>('GET', '/v1/me', { token: all.key as string })).body.scopes,
      [...SCOPES],
      '"all" is every scope',
    );

    // The server drops its cached credentials when the CLI's change notice arrives.
    const revoke = await afterAuthChange(s, () =>
      cli(db, ['key', 'revoke', '--id', created.id as string, '--json']),
    );
    t.equal(revoke.code, 0, revoke.stderr);
    t.match(JSON.parse(revoke.stdout), { id: created.id, revoked: true });
    t.equal((await s.api('GET', '/v1/me', { token: key })).status, 401);
    const [after] = await s.sql<
      { revokedAt: Date | null }[]
    >`select revoked_at from credentials where id = ${created.id as string}`;
    t.ok(after!.revokedAt, 'marked revoked');
  });

  t.test('client create: confidential and first-party', async (t) => {
    const created = await run(t, db, [
      'client',
      'create',
      '--workspace',
      s.workspaceId,
      '--role',
      'member',
      '--scopes',
      'flows:read',
      '--name',
      'Integration',
    ]);
    t.same(Object.keys(created).sort(), ['clientId', 'clientSecret']);
    t.match(created.clientId, /^cli_/);
    t.type(created.clientSecret, 'string');
    const secret = created.clientSecret as string;
    t.notMatch(
      JSON.stringify(await s.sql`select * from credentials`),
      secret,
      'the secret is nowhere in the credentials table',
    );
    const [row] = await s.sql<
      { secretHash: string; kind: string }[]
    >`select secret_hash, kind from credentials where id = ${created.clientId as string}`;
    t.equal(row!.secretHash, sha256(secret));
    t.equal(row!.kind, 'client');
    const token = await s.api<Token>('POST', '/v1/oauth/token', {
      raw: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: created.clientId as string,
        client_secret: secret,
      }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    t.equal(token.status, 200, 'the client gets tokens from the running server');

    const firstParty = await run(t, db, [
      'client',
      'create',
      '--workspace',
      s.workspaceId,
      '--role',
      'admin',
      '--scopes',
      'all',
      '--first-party',
      '--redirect-uri',
      'http://127.0.0.1/callback',
      '--redirect-uri',
      'http://localhost/cb',
    ]);
    t.match(firstParty.clientId, /^cli_/);
    t.equal(firstParty.clientSecret, null, 'a first-party client is public: no secret');
    const [public_] = await s.sql<
      { secretHash: string | null; firstParty: boolean; redirectUris: string[] }[]
    >`select secret_hash, first_party, redirect_uris from credentials where id = ${firstParty.clientId as string}`;
    t.match(public_, { secretHash: null, firstParty: true });
    t.strictSame(
      public_?.redirectUris,
      ['http://127.0.0.1/callback', 'http://localhost/cb'],
      'both redirect URIs, in order',
    );

    t.same(await run(t, db, ['client', 'delete', '--id', created.clientId as string]), {
      id: created.clientId,
      deleted: true,
    });
    const me = await s.api<Refusal>('GET', '/v1/me', { token: token.body.access_token });
    t.equal(me.body?.error?.code, 'CREDENTIAL_REVOKED', 'client delete ends the tokens it issued');
    const [demoKey] = await s.sql<
      { id: string }[]
    >`select id from credentials where kind = 'key' order by created_at limit 1`;
    await fails(t, db, ['client', 'delete', '--id', demoKey!.id], /Client \S+ not found/);
    t.equal(
      (await s.api('GET', '/v1/me', { token: s.adminKey })).status,
      200,
      'client delete does not touch a key',
    );
  });

  t.test('bad arguments: non-zero exit, a clear message on stderr, nothing written', async (t) => {
    const before =
      await s.sql`select (select count(*) from workspaces)::int as w, (select count(*) from credentials)::int as c, (select count(*) from users)::int as u`;
    await Promise.all([
      fails(t, db, ['frobnicate'], /unknown command/),
      fails(t, db, ['workspace', 'explode', '--json'], /unknown command/),
      fails(t, db, [], /usage/),
      fails(t, db, ['workspace', 'create'], /--name is required/),
      fails(
        t,
        db,
        ['workspace', 'create', '--name', 'X', '--plan', 'gold'],
        /--plan must be free or pro/,
      ),
      fails(t, db, ['workspace', 'create', '--name', 'X', '--seats', '-1'], /--seats/),
      fails(t, db, ['workspace', 'create', '--name', 'X', '--colour', 'red'], /colour/),
      fails(t, db, ['workspace', 'set', '--id', s.workspaceId], /at least one/),
      fails(
        t,
        db,
        ['workspace', 'set', '--id', s.workspaceId, '--past-due', 'maybe'],
        /--past-due must be true or false/,
      ),
      fails(t, db, ['workspace', 'set', '--id', 'wsp_nope', '--plan', 'free'], /wsp_nope/),
      fails(
        t,
        db,
        ['key', 'create', '--workspace', s.workspaceId, '--role', 'boss', '--scopes', 'all'],
        /--role must be one of/,
      ),
      fails(
        t,
        db,
        ['key', 'create', '--workspace', s.workspaceId, '--role', 'admin', '--scopes', 'nope'],
        /--scopes/,
      ),
      fails(
        t,
        db,
        [
          'key',
          'create',
          '--workspace',
          s.workspaceId,
          '--role',
          'admin',
          '--scopes',
          'flows:read nope',
        ],
        /--scopes/,
      ),
      fails(
        t,
        db,
        ['key', 'create', '--workspace', s.workspaceId, '--role', 'admin'],
        /--scopes is required/,
      ),
      fails(
        t,
        db,
        ['key', 'create', '--workspace', 'wsp_nope', '--role', 'admin', '--scopes', 'all'],
        /Workspace wsp_nope not found/,
      ),
      fails(t, db, ['key', 'revoke', '--id', 'key_nope'], /key_nope/),
      fails(
        t,
        db,
        ['client', 'create', '--workspace', 'wsp_nope', '--role', 'admin', '--scopes', 'all'],
        /Workspace wsp_nope not found/,
      ),
      fails(
        t,
        db,
        [
          'client',
          'create',
          '--workspace',
          s.workspaceId,
          '--role',
          'admin',
          '--scopes',
          'all',
          '--first-party',
        ],
        /redirect-uri/,
      ),
      fails(t, db, ['client', 'delete'], /--id is required/),
      fails(t, db, ['client', 'delete', '--id', 'cli_nope'], /Client cli_nope not found/),
      fails(
        t,
        db,
        ['user', 'create', '--email', 'not-an-email', '--name', 'N', '--password', 'P'],
        /--email/,
      ),
      fails(t, db, ['user', 'create', '--email', 'new@example.com', '--name', 'N'], /password/),
      fails(
        t,
        db,
        [
          'user',
          'create',
          '--email',
          'x@example.com',
          '--name',
          'N',
          '--password',
          'long enough pw',
          '--workspace',
          'wsp_nope',
        ],
        /Workspace wsp_nope not found/,
      ),
      fails(
        t,
        db,
        [
          'user',
          'create',
          '--email',
          'y@example.com',
          '--name',
          'N',
          '--password',
          'long enough pw',
          '--workspace',
          s.workspaceId,
          '--role',
          'boss',
        ],
        /--role must be one of/,
      ),
    ]);
    const after =
      await s.sql`select (select count(*) from workspaces)::int as w, (select count(*) from credentials)::int as c, (select count(*) from users)::int as u`;
    t.same(after, before, 'no workspace, credential or user was created');

    const withJson = await cli(db, [
      'key',
      'create',
      '--workspace',
      'wsp_nope',
      '--role',
      'admin',
      '--scopes',
      'all',
      '--json',
    ]);
    t.equal(withJson.code, 1);
    const parsed = JSON.parse(withJson.stdout) as { error: { code: string; message: string } };
    t.match(
      parsed,
      { error: { code: 'NOT_FOUND', message: /wsp_nope/ } },
      'with --json a failure is still one JSON object',
    );
  });
});

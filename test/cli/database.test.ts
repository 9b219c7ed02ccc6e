/**
 * Which database the CLI uses, and refusing the wrong one: with no DATABASE_URL and no embedded
 * cluster under FLOWPLAN_DATA_DIR, or a DATABASE_URL naming a database that does not exist or
 * has no flowplan schema, a command other than `migrate` exits 1 saying where it looked, and
 * creates nothing (not even the directory). stderr names the database, its password masked.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import type { Test } from 'tap';
import { connect } from '../../src/storage/db.ts';
import { createTestDatabase } from '../helpers/database.ts';
import { cli } from '../helpers/server.ts';

const BIN = path.resolve('bin/flowplan.js');

/** The CLI as an operator without DATABASE_URL runs it, in `cwd`. */
function cliWithoutUrl(
  cwd: string,
  env: Record<string, string>,
  args: string[],
): Promise<{ code: number; stdout: string; stderr: string }> {
  const { DATABASE_URL: _, FLOWPLAN_DATA_DIR: __, ...rest } = process.env;
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd,
      env: { ...rest, LOG_LEVEL: 'silent', ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('exit', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}

function tempDir(t: Test): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'flowplan-cli-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

t.test('no database where the CLI looks: exit 1, where it looked, nothing created', async (t) => {
  const empty = tempDir(t);
  const cwd = tempDir(t);
  const dataDir = path.join(empty, 'data');
  const admin = new URL(process.env.DATABASE_URL!);
  const noSuchDatabase = new URL(admin);
  noSuchDatabase.pathname = '/flowplan_no_such_database';
  const unmigrated = await createTestDatabase(t, { empty: true });

  const [explicit, byDefault, missing, noSchema] = await Promise.all([
    cliWithoutUrl(cwd, { FLOWPLAN_DATA_DIR: dataDir }, [
      'workspace',
      'create',
      '--name',
      'Lost',
      '--json',
    ]),
    cliWithoutUrl(cwd, {}, ['user', 'list']),
    cli(noSuchDatabase.toString(), ['workspace', 'list', '--json']),
    cli(unmigrated, [
      'key',
      'create',
      '--workspace',
      'wsp_x',
      '--role',
      'admin',
      '--scopes',
      'all',
    ]),
  ]);

  t.equal(explicit.code, 1, explicit.stderr);
  const [line, message] = explicit.stderr.trimEnd().split('\n');
  t.equal(
    line,
    `flowplan: embedded database in ${path.join(dataDir, 'postgres')} (FLOWPLAN_DATA_DIR)`,
    'stderr names where it looked',
  );
  t.match(
    message,
    new RegExp(
      `^flowplan: no embedded database in ${path.join(dataDir, 'postgres')} \\(FLOWPLAN_DATA_DIR is ${dataDir}, and DATABASE_URL is unset\\)\\..*DATABASE_URL.*flowplan migrate`,
    ),
  );
  t.match(
    JSON.parse(explicit.stdout),
    { error: { code: 'DATABASE_NOT_FOUND', message: /FLOWPLAN_DATA_DIR/ } },
    'with --json, one JSON object',
  );
  t.same(readdirSync(empty), [], 'the data directory was not created');

  t.equal(byDefault.code, 1, byDefault.stderr);
  t.match(
    byDefault.stderr,
    `flowplan: embedded database in ${path.join(cwd, '.flowplan', 'postgres')} (FLOWPLAN_DATA_DIR unset: the default .flowplan)\n`,
  );
  t.match(
    byDefault.stderr,
    /FLOWPLAN_DATA_DIR is unset, so the CLI looked in \.flowplan under the working directory/,
  );
  t.equal(byDefault.stdout, '');
  t.same(readdirSync(cwd), [], 'no .flowplan was created');

  t.equal(missing.code, 1, missing.stderr);
  const masked = new URL(noSuchDatabase);
  masked.password = '***';
  t.match(
    missing.stderr,
    `flowplan: database ${masked} (DATABASE_URL)\n`,
    'stderr names the database, its password masked',
  );
  t.notMatch(missing.stderr + missing.stdout, admin.password, 'the password is nowhere');
  t.match(JSON.parse(missing.stdout), {
    error: {
      code: 'DATABASE_NOT_FOUND',
      message: /database "flowplan_no_such_database" does not exist.*DATABASE_URL/,
    },
  });

  t.equal(noSchema.code, 1, noSchema.stderr);
  t.match(
    noSchema.stderr,
    /has no flowplan schema \(no schema_migrations table\)\. Check DATABASE_URL; .*`flowplan migrate`/,
  );
  const sql = connect(unmigrated, 1);
  t.teardown(() => sql.end());
  t.same(
    await sql`select table_name from information_schema.tables where table_schema = 'public'`,
    [],
    'no table was created',
  );
});

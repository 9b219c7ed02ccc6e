/**
 * Test databases: each test file makes its own on the run's Postgres (DATABASE_URL), copied
 * from the migrated template `npm test` prepares (so no file runs the migrations again), and
 * dropped afterwards.
 */
import { randomBytes } from 'node:crypto';
import postgres from 'postgres';
import type { Test } from 'tap';

/** Names the template database test/run.ts prepared; unset (a file run alone), databases start empty. */
export const TEMPLATE_ENV = 'FLOWPLAN_TEST_TEMPLATE';

/** Server settings of a test cluster: its data need not survive a crash of the machine. */
export const THROWAWAY_CLUSTER = {
  fsync: 'off',
  synchronous_commit: 'off',
  full_page_writes: 'off',
};

/** A new database for this test, dropped at its end: migrated, unless `empty` (or no template was prepared). */
export async function createTestDatabase(
  t: Test,
  options: { empty?: boolean } = {},
): Promise<string> {
  const admin = process.env.DATABASE_URL;
  if (!admin) throw new Error('DATABASE_URL is not set: run the tests with `npm test`');
  const name = `t_${process.pid}_${randomBytes(4).toString('hex')}`;
  const template = options.empty ? undefined : process.env[TEMPLATE_ENV];
  const sql = postgres(admin, { max: 1, onnotice: () => {} });
  await sql.unsafe(
    template ? `create database ${name} template ${template}` : `create database ${name}`,
  );
  await sql.end();
  t.teardown(async () => {
    const drop = postgres(admin, { max: 1, onnotice: () => {} });
    await drop.unsafe(`drop database if exists ${name} with (force)`);
    await drop.end();
  });
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * Numbered migrations from sql/, each applied exactly once in its own transaction under
 * an advisory lock, so two processes starting at once cannot both apply one.
 *
 * A file whose first line is `-- flowplan:batched` is a backfill instead: each of its statements
 * runs on its own, outside a transaction, again and again until it changes no row, so a busy
 * table is never locked for longer than one batch (and `create index concurrently` can run).
 * Its statements must each make progress and be safe to repeat after a crash.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Sql } from './db.ts';

const SQL_DIR = fileURLToPath(new URL('../../sql/', import.meta.url));
const LOCK_KEY = 7_046_231_901; // arbitrary, fixed: "flowplan migrations"

export interface Migration {
  version: number;
  name: string;
  text: string;
}

export function listMigrations(dir = SQL_DIR): Migration[] {
  return readdirSync(dir)
    .filter((file) => /^\d{4}_[\w-]+\.sql$/.test(file))
    .sort()
    .map((file) => ({
      version: Number(file.slice(0, 4)),
      name: file,
      text: readFileSync(dir + file, 'utf8'),
    }));
}

/**
 * Applies what is missing; returns the names applied by this call. The lock is held by one
 * session for the whole call and waited for by polling, not by a blocked statement: a batched
 * file's `create index concurrently` waits for every open transaction of the database, and
 * would deadlock with a second migrator sitting in one while it waits for the lock.
 */
export async function migrate(sql: Sql, migrations = listMigrations()): Promise<string[]> {
  const applied: string[] = [];
  const session = await sql.reserve();
  try {
    while (!(await tryLock(session))) await sleep(LOCK_POLL_MS);
    try {
      await session`create table if not exists schema_migrations (
        version integer primary key, name text not null, applied_at timestamptz not null default now())`;
      const done = new Set(
        (await session<{ version: number }[]>`select version from schema_migrations`).map(
          (row) => row.version,
        ),
      );
      for (const migration of migrations) {
        if (done.has(migration.version)) continue;
        if (migration.text.startsWith(BATCHED)) await runBatched(session, migration);
        else await runInTransaction(session, migration);
        applied.push(migration.name);
      }
    } finally {
      await session`select pg_advisory_unlock(${LOCK_KEY})`;
    }
  } finally {
    session.release();
  }
  return applied;
}

const LOCK_POLL_MS = 50;

async function tryLock(session: Session): Promise<boolean> {
  const [row] = await session<
    { locked: boolean }[]
  >`select pg_try_advisory_lock(${LOCK_KEY}) as locked`;
  return row?.locked === true;
}

type Session = Awaited<ReturnType<Sql['reserve']>>;

async function runInTransaction(session: Session, migration: Migration): Promise<void> {
  await session`begin`;
  try {
    await session.unsafe(migration.text);
    await session`insert into schema_migrations (version, name) values (${migration.version}, ${migration.name})`;
    await session`commit`;
  } catch (error) {
    await session`rollback`;
    throw error;
  }
}

const BATCHED = '-- flowplan:batched';

/** The statements of a batched file: split at a `;` ending a line, comment lines left out. */
export function batchStatements(text: string): string[] {
  return text
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('--'))
    .join('\n')
    .split(/;\s*\n/)
    .map((statement) => statement.trim().replace(/;$/, ''))
    .filter((statement) => statement.length > 0);
}

/** Applies a batched file: each statement on its own, repeated until it changes no row. */
async function runBatched(session: Session, migration: Migration): Promise<void> {
  for (const statement of batchStatements(migration.text)) {
    for (;;) {
      const result = await session.unsafe(statement);
      if (result.count === 0 || /^\s*(create|alter|drop)\b/i.test(statement)) break;
    }
  }
  await session`insert into schema_migrations (version, name) values (${migration.version}, ${migration.name})`;
}

/** Whether the database holds a flowplan schema at all (migrate has run here at least once). */
export async function hasSchema(sql: Sql): Promise<boolean> {
  const [row] = await sql<
    { present: boolean }[]
  >`select to_regclass('schema_migrations') is not null as present`;
  return row!.present;
}

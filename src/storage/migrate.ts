/**
 * Numbered migrations from sql/, each applied exactly once in its own transaction under
 * an advisory lock, so two processes starting at once cannot both apply one.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
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

/** Applies what is missing; returns the names applied by this call. */
export async function migrate(sql: Sql, migrations = listMigrations()): Promise<string[]> {
  const applied: string[] = [];
  for (const migration of migrations) {
    await sql.begin(async (tx) => {
      await tx`select pg_advisory_xact_lock(${LOCK_KEY})`;
      await tx`create table if not exists schema_migrations (
        version integer primary key, name text not null, applied_at timestamptz not null default now())`;
      const [done] = await tx`select 1 from schema_migrations where version = ${migration.version}`;
      if (done) return;
      await tx.unsafe(migration.text);
      await tx`insert into schema_migrations (version, name) values (${migration.version}, ${migration.name})`;
      applied.push(migration.name);
    });
  }
  return applied;
}

/** Whether the database holds a flowplan schema at all (migrate has run here at least once). */
export async function hasSchema(sql: Sql): Promise<boolean> {
  const [row] = await sql<
    { present: boolean }[]
  >`select to_regclass('schema_migrations') is not null as present`;
  return row!.present;
}

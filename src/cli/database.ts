/**
 * Which database a command talks to, said on stderr before anything else, and opening it
 * without creating one by mistake: pointed at the wrong data directory, a command other than
 * `migrate` must fail, not set up an empty database the server never sees.
 */
import type { Config } from '../platform/config.ts';
import {
  DatabaseMissing,
  embeddedClusterDir,
  embeddedClusterExists,
  isDatabaseUnavailable,
  openDatabase,
  type Database,
} from '../storage/db.ts';
import { hasSchema } from '../storage/migrate.ts';

/** The database the command needs is not there (or not reachable); nothing was created. */
export class DatabaseRefused extends Error {
  constructor(
    message: string,
    readonly code: 'DATABASE_NOT_FOUND' | 'DATABASE_UNAVAILABLE',
  ) {
    super(message);
  }
}

export interface Where {
  config: Config;
  /** Whether FLOWPLAN_DATA_DIR was set, or its default used. */
  dataDirSet: boolean;
  cwd: string;
}

/** The URL with its password (and any password parameter) masked. */
export function maskUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    for (const key of [...parsed.searchParams.keys()])
      if (/pass/i.test(key)) parsed.searchParams.set(key, '***');
    return parsed.toString();
  } catch {
    return '(not a URL)';
  }
}

function dataDirSource(where: Where): string {
  return where.dataDirSet ? 'FLOWPLAN_DATA_DIR' : 'FLOWPLAN_DATA_DIR unset: the default .flowplan';
}

/** The stderr line: `database postgres://…@host/db (DATABASE_URL)` or `embedded database in /abs/postgres (FLOWPLAN_DATA_DIR)`. */
export function describe(where: Where): string {
  const url = where.config.databaseUrl;
  return url
    ? `database ${maskUrl(url)} (DATABASE_URL)`
    : `embedded database in ${embeddedClusterDir(where.config.dataDir)} (${dataDirSource(where)})`;
}

/** Opens the database; unless `create`, refuses one that does not exist yet or has no flowplan schema. */
export async function openFor(
  where: Where,
  create: boolean,
  note: (line: string) => void,
): Promise<Database> {
  if (create && !where.config.databaseUrl && !embeddedClusterExists(where.config.dataDir))
    note('no embedded database there yet: creating it');
  let database: Database;
  try {
    database = await openDatabase(where.config, undefined, { create });
  } catch (error) {
    throw explain(where, error);
  }
  try {
    // The first query also says whether the database exists and answers at all.
    if (!(await hasSchema(database.sql)) && !create) {
      const check = where.config.databaseUrl ? 'DATABASE_URL' : 'FLOWPLAN_DATA_DIR';
      throw new DatabaseRefused(
        `the ${describe(where)} has no flowplan schema (no schema_migrations table). Check ${check}; ` +
          'to set flowplan up in that database, run `flowplan migrate`.',
        'DATABASE_NOT_FOUND',
      );
    }
    return database;
  } catch (error) {
    await database.close().catch(() => undefined);
    throw explain(where, error);
  }
}

/** A missing or unreachable database, in words that say where the CLI looked and what to do. */
function explain(where: Where, error: unknown): unknown {
  if (error instanceof DatabaseRefused) return error;
  const url = where.config.databaseUrl;
  if (error instanceof DatabaseMissing) {
    const looked = where.dataDirSet
      ? `FLOWPLAN_DATA_DIR is ${where.config.dataDir}`
      : `FLOWPLAN_DATA_DIR is unset, so the CLI looked in .flowplan under the working directory ${where.cwd}`;
    return new DatabaseRefused(
      `${error.message} (${looked}, and DATABASE_URL is unset). Set FLOWPLAN_DATA_DIR to the data directory the server uses, ` +
        'or DATABASE_URL to its database; to set up a new database there, run `flowplan migrate`. Nothing was created.',
      'DATABASE_NOT_FOUND',
    );
  }
  const code = (error as { code?: unknown } | null)?.code;
  if (code === '3D000' && url) {
    const name = decodeURIComponent(new URL(url).pathname.slice(1));
    return new DatabaseRefused(
      `database "${name}" does not exist (DATABASE_URL is ${maskUrl(url)}). Check DATABASE_URL; ` +
        'to use a new database, create it and run `flowplan migrate`. Nothing was created.',
      'DATABASE_NOT_FOUND',
    );
  }
  if (isDatabaseUnavailable(error)) {
    return new DatabaseRefused(
      `cannot reach the ${describe(where)}: ${(error as Error).message}`,
      'DATABASE_UNAVAILABLE',
    );
  }
  return error;
}

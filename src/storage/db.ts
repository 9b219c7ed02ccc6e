/**
 * The database: DATABASE_URL when set, otherwise the embedded cluster under the data
 * directory (database `flowplan`, created on first use unless the caller says not to).
 */
import postgres from 'postgres';
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../platform/config.ts';
import type { Metrics } from '../platform/metrics.ts';
import { startEmbedded, type EmbeddedCluster } from './embedded.ts';

export { isDatabaseUnavailable, type Db, type Sql, type Tx } from '../platform/database.ts';
import type { Sql, Tx } from '../platform/database.ts';

export interface Database {
  readonly sql: Sql;
  readonly url: string;
  /** True when this process started the embedded cluster (and must stop it). */
  readonly embedded: boolean;
  close(): Promise<void>;
}

export function connect(url: string, max = 10): Sql {
  return postgres(url, {
    max,
    // A database that does not answer fails the request in seconds (503), never holds it for 30.
    connect_timeout: 3,
    onnotice: () => {},
    transform: { column: { from: postgres.toCamel } },
    connection: { application_name: 'flowplan' },
  });
}

/** The embedded cluster's directory under the data directory (absolute). */
export function embeddedClusterDir(dataDir: string): string {
  return path.resolve(dataDir, 'postgres');
}

/** Whether an embedded cluster was ever initialised under the data directory (nothing is created to find out). */
export function embeddedClusterExists(dataDir: string): boolean {
  return existsSync(path.join(embeddedClusterDir(dataDir), 'PG_VERSION'));
}

/** The database asked for is not there, and the caller said not to create it. */
export class DatabaseMissing extends Error {}

export async function openDatabase(
  config: Config,
  onLog?: (line: string) => void,
  /** `create: false`: refuse (DatabaseMissing) rather than initialise an embedded cluster or create its database. */
  options: { create?: boolean } = {},
): Promise<Database> {
  const create = options.create ?? true;
  let cluster: EmbeddedCluster | null = null;
  let url = config.databaseUrl;
  if (!url) {
    if (!create && !embeddedClusterExists(config.dataDir)) {
      throw new DatabaseMissing(`no embedded database in ${embeddedClusterDir(config.dataDir)}`);
    }
    cluster = await startEmbedded(path.resolve(config.dataDir), onLog);
    const admin = postgres(cluster.adminUrl, { max: 1, onnotice: () => {} });
    let missing = false;
    try {
      const [row] = await admin`select 1 as present from pg_database where datname = 'flowplan'`;
      missing = !row && !create;
      if (!row && create)
        await admin`create database flowplan`.catch((error: postgres.PostgresError) => {
          if (error.code !== '42P04') throw error; // duplicate_database: another process created it
        });
    } catch (error) {
      await cluster.stop(); // if this process started it: nothing is left running
      throw error;
    } finally {
      await admin.end();
    }
    if (missing) {
      await cluster.stop();
      throw new DatabaseMissing(
        `the embedded cluster in ${embeddedClusterDir(config.dataDir)} has no database "flowplan"`,
      );
    }
    url = cluster.urlFor('flowplan');
  }
  const sql = connect(url);
  return {
    sql,
    url,
    embedded: cluster !== null,
    close: async () => {
      await sql.end({ timeout: 5 });
      await cluster?.stop();
    },
  };
}

/** Takes an advisory lock until the transaction ends, or says another session holds it (never waits). */
export async function tryTransactionLock(tx: Tx, key: number): Promise<boolean> {
  const [row] = await tx<{ locked: boolean }[]>`select pg_try_advisory_xact_lock(${key}) as locked`;
  return row!.locked;
}

/**
 * Runs `body` in a transaction, again (up to `attempts` times in all) when Postgres ended it as a
 * deadlock's victim (40P01): nothing of a victim's transaction was kept, so running it again is
 * safe. For a statement whose locks cannot be taken in one order with every other writer's.
 */
export async function beginRetryingDeadlocks<T>(
  sql: Sql,
  body: (tx: Tx) => Promise<T>,
  attempts = 3,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return (await sql.begin(body)) as T;
    } catch (error) {
      if (attempt >= attempts || (error as { code?: unknown }).code !== '40P01') throw error;
    }
  }
}

/** Whether the database answers a trivial query within `ms` (an error, or no answer yet, is no). */
export async function databaseAnswers(sql: Sql, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const answered = await Promise.race([
    sql`select 1`.then(
      () => true,
      () => false,
    ),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), ms);
    }),
  ]);
  clearTimeout(timer);
  return answered;
}

/** flowplan's connections to this database (every process), by pool (application name) and state, from pg_stat_activity. */
export function connectionsInUse(
  sql: Sql,
): Promise<{ pool: string; state: string; count: number }[]> {
  return sql<
    { pool: string; state: string; count: number }[]
  >`select application_name as pool, coalesce(state, 'unknown') as state, count(*)::int as count
    from pg_stat_activity where datname = current_database() and application_name like 'flowplan%'
    group by 1, 2`;
}

/** The connections gauge, read from pg_stat_activity when scraped. */
export function registerConnectionMetrics(metrics: Metrics, sql: Sql): void {
  metrics.gaugeByLabels(
    'flowplan_postgres_connections',
    'Connections of every flowplan process to the database, by pool (flowplan: requests, at most 10 per process; flowplan-jobs: pg-boss, 4) and state (active: running a query)',
    ['pool', 'state'],
    async () =>
      (await connectionsInUse(sql)).map(({ pool, state, count }) => ({
        labels: { pool, state },
        value: count,
      })),
  );
}

/**
 * A connection that closes under a running query, in the two places flowplan holds one across
 * queries: a transaction of the pool (db.ts's connect) and the connection pg-boss's schema
 * scripts reserve (jobs.ts). Either then writes ROLLBACK to the closed connection. postgres.js
 * 3.4.9 throws there from a setImmediate, where nothing can catch it, and the process ends
 * (porsager/postgres#1208); with patches/postgres+3.4.9.patch (porsager/postgres#1209) the
 * write rejects with CONNECTION_CLOSED. Without the patch, tap reports the uncaught TypeError.
 */
import pino from 'pino';
import postgres from 'postgres';
import t from 'tap';
import { Metrics } from '../../src/platform/metrics.ts';
import { JOBS_SCHEMA, Jobs } from '../../src/services/jobs/jobs.ts';
import { connect } from '../../src/storage/db.ts';
import { jobsInstalled } from '../../src/storage/jobs.store.ts';
import { createTestDatabase } from '../helpers/database.ts';
import { startPgProxy } from '../helpers/pg-proxy.ts';
import { until } from '../helpers/server.ts';

/** Resolves once a query of this database waits on a lock. */
function lockWaiter(admin: postgres.Sql): Promise<unknown> {
  return until(
    () => admin`select 1 from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock'`,
    (rows) => rows.length > 0,
    10_000,
  );
}

/** Lets the immediates queued by what just settled run (the write of #1208 is one). */
async function afterImmediates(): Promise<void> {
  for (let turn = 0; turn < 3; turn++) await new Promise(setImmediate);
}

t.test(
  'a transaction whose connection closes rejects, the process goes on, the pool reconnects',
  async (t) => {
    const url = await createTestDatabase(t);
    const proxy = await startPgProxy(t, url);
    const admin = postgres(url, { max: 2, onnotice: () => {} });
    t.teardown(() => admin.end());
    // One connection: the query after the close can only run on the one that closed.
    const sql = connect(proxy.url, 1);
    t.teardown(() => sql.end({ timeout: 1 }));

    const holder = await admin.reserve();
    await holder`begin`;
    await holder`select pg_advisory_xact_lock(31)`;
    const transaction = sql.begin((tx) => tx`select pg_advisory_xact_lock(31)`);
    await lockWaiter(admin);
    proxy.cut();
    await t.rejects(transaction, { code: 'CONNECTION_CLOSED' });
    await afterImmediates();
    await holder`rollback`;
    holder.release();

    t.same(await sql`select 1 as one`, [{ one: 1 }], 'the next query runs on a new connection');
  },
);

t.test(
  "pg-boss's schema script fails with the connection it reserved; the process goes on, pg-boss's pool serves",
  async (t) => {
    const url = await createTestDatabase(t, { empty: true });
    const proxy = await startPgProxy(t, url);
    const admin = postgres(url, { max: 2, onnotice: () => {} });
    t.teardown(() => admin.end());
    const sql = connect(url, 1);
    t.teardown(() => sql.end());
    const jobs = new Jobs(proxy.url, sql, pino({ level: 'silent' }), new Metrics(), false);

    // pg-boss's script creates its schema: one created, uncommitted, in another session holds it.
    const holder = await admin.reserve();
    await holder`begin`;
    await holder.unsafe(`create schema ${JOBS_SCHEMA}`);
    const started = jobs.start();
    await lockWaiter(admin);
    proxy.cut();
    await t.rejects(started, { code: 'CONNECTION_CLOSED' });
    await afterImmediates();
    await holder`rollback`;
    holder.release();
    // The server had the whole script before the cut: it runs it once it has the lock.
    await until(() => jobsInstalled(sql), Boolean, 10_000);
    t.ok(
      await jobs.send('after-the-cut', {}),
      'the next job is sent: the closed connection was not handed back to the pool dead',
    );
    await jobs.stop();
  },
);

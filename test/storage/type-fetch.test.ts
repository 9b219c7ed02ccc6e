/**
 * postgres.js 3.4.9 starts each new connection by fetching the array types, and drops the
 * promise of that fetch: when the fetch fails (its query cancelled, the backend terminated,
 * the server gone), the promise rejects with nothing to handle it, and Node ends the process
 * (porsager/postgres#1192, #1205, #1223). With patches/postgres+3.4.9.patch the rejection is
 * handled; the connection's own error path still settles the query that opened it, or opens
 * it again. Without the patch, tap reports the unhandled rejection.
 *
 * A proxy holds the fetch (the first bytes naming pg_catalog.pg_type) away from the server
 * until the test has arranged its failure.
 */
import postgres from 'postgres';
import t, { type Test } from 'tap';
import { connect } from '../../src/storage/db.ts';
import { createTestDatabase } from '../helpers/database.ts';
import { startPgProxy, type PgProxy } from '../helpers/pg-proxy.ts';
import { until } from '../helpers/server.ts';

/** A pool of one connection through a proxy that holds its fetch of the array types; an admin pool beside it. */
async function setup(t: Test): Promise<{ proxy: PgProxy; sql: postgres.Sql; admin: postgres.Sql }> {
  const url = await createTestDatabase(t, { empty: true });
  const proxy = await startPgProxy(t, url, { hold: 'pg_catalog.pg_type' });
  const admin = postgres(url, { max: 2, onnotice: () => {} });
  t.teardown(() => admin.end());
  const sql = connect(proxy.url, 1);
  t.teardown(() => sql.end({ timeout: 1 }));
  return { proxy, sql, admin };
}

/** Runs a query now (postgres.js starts one only when awaited on) and says how it ended. */
function settle<T>(query: Promise<T>): Promise<{ value?: T; error?: { code?: string } }> {
  return query.then(
    (value) => ({ value }),
    (error: { code?: string }) => ({ error }),
  );
}

/** The pool's backend, as the server lists it (application_name flowplan). */
const backend = (admin: postgres.Sql) =>
  admin<{ pid: number }[]>`select pid from pg_stat_activity
    where datname = current_database() and application_name = 'flowplan'`;

/** Lets Node report a rejection nothing handled: it does so once the microtasks run out. */
const nextTurn = () => new Promise(setImmediate);

t.test('the fetch is cancelled: the query that opened the connection fails with it', async (t) => {
  const { proxy, sql, admin } = await setup(t);
  // The fetch waits on a lock, where it can be cancelled. Both admin connections are opened,
  // and the watcher's query run once, first: with pg_type locked, a query needing a type the
  // session has not looked up yet would wait too.
  const holder = await admin.reserve();
  const watcher = await admin.reserve();
  t.teardown(() => {
    holder.release();
    watcher.release();
  });
  const cancelWaiter = () =>
    watcher<{ pid: number; cancelled: boolean }[]>`select pid, pg_cancel_backend(pid) as cancelled
      from pg_stat_activity where datname = current_database()
      and application_name = 'flowplan' and wait_event_type = 'Lock'`;
  await cancelWaiter();
  const opening = settle(sql`select 1 as one`);
  await proxy.held;
  await holder`begin`;
  await holder`lock table pg_catalog.pg_type in access exclusive mode`;
  proxy.release();
  await until(cancelWaiter, (rows) => rows.length === 1, 10_000);
  const { error } = await opening;
  t.equal(error?.code, '57014', "the fetch's cancel fails the query that opened the connection");
  await holder`rollback`;
  await nextTurn();
  t.same(await sql`select 1 as one`, [{ one: 1 }], 'the connection serves the next query');
});

t.test(
  'the backend is terminated during the fetch: the query fails with it, the pool reconnects',
  async (t) => {
    const { proxy, sql, admin } = await setup(t);
    const opening = settle(sql`select 1 as one`);
    await proxy.held;
    const [terminated] = await admin`select pg_terminate_backend(pid) as done
      from pg_stat_activity where datname = current_database() and application_name = 'flowplan'`;
    t.same(terminated, { done: true }, 'the backend fetching the types is terminated');
    const outcome = await opening;
    // 3.4.9 reconnects, then hands the old backend's 57P01 to the query (porsager/postgres#1223);
    // a release that runs the query on the new connection instead is as good.
    t.ok(
      outcome.error?.code === '57P01' || outcome.value !== undefined,
      `the query fails with the termination, or runs on the new connection: ${outcome.error?.code ?? 'ran'}`,
    );
    await nextTurn();
    t.same(await sql`select 1 as one`, [{ one: 1 }], 'the next query runs');
    t.equal((await backend(admin)).length, 1, 'on one new backend');
  },
);

t.test(
  'a reserved connection whose backend is terminated during the fetch: the reserve fails with it, the pool serves',
  async (t) => {
    const { proxy, sql, admin } = await setup(t);
    const reserving = settle(sql.reserve());
    await proxy.held;
    await admin`select pg_terminate_backend(pid) from pg_stat_activity
      where datname = current_database() and application_name = 'flowplan'`;
    const outcome = await reserving;
    // As above: the pool opens the connection again for the reserve, which then gets the old
    // backend's 57P01 (porsager/postgres#1223), or, in a release without that, the connection.
    t.ok(
      outcome.error?.code === '57P01' || outcome.value !== undefined,
      `the reserve fails with the termination, or is served: ${outcome.error?.code ?? 'served'}`,
    );
    outcome.value?.release();
    await nextTurn();
    const reserved = await sql.reserve();
    t.same(await reserved`select 1 as one`, [{ one: 1 }], 'the next reserve is served');
    reserved.release();
  },
);

t.test('the server goes away during the fetch: the query fails, the process goes on', async (t) => {
  const { proxy, sql } = await setup(t);
  const opening = settle(sql`select 1 as one`);
  await proxy.held;
  proxy.stop();
  const { error } = await opening;
  t.equal(error?.code, 'ECONNREFUSED', 'the reconnect is refused, and the query says so');
  await nextTurn();
});

/**
 * `npm run bench:event-positions`: sql/0029 and 0030 (feed positions numbered per workspace, and
 * the old events' backfill) on a database whose event log holds EVENTS drained events (default
 * 1,000,000, over 10 workspaces, today's partition), while a writer inserts events as commands
 * do the whole time. Reports each migration's duration and the writer's slowest insert during
 * it: how long the log was blocked. Prints one JSON line: { name, machine, events, migrations:
 * [{ name, seconds, writes, writerMaxMs, writerP99Ms }] }.
 */
import postgres from 'postgres';
import { listMigrations, migrate } from '../src/storage/migrate.ts';
import { benchDatabase, machine, migrationUnderWrites } from './support.ts';

const EVENTS = Number(process.env.EVENTS ?? 1_000_000);
const PER_WORKSPACE = 29;

const database = await benchDatabase('event-positions');
const sql = postgres(database.url, { max: 4, onnotice: () => {} });
try {
  const all = listMigrations();
  await migrate(
    sql,
    all.filter((m) => m.version < PER_WORKSPACE),
  );
  await sql`insert into workspaces (id, name, plan, seats)
    select 'ws_' || w, 'Workspace ' || w, 'pro', 10 from generate_series(1, 10) w`;
  await sql`insert into outbox (workspace_id, flow_id, type, data, processed_at, position)
    select 'ws_' || (1 + n % 10), 'flw_' || (n % 1000), 'task.updated',
      jsonb_build_object('flowId', 'flw_' || (n % 1000), 'taskId', 'tsk_' || n, 'changes', jsonb_build_array('progress')),
      now(), n
    from generate_series(1, ${EVENTS}) n`;
  await sql`vacuum analyze outbox`;

  const runs = [];
  for (const migration of all.filter((m) => m.version >= PER_WORKSPACE && m.version <= 30)) {
    runs.push(
      await migrationUnderWrites(
        sql,
        database.url,
        migration,
        (writer) => writer`insert into outbox (workspace_id, flow_id, type, data)
          values ('ws_1', 'flw_1', 'task.updated', '{"flowId":"flw_1","taskId":"tsk_x","changes":["progress"]}')`,
      ),
    );
  }
  const [{ missing }] = await sql<[{ missing: number }]>`select count(*)::int as missing from outbox
    where position is not null and seq is distinct from position`;
  console.log(
    JSON.stringify({
      name: 'event-positions',
      machine: machine(),
      events: EVENTS,
      backfilled: missing === 0,
      migrations: runs,
    }),
  );
} finally {
  await sql.end();
  await database.drop();
}

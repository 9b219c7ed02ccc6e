/**
 * `npm run bench:workspace-keys`: the migrations that give tenant tables workspace_id
 * (sql/0025–0028) on a database holding TASKS tasks (default 1,000,000: 1,000 flows of 1,000
 * tasks, each depending on the one before, a comment on every tenth), while a writer updates
 * random tasks by id the whole time, as transitions would. Reports each migration's duration
 * and the writer's slowest update during each: how long a busy table was blocked.
 * Prints one JSON line: { name, machine, tasks, migrations: [{ name, seconds, writes,
 * writerMaxMs, writerP99Ms }] }.
 */
import postgres from 'postgres';
import { listMigrations, migrate } from '../src/storage/migrate.ts';
import { benchDatabase, machine, migrationUnderWrites } from './support.ts';

const TASKS = Number(process.env.TASKS ?? 1_000_000);
const PER_FLOW = 1000;
const FLOWS = Math.max(1, Math.round(TASKS / PER_FLOW));
const FIRST = 25;

const database = await benchDatabase('workspace-keys');
const sql = postgres(database.url, { max: 4, onnotice: () => {} });
try {
  const all = listMigrations();
  await migrate(
    sql,
    all.filter((m) => m.version < FIRST),
  );
  await sql`insert into workspaces (id, name, plan, seats)
    select 'ws_' || w, 'Workspace ' || w, 'pro', 10 from generate_series(1, 10) w`;
  await sql`insert into flows (id, workspace_id, name)
    select 'flw_' || f, 'ws_' || (1 + f % 10), 'Flow ' || f from generate_series(1, ${FLOWS}) f`;
  await sql`insert into tasks (id, flow_id, name, position)
    select 'tsk_' || f || '_' || t, 'flw_' || f, 'Task ' || t, t
    from generate_series(1, ${FLOWS}) f, generate_series(1, ${PER_FLOW}) t`;
  await sql`insert into task_dependencies (flow_id, task_id, depends_on_id)
    select 'flw_' || f, 'tsk_' || f || '_' || t, 'tsk_' || f || '_' || (t - 1)
    from generate_series(1, ${FLOWS}) f, generate_series(2, ${PER_FLOW}) t`;
  await sql`insert into comments (id, task_id, flow_id, author_id, body)
    select 'cmt_' || f || '_' || t, 'tsk_' || f || '_' || t, 'flw_' || f, 'usr_1', 'note'
    from generate_series(1, ${FLOWS}) f, generate_series(1, ${PER_FLOW}, 10) t`;
  await sql`vacuum analyze`;

  const runs = [];
  for (const migration of all.filter((m) => m.version >= FIRST && m.version <= 28)) {
    runs.push(
      await migrationUnderWrites(sql, database.url, migration, (writer) => {
        const f = 1 + Math.floor(Math.random() * FLOWS);
        const t = 1 + Math.floor(Math.random() * PER_FLOW);
        return writer`update tasks set progress = 1, updated_at = now() where id = ${`tsk_${f}_${t}`}`;
      }),
    );
  }
  console.log(
    JSON.stringify({ name: 'workspace-keys', machine: machine(), tasks: TASKS, migrations: runs }),
  );
} finally {
  await sql.end();
  await database.drop();
}

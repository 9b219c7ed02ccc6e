/**
 * The routability check (routable.ts) on statements written for it: what pins a distributed
 * table to one workspace (a value, a join on workspace_id with a pinned table, an outer
 * query's pinned table, an insert naming the column) and what does not (another column, an
 * OR, an outer join's condition, an IN of a subquery).
 */
import t from 'tap';
import { checkStatement, loadParser } from './routable.ts';

const distributed = new Set(['tasks', 'flows', 'comments']);
const unpinned = (statement: string) => checkStatement(statement, distributed).unpinned;

t.before(loadParser);

t.test('pinned by a value, a join or an outer query', async (t) => {
  for (const statement of [
    'select * from tasks where flow_id = $1 and workspace_id = $2',
    'select * from tasks where workspace_id = any($1) and id = $2',
    "select * from tasks where workspace_id = 'ws_1'",
    'select * from tasks t join flows f on f.id = t.flow_id and f.workspace_id = t.workspace_id where f.workspace_id = $1',
    'select * from tasks t, flows f where (t.workspace_id, t.flow_id) = (f.workspace_id, f.id) and f.workspace_id = $1',
    'select (select count(*) from comments c where c.workspace_id = t.workspace_id) from tasks t where t.workspace_id = $1',
    'with x as (select * from tasks where workspace_id = $1) select * from x',
    'insert into tasks (id, flow_id, workspace_id) values ($1, $2, $3) on conflict do nothing',
    'update tasks set name = $1 where id = $2 and workspace_id = $3',
    'delete from comments c using tasks t where t.id = c.task_id and t.workspace_id = $1 and c.workspace_id = t.workspace_id',
    'SELECT 1 FROM ONLY "public"."tasks" x WHERE "id" OPERATOR(pg_catalog.=) $1 AND "workspace_id" OPERATOR(pg_catalog.=) $2 FOR KEY SHARE OF x',
    'select * from users where id = $1',
    'begin',
  ])
    t.strictSame(unpinned(statement), [], statement);
});

t.test('not pinned', async (t) => {
  const cases: [string, string[]][] = [
    ['select * from tasks where flow_id = $1', ['tasks']],
    ['select * from tasks t join flows f on f.id = t.flow_id where f.workspace_id = $1', ['tasks']],
    ['select * from tasks where workspace_id = $1 or id = $2', ['tasks']],
    [
      'select * from flows f left join tasks t on t.workspace_id = f.workspace_id where f.workspace_id = $1',
      ['tasks'],
    ],
    ['select * from tasks where workspace_id in (select id from workspaces)', ['tasks']],
    ['insert into tasks (id, flow_id) values ($1, $2)', ['tasks']],
    ['update tasks set name = $1 where id = $2', ['tasks']],
    ['select count(*) from comments', ['comments']],
    [
      'select * from tasks t where t.workspace_id = $1 and exists (select 1 from comments c where c.task_id = t.id)',
      ['comments'],
    ],
  ];
  for (const [statement, tables] of cases) t.strictSame(unpinned(statement), tables, statement);
});

t.test('statements differing in values and layout share a fingerprint', async (t) => {
  const a = checkStatement('select * from tasks where id = $1', distributed);
  const b = checkStatement('SELECT *\n  FROM tasks WHERE id = 42', distributed);
  t.equal(a.fingerprint, b.fingerprint);
});

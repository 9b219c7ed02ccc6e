/**
 * The schema a Citus cluster distributed by workspace needs (issue 36), read from the catalog
 * of a migrated database: every table is named in exactly one list of sql/distribution.json;
 * a distributed table has workspace_id, not null, in its primary key and in every unique
 * index; a foreign key between distributed tables includes workspace_id on both sides; no
 * distributed table points at a coordinator-only table, and no reference table at a
 * distributed one.
 */
import t from 'tap';
import postgres from 'postgres';
import { createTestDatabase } from '../helpers/database.ts';
import { readDistribution } from './statements.ts';

const distribution = readDistribution();
const lists = {
  distributed: distribution.distributed.map((entry) => entry.table),
  reference: distribution.reference.map((entry) => entry.table),
  coordinator: distribution.coordinator.map((entry) => entry.table),
};
const placeOf = new Map<string, keyof typeof lists>();
for (const [place, tables] of Object.entries(lists) as [keyof typeof lists, string[]][])
  for (const table of tables) placeOf.set(table, place);

t.test('every entry says why, and no table is in two lists', async (t) => {
  const all = [...distribution.distributed, ...distribution.reference, ...distribution.coordinator];
  t.same(
    all.filter((entry) => entry.why.trim().length < 10).map((entry) => entry.table),
    [],
    'each entry gives its reason',
  );
  const names = all.map((entry) => entry.table);
  t.same(
    names.filter((name, i) => names.indexOf(name) !== i),
    [],
    'no table named twice',
  );
});

t.test('the catalog agrees with sql/distribution.json', async (t) => {
  const sql = postgres(await createTestDatabase(t), { max: 1, onnotice: () => {} });
  t.teardown(() => sql.end());

  // Tables of public by name, those of another schema (pg-boss's) as `schema.*`; partitions
  // go with their parent.
  const tables = await sql<{ schema: string; name: string }[]>`
    select n.nspname as schema, c.relname as name from pg_class c
    join pg_namespace n on n.oid = c.relnamespace
    where c.relkind in ('r', 'p') and not c.relispartition
      and n.nspname not in ('pg_catalog', 'information_schema') and n.nspname not like 'pg_toast%'`;
  const named = new Set(
    tables.map((table) => (table.schema === 'public' ? table.name : `${table.schema}.*`)),
  );
  t.same(
    [...named].filter((name) => !placeOf.has(name)).sort(),
    [],
    'every table is in one list of sql/distribution.json',
  );
  t.same(
    [...placeOf.keys()].filter((name) => !named.has(name)).sort(),
    [],
    'every table the lists name exists',
  );

  const columns = await sql<{ table: string; notNull: boolean }[]>`
    select c.relname as table, a.attnotnull as "notNull" from pg_attribute a
    join pg_class c on c.oid = a.attrelid join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'public' and a.attname = 'workspace_id' and not a.attisdropped
      and c.relkind in ('r', 'p')`;
  const hasColumn = new Map(columns.map((column) => [column.table, column.notNull]));
  t.same(
    lists.distributed.filter((table) => hasColumn.get(table) !== true),
    [],
    'every distributed table has workspace_id, not null',
  );

  // Primary keys and every unique index (constraint or not), with whether workspace_id is in it.
  const uniques = await sql<{ table: string; index: string; primary: boolean; keyed: boolean }[]>`
    select c.relname as table, i.relname as index, x.indisprimary as primary,
      exists (select 1 from unnest(x.indkey) k join pg_attribute a
              on a.attrelid = x.indrelid and a.attnum = k where a.attname = 'workspace_id') as keyed
    from pg_index x join pg_class c on c.oid = x.indrelid join pg_class i on i.oid = x.indexrelid
    join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = 'public' and x.indisunique and not c.relispartition`;
  const distributed = new Set(lists.distributed);
  t.same(
    lists.distributed.filter(
      (table) => !uniques.some((index) => index.table === table && index.primary),
    ),
    [],
    'every distributed table has a primary key',
  );
  t.same(
    uniques
      .filter((index) => distributed.has(index.table) && !index.keyed)
      .map((index) => `${index.table}: ${index.index}`)
      .sort(),
    [],
    'workspace_id is in every primary key and unique index of a distributed table',
  );

  const keys = await sql<{ name: string; from: string; to: string; both: boolean }[]>`
    select k.conname as name, f.relname as "from", r.relname as "to",
      exists (select 1 from unnest(k.conkey, k.confkey) as p(a, b)
              join pg_attribute fa on fa.attrelid = k.conrelid and fa.attnum = p.a
              join pg_attribute ra on ra.attrelid = k.confrelid and ra.attnum = p.b
              where fa.attname = 'workspace_id' and ra.attname = 'workspace_id') as both
    from pg_constraint k join pg_class f on f.oid = k.conrelid join pg_class r on r.oid = k.confrelid
    join pg_namespace n on n.oid = f.relnamespace
    where k.contype = 'f' and n.nspname = 'public' and not f.relispartition and k.conparentid = 0`;
  t.same(
    keys
      .filter((key) => distributed.has(key.from) && distributed.has(key.to) && !key.both)
      .map((key) => `${key.from}.${key.name}`)
      .sort(),
    [],
    'a foreign key between distributed tables joins workspace_id to workspace_id',
  );
  t.same(
    keys
      .filter((key) => distributed.has(key.from) && placeOf.get(key.to) === 'coordinator')
      .map((key) => `${key.from}.${key.name}`),
    [],
    'no distributed table refers to a coordinator-only table',
  );
  t.same(
    keys
      .filter((key) => placeOf.get(key.from) === 'reference' && distributed.has(key.to))
      .map((key) => `${key.from}.${key.name}`),
    [],
    'no reference table refers to a distributed table',
  );
});

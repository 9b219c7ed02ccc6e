/**
 * Batched migrations (`-- flowplan:batched`, src/storage/migrate.ts): each statement runs on
 * its own, repeated until it changes no row, outside a transaction (so `create index
 * concurrently` runs), once per database even with two migrators at once; a transactional
 * migration after it sees its work.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { connect } from '../../src/storage/db.ts';
import { batchStatements, listMigrations, migrate } from '../../src/storage/migrate.ts';
import { createTestDatabase } from '../helpers/database.ts';

t.test('statements split at a semicolon ending a line, comments left out', async (t) => {
  t.strictSame(
    batchStatements(
      '-- flowplan:batched\n-- why\nselect 1;\nupdate x\n  set y = 1;\ncreate index i on x (y)\n',
    ),
    ['select 1', 'update x\n  set y = 1', 'create index i on x (y)'],
  );
});

t.test(
  'a batched file fills every row in batches, once, beside a concurrent migrator',
  async (t) => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'flowplan-batched-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(
      path.join(dir, '0001_rows.sql'),
      'create table rows (id int primary key, filled int);\ninsert into rows select g, null from generate_series(1, 2500) g;\n',
    );
    writeFileSync(
      path.join(dir, '0002_fill.sql'),
      [
        '-- flowplan:batched',
        'create index concurrently if not exists rows_to_fill on rows (id) where filled is null;',
        'update rows set filled = id * 2 where id in (select id from rows where filled is null limit 1000);',
        '',
      ].join('\n'),
    );
    writeFileSync(
      path.join(dir, '0003_after.sql'),
      'alter table rows alter column filled set not null;\ndrop index rows_to_fill;\n',
    );
    const url = await createTestDatabase(t, { empty: true });
    const a = connect(url, 2);
    const b = connect(url, 2);
    t.teardown(async () => {
      await a.end();
      await b.end();
    });
    const files = listMigrations(`${dir}/`);
    const [first, second] = await Promise.all([migrate(a, files), migrate(b, files)]);
    t.strictSame(
      [...first, ...second].sort(),
      ['0001_rows.sql', '0002_fill.sql', '0003_after.sql'],
      'each file applied once between the two',
    );
    const [row] = await a<{ missing: number; wrong: number }[]>`select
      count(*) filter (where filled is null)::int as missing,
      count(*) filter (where filled <> id * 2)::int as wrong from rows`;
    t.strictSame(row, { missing: 0, wrong: 0 }, 'every row filled');
    t.strictSame(await migrate(a, files), [], 'nothing left to apply');
  },
);

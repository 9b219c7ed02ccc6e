/**
 * A backup of a running instance, restored and served: while a flowplan process writes, an
 * online base backup is taken (pg_backup_start, a copy of the data directory, pg_backup_stop
 * with its backup label, and the WAL written meanwhile), the copy is started as a second
 * cluster, and a flowplan process on it serves every change acknowledged before the backup
 * began. (pg_dump would be the everyday tool; this machine has no pg_dump of the embedded
 * server's version, 18, so the test takes the physical route Postgres ships with the server.)
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import postgres from 'postgres';
import t from 'tap';
import { startApp } from '../../src/compose.ts';
import { loadConfig } from '../../src/platform/config.ts';
import { freePort, startEmbedded } from '../../src/storage/embedded.ts';
import { item, request } from '../helpers/server.ts';
import type { Flow } from '../helpers/wire.ts';

t.test('an online backup restores to a cluster that serves what was acknowledged', async (t) => {
  const root = path.resolve('.flowplan', 'test', `backup-${process.pid}`);
  const copy = `${root}-restored`;
  const live = await startEmbedded(root);
  t.teardown(async () => {
    await live.stop();
    rmSync(root, { recursive: true, force: true });
  });
  const app = await startApp(
    loadConfig({ LOG_LEVEL: 'silent' }, { port: 0, databaseUrl: live.adminUrl }),
  );
  t.teardown(() => app.close());
  const key = app.demo!.key;
  const flow = (
    await request<Flow>(app.url, 'POST', '/v1/flows', {
      token: key,
      body: { name: 'Backed up', tasks: [{ name: 'A' }, { name: 'B', after: [0] }] },
    })
  ).body;
  const started = await request(
    app.url,
    'POST',
    `/v1/flows/${flow.id}/tasks/${item(flow.tasks).id}/start`,
    { token: key },
  );
  t.equal(started.status, 200, 'acknowledged before the backup');

  // Writes go on while the backup runs.
  let writing = true;
  const writer = (async () => {
    for (let i = 0; writing; i++)
      await request(app.url, 'POST', '/v1/flows', {
        token: key,
        body: { name: `During ${i}`, tasks: [] },
      });
  })();

  // One connection: pg_backup_stop must run in the session that called pg_backup_start.
  const admin = postgres(live.adminUrl, { max: 1, onnotice: () => {} });
  const [{ dataDir }] = await admin<
    [{ dataDir: string }]
  >`select current_setting('data_directory') as "dataDir"`;
  await admin`select pg_backup_start('flowplan test', true)`;
  rmSync(copy, { recursive: true, force: true });
  execFileSync('cp', ['-a', root, copy]);
  const [stop] = await admin<
    { labelfile: string; spcmapfile: string }[]
  >`select labelfile, spcmapfile from pg_backup_stop(false)`;
  // The WAL written up to the end of the backup, so the copy can be made consistent.
  const copyData = path.join(copy, path.relative(root, dataDir));
  execFileSync('cp', ['-a', `${dataDir}/pg_wal/.`, `${copyData}/pg_wal/`]);
  writing = false;
  await writer;
  await admin.end();
  t.teardown(() => rmSync(copy, { recursive: true, force: true }));

  rmSync(path.join(copyData, 'postmaster.pid'), { force: true });
  writeFileSync(path.join(copyData, 'backup_label'), stop!.labelfile);
  if (stop!.spcmapfile) writeFileSync(path.join(copyData, 'tablespace_map'), stop!.spcmapfile);
  execFileSync('chown', [
    '--reference',
    path.join(copyData, 'PG_VERSION'),
    path.join(copyData, 'backup_label'),
  ]);
  const info = JSON.parse(readFileSync(path.join(copy, 'postgres.json'), 'utf8')) as {
    port: number;
  };
  writeFileSync(
    path.join(copy, 'postgres.json'),
    JSON.stringify({ ...info, port: await freePort() }),
  );

  const restored = await startEmbedded(copy);
  t.teardown(() => restored.stop());
  const served = await startApp(
    loadConfig({ LOG_LEVEL: 'silent' }, { port: 0, databaseUrl: restored.adminUrl }),
  );
  t.teardown(() => served.close());
  const back = await request<Flow>(served.url, 'GET', `/v1/flows/${flow.id}`, { token: key });
  t.equal(back.status, 200, 'the restored cluster serves the flow, with the same key');
  t.equal(
    item(back.body.tasks).status,
    'in_progress',
    'and the transition acknowledged before the backup',
  );
  t.equal(back.body.tasks[1]?.status, 'blocked');
  const change = await request(
    served.url,
    'POST',
    `/v1/flows/${flow.id}/tasks/${item(flow.tasks).id}/complete`,
    { token: key },
  );
  t.equal(change.status, 200, 'and takes new changes');
});

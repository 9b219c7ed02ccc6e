/**
 * The production build (`npm run build`) run the way production runs it: plain `node` on the
 * emitted JavaScript, no TypeScript loader (NODE_OPTIONS cleared), on a database it migrates
 * itself from the built tree's sql/. Built once into a tree of its own under .flowplan/test
 * (dist/, bin/ and package.json, as the container has them), so the checkout's dist/ is
 * never touched.
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { freePort } from '../../src/storage/embedded.ts';
import { createTestDatabase } from '../helpers/database.ts';
import { bannerKey, operatorEnv, run, startServer } from '../helpers/process.ts';
import { uwsLoads } from '../helpers/uws.ts';
import { request, until } from '../helpers/server.ts';
import type { Completed, Flow, Task, WorkList } from '../helpers/wire.ts';

const tree = path.resolve('.flowplan', 'test', `build-${process.pid}`);
const dist = path.join(tree, 'dist');

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? files(full) : [full];
  });
}

t.before(async () => {
  rmSync(tree, { recursive: true, force: true });
  mkdirSync(path.join(tree, 'bin'), { recursive: true });
  copyFileSync('package.json', path.join(tree, 'package.json'));
  copyFileSync('bin/flowplan.js', path.join(tree, 'bin', 'flowplan.js'));
  const built = await run('npm', ['run', 'build', '--', '--out-dir', dist]);
  if (built.code !== 0)
    throw new Error(`npm run build failed (${built.code})\n${built.stdout}\n${built.stderr}`);
});
t.teardown(() => rmSync(tree, { recursive: true, force: true }));

t.test(
  'the build emits JavaScript only, with the assets and workers beside it, and nothing that needs tsx',
  async (t) => {
    const emitted = files(dist).map((file) => path.relative(dist, file));
    for (const entry of [
      'src/main.js',
      'src/cli/main.js',
      'workers/recompute.worker.js',
      'workers/render.worker.js',
      'src/web/http/assets/flowplan.css',
      'src/web/app/copy.js',
      'sql/0001_init.sql',
    ]) {
      t.ok(emitted.includes(entry), `${entry} is in the build`);
    }
    t.same(
      emitted.filter((file) => file.endsWith('.ts')),
      [],
      'no TypeScript in the build',
    );
    const sql = readdirSync('sql').filter((file) => file.endsWith('.sql'));
    t.same(readdirSync(path.join(dist, 'sql')).sort(), sql.sort(), 'every migration is copied');
    const usesTsx = emitted
      .filter((file) => file.endsWith('.js'))
      .filter((file) =>
        /\b(from\s*|import\s*\(\s*)['"]tsx(\/[^'"]*)?['"]/.test(
          readFileSync(path.join(dist, file), 'utf8'),
        ),
      );
    t.same(usesTsx, [], 'no built module imports tsx (a devDependency)');
  },
);

t.test(
  'the built CLI and server: migrate, start, a flow through HTTP, a recompute on the pool',
  async (t) => {
    const databaseUrl = await createTestDatabase(t, { empty: true });
    const cliEnv = operatorEnv({ DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' });

    const migrated = await run(
      process.execPath,
      [path.join(tree, 'bin', 'flowplan.js'), 'migrate', '--json'],
      { env: cliEnv },
    );
    t.equal(migrated.code, 0, `flowplan migrate exits 0 ${migrated.stderr}`);
    t.match(
      migrated.stderr,
      /^flowplan: database postgres:\/\/\S+ \(DATABASE_URL\)\n$/,
      'stderr only names the database',
    );
    const sql = readdirSync('sql')
      .filter((file) => file.endsWith('.sql'))
      .sort();
    t.same(
      JSON.parse(migrated.stdout),
      { applied: sql },
      'the built CLI applies every migration from the built tree',
    );

    const port = await freePort();
    const metricsPort = await freePort();
    const server = await startServer(t, process.execPath, [path.join(dist, 'src', 'main.js')], {
      port,
      env: operatorEnv({
        DATABASE_URL: databaseUrl,
        PORT: String(port),
        HOST: '127.0.0.1',
        METRICS_PORT: String(metricsPort),
        NODE_ENV: 'production',
        // Flows of two tasks or more are recomputed on the pool: the built worker must run.
        OFFLOAD_TASKS: '2',
        WORKERS: '1',
        LOG_LEVEL: 'info',
      }),
    });
    t.match(server.stdout(), `flowplan is running at ${server.base}`, 'banner printed');
    // The one warning a start may log: no uWS build loads here, so it serves on node:http.
    const warnings = server
      .stdout()
      .split('\n')
      .filter((line) => /"level":(40|50|60)/.test(line))
      .map((line) => (JSON.parse(line) as { msg: string }).msg);
    t.equal(
      warnings.length,
      uwsLoads ? 0 : 1,
      `no warning or error logged at start but the transport fallback, where uWS cannot load: ${warnings.join(' | ')}`,
    );
    if (!uwsLoads)
      t.match(
        warnings[0],
        /^http transport: serving on node:http, since uWebSockets\.js cannot load here: \S/,
      );
    // As `npm run start:prod` and the container start it: no demo, no secret printed; the built CLI makes the first workspace and key.
    t.equal(
      bannerKey(server.stdout()),
      undefined,
      'no admin key in the output of a production start',
    );
    t.match(server.stdout(), /The database has no workspace/);
    const built = (args: string[]) =>
      run(process.execPath, [path.join(tree, 'bin', 'flowplan.js'), ...args, '--json'], {
        env: cliEnv,
      });
    const workspace = JSON.parse(
      (await built(['workspace', 'create', '--name', 'Launch team'])).stdout,
    ) as { id: string };
    const { key } = JSON.parse(
      (
        await built([
          'key',
          'create',
          '--workspace',
          workspace.id,
          '--role',
          'admin',
          '--scopes',
          'all',
        ])
      ).stdout,
    ) as { key: string };
    const api = <T = unknown>(method: string, route: string, body?: unknown) =>
      request<T>(server.base, method, route, { token: key, body });

    t.equal((await request(server.base, 'GET', '/healthz')).status, 200, '/healthz 200');
    t.equal((await request(server.base, 'GET', '/readyz')).status, 200, '/readyz 200');

    const flow = await api<Flow>('POST', '/v1/flows', { name: 'Launch' });
    t.equal(flow.status, 201, 'flow created');
    const design = await api<Task>('POST', `/v1/flows/${flow.body.id}/tasks`, { name: 'Design' });
    t.equal(design.status, 201, 'first task');
    const build = await api<Task>('POST', `/v1/flows/${flow.body.id}/tasks`, { name: 'Build' });
    t.equal(build.status, 201, 'second task: a flow of two tasks, recomputed on the pool');
    const dependency = await api<Task>(
      'POST',
      `/v1/flows/${flow.body.id}/tasks/${build.body.id}/dependencies`,
      { taskId: design.body.id },
    );
    t.equal(dependency.status, 200, 'dependency added (recomputed on the pool)');
    t.equal(dependency.body.status, 'blocked', 'Build waits on Design');

    const started = await api<Task>(
      'POST',
      `/v1/flows/${flow.body.id}/tasks/${design.body.id}/start`,
    );
    t.equal(started.status, 200, 'Design started');
    t.equal(started.body.status, 'in_progress');
    const completed = await api<Completed>(
      'POST',
      `/v1/flows/${flow.body.id}/tasks/${design.body.id}/complete`,
    );
    t.equal(completed.status, 200, 'Design completed');
    t.same(
      completed.body.unblocked.map((task: { id: string }) => task.id),
      [build.body.id],
      'completing Design unblocks Build',
    );

    const available = await api<WorkList>('GET', '/v1/work/available');
    t.equal(available.status, 200, 'work view');
    t.same(
      available.body.items.map((item: { taskId: string }) => item.taskId),
      [build.body.id],
      'Build is available work',
    );

    const pooled = await until(
      async () => (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text(),
      (text) => /flowplan_recompute_duration_seconds_count\{where="pool"\} [1-9]/.test(text),
      10_000,
    );
    t.match(pooled, /^flowplan_pool_failed_runs 0$/m, 'no pool run failed');

    const stopped = await server.stop();
    t.equal(stopped.code, 0, 'SIGTERM: exits 0');
    t.equal(existsSync(path.join(tree, 'src')), false, 'the tree held no sources');
  },
);

/**
 * test/run.ts leaves nothing behind however it is stopped: Ctrl-C (SIGINT to its whole process
 * group, Postgres included, as a terminal sends it) or a SIGTERM to it alone (as CI or `timeout`
 * sends one). Each case runs test/run.ts in a project of its own, on a test file that waits to
 * be stopped, and stops it once that file runs (so its cluster is up): the run ends with the
 * signal's status, its cluster directory is gone, and no process of the run survives.
 */
import { spawn } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { TEMPLATE_ENV } from './helpers/database.ts';
import { until } from './helpers/server.ts';

const RUN = path.resolve('test/run.ts');

const WAITS = `import { writeFileSync } from 'node:fs';
import t from 'tap';
t.test('waits to be stopped', () => new Promise(() => {
  writeFileSync('running', '');
  setInterval(() => {}, 60_000);
}));
`;

/** A project with this repository's .taprc and packages, and one test file that never ends. */
function project(): string {
  const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'flowplan-run-')));
  chmodSync(dir, 0o755); // as root, the embedded Postgres runs as the postgres account
  copyFileSync('.taprc', path.join(dir, '.taprc'));
  symlinkSync(realpathSync('node_modules'), path.join(dir, 'node_modules'));
  mkdirSync(path.join(dir, 'test'));
  writeFileSync(path.join(dir, 'test/waits.test.ts'), WAITS);
  return dir;
}

/** This process's environment without what would tie the inner run to this one: its database, tap's settings and loaders. */
function standalone(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (/^(TAP|_TAPJS)|^(NODE_OPTIONS|NODE_V8_COVERAGE|DATABASE_URL)$/.test(name)) continue;
    if (name === TEMPLATE_ENV) continue;
    env[name] = value;
  }
  return env;
}

/** Whether the process `pid` is still there. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The processes working in `dir` (test/run.ts, tap, the test file, Postgres in its data directory). */
function processesIn(dir: string): number[] {
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return `${readlinkSync(`/proc/${pid}/cwd`)}/`.startsWith(`${dir}/`);
      } catch {
        return false; // gone meanwhile
      }
    })
    .map(Number);
}

for (const [how, signal, status, stop] of [
  [
    'Ctrl-C (SIGINT to the process group)',
    'SIGINT',
    130,
    (pid: number) => process.kill(-pid, 'SIGINT'),
  ],
  ['SIGTERM to test/run.ts alone', 'SIGTERM', 143, (pid: number) => process.kill(pid, 'SIGTERM')],
] as const) {
  t.test(`stopped by ${how}: cluster stopped and removed`, async (t) => {
    const dir = project();
    t.teardown(() => {
      for (const left of processesIn(dir)) process.kill(left, 'SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    });
    // Its own process group, as a command run from a shell has: a signal to the group reaches
    // test/run.ts and Postgres, and nothing of this test.
    const child = spawn(process.execPath, ['--import', 'tsx', RUN, 'test/waits.test.ts'], {
      cwd: dir,
      env: standalone(),
      detached: true,
    });
    const pid = child.pid;
    if (pid === undefined) throw new Error('test/run.ts did not start');
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    let ended: { code: number | null; signal: NodeJS.Signals | null } | null = null;
    const exited = new Promise<void>((resolve) =>
      child.on('exit', (code, signal) => {
        ended = { code, signal };
        resolve();
      }),
    );

    await until(
      async () => ended !== null || existsSync(path.join(dir, 'running')),
      Boolean,
      180_000,
    );
    t.equal(ended, null, 'the test file runs', { output });
    if (ended) return;
    const clusterDir = path.join(dir, '.flowplan/test', String(pid));
    const postmaster = Number(
      readFileSync(path.join(clusterDir, 'postgres/postmaster.pid'), 'utf8').split('\n')[0],
    );
    t.ok(alive(postmaster), 'its Postgres runs in .flowplan/test/<pid>');

    stop(pid);
    await exited;
    t.same(ended, { code: status, signal: null }, `ended with status ${status} (${signal})`, {
      output,
    });
    t.notOk(existsSync(clusterDir), 'the cluster directory is removed');
    await until(
      async () => processesIn(dir),
      (left) => left.length === 0,
      30_000,
    );
    t.pass('no process of the run survives: tap, the test file, Postgres');
  });
}

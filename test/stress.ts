/**
 * `npm run test:stress`: the whole suite twice at once on this machine, three rounds in a row
 * (STRESS_ROUNDS to change it); exits 0 only if every run passed. Each copy runs in a checkout of
 * its own (this working tree copied, node_modules shared) with its own embedded cluster, so the
 * two compete only for the machine: a test that passes only on an idle machine fails here.
 * Logs go to .flowplan/stress/; the summary names every failing file of every run.
 */
import { spawn, execFileSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  createWriteStream,
} from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve('.');
const OUT = path.join(ROOT, '.flowplan', 'stress');
const ROUNDS = Number(process.env.STRESS_ROUNDS ?? 3);
const COPIES = 2;

/** A copy of this working tree (tracked and new files, not ignored ones) sharing node_modules. */
function checkout(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  const files = execFileSync(
    'git',
    ['ls-files', '--cached', '--others', '--exclude-standard', '-z'],
    { cwd: ROOT },
  )
    .toString()
    .split('\0')
    .filter((file) => file && existsSync(path.join(ROOT, file)));
  for (const file of files) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    cpSync(path.join(ROOT, file), path.join(dir, file));
  }
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
}

function runSuite(dir: string, log: string): Promise<{ code: number; seconds: number }> {
  const started = Date.now();
  const out = createWriteStream(log);
  const child = spawn('npm', ['test'], { cwd: dir, env: { ...process.env, FORCE_COLOR: '0' } });
  child.stdout.pipe(out);
  child.stderr.pipe(out);
  return new Promise((resolve) =>
    child.on('exit', (code) =>
      resolve({ code: code ?? 1, seconds: Math.round((Date.now() - started) / 1000) }),
    ),
  );
}

/** Test files of a finished run with a failed assertion (from tap's per-file results). */
function failedFiles(dir: string): string[] {
  const results = path.join(dir, '.tap', 'test-results');
  if (!existsSync(results)) return ['(no results)'];
  const failed: string[] = [];
  const walk = (at: string): void => {
    for (const entry of readdirSync(at)) {
      const full = path.join(at, entry);
      if (statSync(full).isDirectory()) walk(full);
      else if (/^\s*not ok /m.test(readFileSync(full, 'utf8')))
        failed.push(path.relative(results, full).replace(/\.tap$/, ''));
    }
  };
  walk(results);
  return failed;
}

mkdirSync(OUT, { recursive: true });
const dirs = Array.from({ length: COPIES }, (_, i) => path.join(OUT, `copy-${i + 1}`));
for (const dir of dirs) checkout(dir);
// tap builds its Test class once per install: do it before the copies start side by side.
execFileSync(process.execPath, ['node_modules/tap/dist/esm/run.mjs', 'build'], {
  cwd: dirs[0],
  stdio: 'ignore',
});

const summary: { round: number; copy: number; code: number; seconds: number; failed: string[] }[] =
  [];
for (let round = 1; round <= ROUNDS; round++) {
  const runs = await Promise.all(
    dirs.map((dir, i) => runSuite(dir, path.join(OUT, `round-${round}-copy-${i + 1}.log`))),
  );
  runs.forEach((run, i) =>
    summary.push({
      round,
      copy: i + 1,
      ...run,
      failed: run.code === 0 ? [] : failedFiles(dirs[i]!),
    }),
  );
  for (const run of summary.slice(-COPIES)) {
    process.stdout.write(
      `round ${run.round}, copy ${run.copy}: ${run.code === 0 ? 'passed' : `FAILED (${run.failed.join(', ') || `exit ${run.code}`})`} in ${run.seconds} s\n`,
    );
  }
}
const failures = summary.filter((run) => run.code !== 0);
process.stdout.write(
  `${JSON.stringify({ runs: summary.length, passed: summary.length - failures.length, summary })}\n`,
);
for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
process.exit(failures.length === 0 ? 0 : 1);

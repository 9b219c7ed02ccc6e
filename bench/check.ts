/**
 * `npm run bench:check`: runs the fast benches (the engine's recompute, the HTTP edge, start
 * and complete on a 10k-task flow) and compares their figures with bench/baseline.json,
 * failing (exit 1) on any that regressed beyond its tolerance. `npm run bench:check -- --update`
 * writes the baseline from this run instead (do it on a quiet machine, and commit it).
 *
 * Machines differ, and one machine's speed drifts with its load: every CPU-bound figure is
 * compared after scaling by a calibration (a fixed workload timed in this process, before and
 * after the benches), so a slower machine does not read as a regression. Figures bound by
 * Postgres's commit (fsync) are compared as they are, with a wider tolerance.
 * Prints one JSON line: { name, machine, calibrationMs, figures: [{ id, value, baseline, limit, ok }] }.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { machine } from './support.ts';

const BASELINE = new URL('./baseline.json', import.meta.url);

interface Figure {
  /** `bench` and `path`: where the figure is in that bench's JSON line. */
  id: string;
  bench: string;
  path: (string | number)[];
  /** lower (a time) or higher (a rate) is better. */
  better: 'lower' | 'higher';
  /** cpu: scaled by the calibration; io: compared as measured. */
  kind: 'cpu' | 'io';
  /** The share a figure may be worse than the baseline's before it fails. */
  tolerance: number;
}

// The engine's figures are taken at 100k tasks: at 10k a recompute is a couple of
// milliseconds, and two runs of one tree differed by 40% (a tolerance that wide hides a real
// regression).
const FIGURES: Figure[] = [
  {
    id: 'recompute 100k engine ms',
    bench: 'recompute',
    path: ['results', 2, 'engineMs'],
    better: 'lower',
    kind: 'cpu',
    tolerance: 0.35,
  },
  {
    id: 'recompute 100k counts ms',
    bench: 'recompute',
    path: ['results', 2, 'countsMs'],
    better: 'lower',
    kind: 'cpu',
    tolerance: 0.35,
  },
  {
    id: 'http GET /v1/me ratio to bare',
    bench: 'http',
    path: ['transports', 0, 'ratio'],
    better: 'higher',
    kind: 'io',
    tolerance: 0.2,
  },
  {
    id: 'flow-ops 10k start p50 ms',
    bench: 'flow-ops',
    path: ['runs', 0, 'start', 'p50Ms'],
    better: 'lower',
    kind: 'io',
    tolerance: 0.5,
  },
  {
    id: 'flow-ops 10k complete p50 ms',
    bench: 'flow-ops',
    path: ['runs', 0, 'complete', 'p50Ms'],
    better: 'lower',
    kind: 'io',
    tolerance: 0.5,
  },
  {
    id: 'flow-ops 10k GET p50 ms',
    bench: 'flow-ops',
    path: ['runs', 0, 'get', 'p50Ms'],
    better: 'lower',
    kind: 'cpu',
    tolerance: 0.35,
  },
];

const RUNS: Record<string, { args: string[]; env?: Record<string, string> }> = {
  recompute: { args: ['--import', 'tsx', 'bench/recompute.bench.ts'] },
  http: { args: ['--import', 'tsx', 'bench/http.bench.ts'] },
  'flow-ops': {
    args: ['--expose-gc', '--import', 'tsx', 'bench/flow-ops.bench.ts'],
    env: { BENCH_SIZES: '10000' },
  },
};

/** A fixed CPU workload (sorting a seeded million numbers), its median of five, in ms. */
function calibrate(): number {
  const times: number[] = [];
  for (let round = 0; round < 5; round++) {
    let seed = 12345;
    const values = new Float64Array(1_000_000).map(() => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed;
    });
    const started = performance.now();
    values.sort();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return times[2] ?? 0;
}

function runBench(name: string): unknown {
  const run = RUNS[name];
  if (!run) throw new Error(`no bench ${name}`);
  const done = spawnSync(process.execPath, run.args, {
    env: { ...process.env, ...run.env },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const line = done.stdout
    .trim()
    .split('\n')
    .reverse()
    .find((text) => text.startsWith('{"name"'));
  if (done.status !== 0 || !line)
    throw new Error(`bench ${name} failed (${done.status}): ${done.stderr.slice(-2000)}`);
  return JSON.parse(line);
}

function at(document: unknown, path: readonly (string | number)[]): number {
  let value: unknown = document;
  for (const key of path) value = (value as Record<string | number, unknown> | null)?.[key];
  if (typeof value !== 'number') throw new Error(`no figure at ${path.join('.')}`);
  return value;
}

interface Baseline {
  machine: ReturnType<typeof machine>;
  calibrationMs: number;
  figures: Record<string, number>;
}

const update = process.argv.includes('--update');
const before = calibrate();
const documents = new Map<string, unknown>();
for (const name of new Set(FIGURES.map((f) => f.bench))) documents.set(name, runBench(name));
// Before and after: the machine's speed across the whole run, not at one moment of it.
const calibrationMs = (before + calibrate()) / 2;
const measured = Object.fromEntries(FIGURES.map((f) => [f.id, at(documents.get(f.bench), f.path)]));

if (update) {
  const baseline: Baseline = { machine: machine(), calibrationMs, figures: measured };
  writeFileSync(BASELINE, `${JSON.stringify(baseline, null, 2)}\n`);
  console.log(JSON.stringify({ name: 'bench-check', updated: true, ...baseline }));
  process.exit(0);
}

const baseline = JSON.parse(readFileSync(BASELINE, 'utf8')) as Baseline;
// A CPU figure taken on a machine this much slower is expected to be this much larger.
const speed = calibrationMs / baseline.calibrationMs;
const figures = FIGURES.map((f) => {
  const value = measured[f.id] ?? Number.NaN;
  const base = baseline.figures[f.id];
  if (base === undefined) return { id: f.id, value, baseline: null, limit: null, ok: true };
  const expected = f.kind === 'cpu' ? base * speed : base;
  const limit = f.better === 'lower' ? expected * (1 + f.tolerance) : expected * (1 - f.tolerance);
  const ok = f.better === 'lower' ? value <= limit : value >= limit;
  return { id: f.id, value, baseline: base, limit: Number(limit.toFixed(3)), ok };
});
console.log(
  JSON.stringify({
    name: 'bench-check',
    machine: machine(),
    calibrationMs: Number(calibrationMs.toFixed(1)),
    speedVsBaseline: Number(speed.toFixed(3)),
    figures,
  }),
);
const failed = figures.filter((f) => !f.ok);
for (const f of failed)
  console.error(
    `regressed: ${f.id}: ${f.value} against a limit of ${f.limit} (baseline ${f.baseline})`,
  );
process.exit(failed.length ? 1 : 0);

/**
 * Coverage by layer (test/coverage.ts): files fall in their layer and nowhere else, a figure
 * never rounds up to its floor, and test/coverage-floor.json names every layer and only ever
 * rises, commit after commit and in the working copy.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import {
  BUILD_DIR,
  byLayer,
  compare,
  FLOOR_FILE,
  LAYERS,
  percent,
  readFloors,
  writeSummary,
  type Layer,
  type Summary,
} from './coverage.ts';

const ROOT = '/repo';
const lines = (covered: number, total: number) => ({ lines: { covered, total } });

t.test('files are summed by layer, and nothing outside the layers counts', async (t) => {
  const summary: Summary = {
    total: lines(0, 0),
    [`${ROOT}/src/engine/graph.ts`]: lines(9, 10),
    [`${ROOT}/src/engine/cpm.ts`]: lines(1, 10),
    [`${ROOT}/src/web/http/router.ts`]: lines(5, 5),
    [`${ROOT}/src/webhooks.ts`]: lines(0, 100), // not src/web/
    [`${ROOT}/src/compose.ts`]: lines(0, 100),
    [`${ROOT}/workers/render.worker.ts`]: lines(2, 4),
    [`${ROOT}/test/helpers/server.ts`]: lines(0, 100),
    ['/elsewhere/src/engine/graph.ts']: lines(0, 100),
  };
  const figures = byLayer(summary, ROOT);
  t.same(figures['src/engine'], { covered: 10, total: 20, files: 2 });
  t.same(figures['src/web'], { covered: 5, total: 5, files: 1 });
  t.same(figures.workers, { covered: 2, total: 4, files: 1 });
  t.same(figures['src/storage'], { covered: 0, total: 0, files: 0 });
});

t.test("a module's built copy and its source count as one file, the better covered", async (t) => {
  const summary: Summary = {
    total: lines(0, 0),
    [`${ROOT}/src/cli/args.js`]: lines(85, 100), // run from source by bin/flowplan.js
    [`${ROOT}/${BUILD_DIR}/src/cli/args.js`]: lines(98, 100), // imported by the tests
    [`${ROOT}/${BUILD_DIR}/src/cli/help.js`]: lines(7, 10), // only the built copy ran
    [`${ROOT}/src/cli/table.ts`]: lines(4, 4),
  };
  t.same(byLayer(summary, ROOT)['src/cli'], { covered: 98 + 7 + 4, total: 114, files: 3 });
});

t.test('a figure is rounded down, and compared with its floor', async (t) => {
  t.equal(percent({ covered: 2, total: 3, files: 1 }), 66.6);
  t.equal(percent({ covered: 0, total: 0, files: 0 }), 0);
  const figures = Object.fromEntries(
    LAYERS.map((layer) => [layer, { covered: 899, total: 1000, files: 1 }]),
  ) as Record<Layer, { covered: number; total: number; files: number }>;
  const floors = Object.fromEntries(LAYERS.map((layer) => [layer, 80])) as Record<Layer, number>;
  floors['src/cli'] = 90;
  const { lines: report, below } = compare(figures, floors);
  t.same(below, ['src/cli'], '89.9 is below 90');
  t.equal(report.length, LAYERS.length, 'one line per layer');
  t.match(
    report.find((line) => line.startsWith('src/cli')),
    /BELOW ITS FLOOR/,
  );
  floors['src/engine'] = 85;
  t.match(compare(figures, floors).lines[0], /raise the floor/, 'two points up: raise it');
  t.notMatch(compare(figures, floors, false).lines.join('\n'), /FLOOR|raise/, 'unjudged: bare');
});

t.test(
  'a module compiled twice, as ESM in a thread and CommonJS in a worker, counts line by line',
  async (t) => {
    // Under the working directory: the report counts only its files.
    mkdirSync('.flowplan', { recursive: true });
    const dir = mkdtempSync(path.resolve('.flowplan/coverage-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const fixture = {
      // 13 lines: the thread runs a(), the worker b(), nobody unused() (lines 12 and 13).
      'calc.ts': [
        'export function a(n: number): number {',
        '  const twice = n * 2;',
        '  return twice + 1;',
        '}',
        '',
        'export function b(n: number): number {',
        '  const thrice = n * 3;',
        '  return thrice + 1;',
        '}',
        '',
        'export function unused(): number {',
        '  return 0;',
        '}',
      ],
      'main.ts': [
        "import { Worker } from 'node:worker_threads';",
        "import { a } from './calc.ts';",
        'a(1);',
        "const worker = new Worker(new URL('./worker.cjs', import.meta.url));",
        "await new Promise((resolve) => worker.on('exit', resolve));",
      ],
      // tsx's require hook compiles calc.ts to CommonJS here, as Piscina's require() of a pool's
      // worker module does; merged by offset with the ESM form, b() read as never run.
      'worker.cjs': ["require('./calc.ts').b(1);"],
    };
    for (const [name, lines] of Object.entries(fixture)) {
      writeFileSync(path.join(dir, name), `${lines.join('\n')}\n`);
    }
    const raw = path.join(dir, 'raw');
    execFileSync(process.execPath, ['--import=tsx', 'main.ts'], {
      cwd: dir,
      env: { ...process.env, NODE_V8_COVERAGE: raw },
    });
    await writeSummary(raw, path.join(dir, 'report'));
    const summary = JSON.parse(
      readFileSync(path.join(dir, 'report', 'coverage-summary.json'), 'utf8'),
    ) as Summary;
    t.match(
      summary[path.join(dir, 'calc.ts')]?.lines,
      { covered: 11, total: 13 },
      'all but unused()',
    );
  },
);

/** The floor file's text at each commit that changed it, newest first (none outside a git checkout). */
function committedFloors(): string[] {
  const git = (...args: string[]) =>
    execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  let commits: string[];
  try {
    commits = git('log', '--first-parent', '--format=%H', '--', FLOOR_FILE).split('\n');
  } catch {
    return [];
  }
  return commits.filter(Boolean).map((commit) => git('show', `${commit}:${FLOOR_FILE}`));
}

t.test(`${FLOOR_FILE} names each layer, and its floors only rise`, async (t) => {
  const floors = readFloors();
  t.same(Object.keys(floors).sort(), [...LAYERS].sort(), 'every layer, nothing else');
  for (const layer of LAYERS) t.type(floors[layer], 'number', layer);
  // Newest first: the working copy, then each committed version.
  const versions = [readFileSync(FLOOR_FILE, 'utf8'), ...committedFloors()].map(
    (text) => JSON.parse(text) as Record<string, number>,
  );
  for (let i = 0; i + 1 < versions.length; i++) {
    const [newer, older] = [versions[i] ?? {}, versions[i + 1] ?? {}];
    for (const layer of LAYERS) {
      const before = older[layer];
      if (before === undefined) continue;
      t.ok((newer[layer] ?? 0) >= before, `${layer}: ${before} → ${newer[layer]}`, {
        version: i,
      });
    }
  }
});

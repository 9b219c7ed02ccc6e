/**
 * Line coverage by layer, against the floors in test/coverage-floor.json: a run's processes and
 * worker threads leave Node's own coverage in RAW_DIR, test/coverage-report.ts turns it into
 * SUMMARY_FILE, and test/run.ts prints the figures after every run and, after a whole run, fails
 * on a layer below its floor. A floor only rises (test/coverage.unit.test.ts checks its history):
 * raise it when a layer gains, to a point under what a whole run measures.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Report } from 'c8';

export const LAYERS = [
  'src/engine',
  'src/platform',
  'src/storage',
  'src/services',
  'src/web',
  'src/cli',
  'workers',
] as const;
export type Layer = (typeof LAYERS)[number];

export const FLOOR_FILE = 'test/coverage-floor.json';
export const SUMMARY_FILE = '.tap/report/coverage-summary.json';
/** Where NODE_V8_COVERAGE points: not tap's .tap/coverage, so tap leaves the report to us. */
export const RAW_DIR = '.tap/v8-coverage';

/** The part of a process's coverage file (NODE_V8_COVERAGE) that the report reads. */
export interface ProcessCoverage {
  result: { url: string }[];
  'source-map-cache'?: Record<string, { lineLengths?: number[]; data?: { mappings?: string } }>;
}

/**
 * Gives each compiled form of a module a URL of its own. c8 merges coverage by URL, byte offsets
 * and all, and keeps one source map per URL; but tsx compiles a module twice when a pool worker
 * loads it through tsx's require hook (CommonJS) and a main thread through its import hook (ESM),
 * and merging one text's offsets with the other's map miscounted whole files (on Node 24,
 * src/engine/graph.ts read 66%). A renamed form still maps to its source file through its source
 * map, where the report sums the forms' line counts.
 */
export function separateCompiledForms(coverage: ProcessCoverage): void {
  const maps = coverage['source-map-cache'];
  if (!maps) return;
  for (const script of coverage.result) {
    const map = maps[script.url];
    if (!map?.data) continue;
    const form = createHash('sha1')
      .update(`${map.lineLengths?.join(',')}:${map.data.mappings?.length}`)
      .digest('hex')
      .slice(0, 12);
    const url = `${script.url}.${form}.js`;
    maps[url] = map;
    script.url = url;
  }
}

/**
 * Writes a json-summary into `reportDir` from the process coverage files in `rawDir` (rewritten
 * first, with their compiled forms separated), for the files under the working directory.
 */
export async function writeSummary(rawDir: string, reportDir: string): Promise<void> {
  for (const name of readdirSync(rawDir)) {
    const file = path.join(rawDir, name);
    const coverage = JSON.parse(readFileSync(file, 'utf8')) as ProcessCoverage;
    separateCompiledForms(coverage);
    writeFileSync(file, JSON.stringify(coverage));
  }
  await new Report({
    reporter: ['json-summary'],
    reportsDirectory: reportDir,
    tempDirectory: rawDir,
    excludeNodeModules: true,
    // Fully covered files count too: a layer's figure is of every file of it the run loaded.
    skipFull: false,
  }).run();
}

/** Lines covered of lines counted, in the files of a layer the run loaded. */
export interface LayerFigure {
  covered: number;
  total: number;
  files: number;
}

/** istanbul's json-summary: per absolute file path (and `total`), counts per metric. */
export type Summary = Record<string, { lines: { total: number; covered: number } }>;

/** Where `scripts/build.ts --tests` compiles the project for the test run (test/run.ts). */
export const BUILD_DIR = '.flowplan/test-build';

/**
 * The figure of each layer, from a summary whose paths lie under `root`. A JavaScript module has
 * two copies in a built run: the one under BUILD_DIR that tests import, with no source map to
 * point back, and its source, which bin/flowplan.js runs in the CLI's processes. They count as
 * one file, covered as far as the better-covered copy (the summary gives counts, not the lines,
 * so their union is not known: this never counts more than it).
 */
export function byLayer(summary: Summary, root: string): Record<Layer, LayerFigure> {
  const files = new Map<string, { covered: number; total: number }>();
  for (const [file, { lines }] of Object.entries(summary)) {
    if (file === 'total') continue;
    const local = path.relative(root, file).split(path.sep).join('/');
    const relative = local.startsWith(`${BUILD_DIR}/`) ? local.slice(BUILD_DIR.length + 1) : local;
    const seen = files.get(relative);
    if (!seen || lines.covered > seen.covered) files.set(relative, lines);
  }
  const figures = Object.fromEntries(
    LAYERS.map((layer) => [layer, { covered: 0, total: 0, files: 0 }]),
  ) as Record<Layer, LayerFigure>;
  for (const [relative, lines] of files) {
    const layer = LAYERS.find((name) => relative.startsWith(`${name}/`));
    if (!layer) continue; // tests, the composition root, scripts
    figures[layer].covered += lines.covered;
    figures[layer].total += lines.total;
    figures[layer].files++;
  }
  return figures;
}

/** Percent of lines covered, to one decimal, rounded down (so a figure never rounds up to its floor). */
export function percent(figure: LayerFigure): number {
  return figure.total === 0 ? 0 : Math.floor((1000 * figure.covered) / figure.total) / 10;
}

export function readFloors(file = FLOOR_FILE): Record<Layer, number> {
  return JSON.parse(readFileSync(file, 'utf8')) as Record<Layer, number>;
}

/**
 * One line per layer, and what falls short of its floor (empty when none does). `judged`: the
 * lines say which layer is below its floor or well above it (a run of some files only is not).
 */
export function compare(
  figures: Record<Layer, LayerFigure>,
  floors: Record<Layer, number>,
  judged = true,
): { lines: string[]; below: Layer[] } {
  const lines: string[] = [];
  const below: Layer[] = [];
  for (const layer of LAYERS) {
    const figure = figures[layer];
    const pct = percent(figure);
    const floor = floors[layer];
    if (pct < floor) below.push(layer);
    let note = '';
    if (judged && pct < floor) note = '  BELOW ITS FLOOR';
    // A floor sits a point under what a run measures: runs differ (random sweeps, timing).
    else if (judged && pct >= floor + 2) note = '  (raise the floor)';
    lines.push(
      `${layer.padEnd(13)} ${pct.toFixed(1).padStart(5)}%  floor ${String(floor).padStart(4)}%  ` +
        `${figure.covered}/${figure.total} lines, ${figure.files} files${note}`,
    );
  }
  return { lines, below };
}

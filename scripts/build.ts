/**
 * `npm run build [-- --out-dir DIR]` (default dist/): the server, the CLI and the pool's
 * workers compiled by tsc (tsconfig.build.json) to plain ESM under DIR/src and DIR/workers,
 * with what they read from disk at run time beside them: every file of src/ and workers/
 * that is not TypeScript (the stylesheet, the app's browser script, …) and the migrations
 * (DIR/sql, which src/storage/migrate.ts finds at `../../sql/` from itself, as in the source
 * tree). Fonts and the uWS binary come from node_modules, so the tree runs wherever
 * `npm ci --omit=dev` has been run beside it.
 *
 * `--tests` (npm test; default out dir .flowplan/test-build): every file tsconfig.json checks,
 * test/ included, type-checked and compiled with source maps (tsconfig.test.json), and test/'s
 * own files that are not TypeScript (fixtures, the preload) beside them.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = path.resolve(import.meta.dirname, '..');
const { values } = parseArgs({
  options: { 'out-dir': { type: 'string' }, tests: { type: 'boolean', default: false } },
});
const tests = values.tests;
const out = path.resolve(values['out-dir'] ?? (tests ? '.flowplan/test-build' : 'dist'));

// The output is emptied first: refuse a directory that holds the sources.
if (ROOT === out || ROOT.startsWith(out + path.sep)) {
  process.stderr.write(`build: refusing to empty ${out}, which holds the sources\n`);
  process.exit(1);
}
rmSync(out, { recursive: true, force: true });

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const compiled = spawnSync(
  process.execPath,
  [
    tsc,
    '-p',
    path.join(ROOT, tests ? 'tsconfig.test.json' : 'tsconfig.build.json'),
    '--outDir',
    out,
  ],
  { stdio: 'inherit' },
);
if (compiled.status !== 0) process.exit(compiled.status ?? 1);

// TypeScript is compiled; a folder's README.md is for readers of the source, not the build.
const isSource = (file: string) => file.endsWith('.ts') || path.basename(file) === 'README.md';
for (const dir of tests ? ['src', 'workers', 'test'] : ['src', 'workers']) {
  cpSync(path.join(ROOT, dir), path.join(out, dir), {
    recursive: true,
    filter: (from) => !isSource(from),
  });
}
// The migrations only: sql/distribution.json is for the tests and the cluster plan (docs/scale.md).
cpSync(path.join(ROOT, 'sql'), path.join(out, 'sql'), {
  recursive: true,
  filter: (source) => !source.endsWith('.json'),
});

/**
 * Every file a built module names relative to itself must exist in the output: a new asset
 * read through `new URL(…, import.meta.url)`, or a worker started through `workerModule`,
 * that the copy above missed fails the build here rather than at run time.
 */
function modules(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return modules(full);
    return entry.name.endsWith('.js') ? [full] : [];
  });
}
const missing: string[] = [];
const REFERENCE = /\b(new URL|workerModule)\(\s*(['"])([^'"]+)\2,\s*import\.meta\.url\s*\)/g;
for (const file of [...modules(path.join(out, 'src')), ...modules(path.join(out, 'workers'))]) {
  for (const [, how, , relative] of readFileSync(file, 'utf8').matchAll(REFERENCE)) {
    const target = how === 'workerModule' ? relative!.replace(/\.ts$/, '.js') : relative!;
    const resolved = fileURLToPath(new URL(target, pathToFileURL(file)));
    if (!existsSync(resolved))
      missing.push(`${path.relative(out, file)} → ${path.relative(out, resolved)}`);
  }
}
if (missing.length > 0) {
  process.stderr.write(
    `build: files the built modules read are missing from ${out}:\n  ${missing.join('\n  ')}\n`,
  );
  process.exit(1);
}
process.stdout.write(`built ${out}\n`);

/**
 * The house rules (.dependency-cruiser.cjs, read by dependency-cruiser): layers import one way,
 * nothing goes round in a circle. Run over src/ and workers/ with zero exceptions; and over a
 * small fixture tree that breaks each rule once, so a config that stopped catching anything
 * fails here too.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';

const CONFIG = path.resolve('.dependency-cruiser.cjs');
const DEPCRUISE = path.resolve('node_modules/dependency-cruiser/bin/dependency-cruise.mjs');

interface Violation {
  from: string;
  to: string;
  rule: { name: string };
  cycle?: { name: string }[];
}

async function cruise(
  cwd: string,
  roots: string[],
): Promise<{ violations: Violation[]; modules: number }> {
  // Exit code 1 means "violations found"; the JSON says which.
  const run = promisify(execFile);
  const { stdout } = await run(
    process.execPath,
    [DEPCRUISE, '--config', CONFIG, '--output-type', 'json', ...roots],
    { cwd, maxBuffer: 64 * 1024 * 1024 },
  ).catch((error: { stdout?: string; code?: number }) => {
    if (error.code === 1 && error.stdout) return { stdout: error.stdout };
    throw error;
  });
  const result = JSON.parse(stdout) as {
    summary: { violations: Violation[]; totalCruised: number };
  };
  return { violations: result.summary.violations, modules: result.summary.totalCruised };
}

const describe = (v: Violation) =>
  `${v.rule.name}: ${v.from} → ${v.to}${v.cycle ? ` (${v.cycle.map((c) => c.name).join(' → ')})` : ''}`;

t.test('src/ and workers/ keep every rule, with no exceptions', async (t) => {
  const { violations, modules } = await cruise(process.cwd(), ['src', 'workers']);
  t.ok(modules > 150, `${modules} modules cruised`);
  t.same(violations.map(describe), [], 'no violations');
});

t.test('each rule catches what it forbids (a fixture tree breaking each once)', async (t) => {
  const { violations } = await cruise(path.resolve('test/fixtures/layering'), ['src']);
  const caught = (rule: string, from: string, to: string) =>
    violations.some((v) => v.rule.name === rule && v.from === from && v.to === to);
  t.ok(
    caught('engine-imports-only-contract-platform', 'src/engine/graph.ts', 'src/storage/rows.ts'),
    'engine → storage',
  );
  t.ok(
    caught(
      'storage-imports-only-contract-platform',
      'src/storage/rows.ts',
      'src/services/a/thing.ts',
    ),
    'storage → services',
  );
  t.ok(
    caught(
      'services-imports-only-storage-engine-contract-platform',
      'src/services/a/thing.ts',
      'src/web/page.ts',
    ),
    'services → web',
  );
  t.ok(
    caught('web-imports-only-services-contract-platform', 'src/web/page.ts', 'src/storage/rows.ts'),
    'web → storage',
  );
  t.ok(
    caught('contract-imports-only-platform', 'src/contract/wire.ts', 'src/services/a/thing.ts'),
    'contract → services',
  );
  const fromPackage = (rule: string, pkg: string) =>
    violations.some(
      (v) =>
        v.rule.name === rule &&
        v.from === 'src/web/socket.ts' &&
        v.to.includes(`node_modules/${pkg}/`),
    );
  t.ok(fromPackage('uws-only-in-the-uws-transport', 'uWebSockets.js'), 'web → uWebSockets.js');
  t.ok(fromPackage('ws-only-in-the-node-transport', 'ws'), 'web → ws');
  t.same(
    violations.filter((v) => v.to === 'src/contract/words.ts').map(describe),
    [],
    'every layer may import the contract',
  );
  t.ok(
    violations.some((v) => v.rule.name === 'no-circular-files'),
    'a cycle between files',
  );
  t.ok(
    violations.some((v) => v.rule.name === 'no-circular-folders' && v.from === 'src/services/a'),
    'a cycle between folders',
  );
});

t.test(
  'every folder of src/ and workers/ says what lives there and what it may import (README.md)',
  async (t) => {
    const folders = (dir: string): string[] => [
      dir,
      ...readdirSync(dir, { withFileTypes: true })
        .filter((entry) => entry.isDirectory() && entry.name !== 'assets')
        .flatMap((entry) => folders(path.join(dir, entry.name))),
    ];
    const missing = [...folders('src'), 'workers'].filter(
      (dir) => !existsSync(path.join(dir, 'README.md')),
    );
    t.same(missing, [], 'no folder without its README.md');
  },
);

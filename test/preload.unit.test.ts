/**
 * test/preload.mjs keeps tap's @tapjs/processinfo from hooking module loading: a process
 * started as tap starts a test file (processinfo imported after the preload) records none of
 * the modules it loads, where one without the preload records them (so the check can fail).
 * Run on Node 20 (processinfo registers a loader thread) and, in `npm run test:node24`, on
 * Node 24 (synchronous hooks).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';

const PRELOAD = new URL('preload.mjs', import.meta.url).href;
/** What tap imports into each test process (its `--import`). */
const PROCESSINFO = import.meta.resolve('@tapjs/processinfo/import');

/**
 * Imports three modules, then prints the files processinfo holds (its state is a global) once
 * they include the last module, or once `wait` ms have passed: on Node 20 they come from the
 * loader thread, as messages.
 */
const MAIN = `await import('./a.mjs'); await import('./b.mjs'); await import('./c.mjs');
const deadline = Date.now() + Number(process.argv[2]);
const files = () => globalThis[Symbol.for('@tapjs/processinfo.ProcessInfoNodeData')]?.files ?? [];
while (!files().some((f) => f.endsWith('c.mjs')) && Date.now() < deadline)
  await new Promise((resolve) => setTimeout(resolve, 10));
process.stdout.write(JSON.stringify(files()));
`;

/** The files of its own that processinfo recorded for one process. */
async function recorded(t: Test, imports: string[], wait: number): Promise<string[]> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'flowplan-preload-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  for (const name of ['a', 'b', 'c']) writeFileSync(path.join(dir, `${name}.mjs`), 'export {};\n');
  writeFileSync(path.join(dir, 'main.mjs'), MAIN);
  // Started through env(1) with an empty environment: processinfo, in this process too, puts
  // its NODE_OPTIONS (the preload among them) into the environment of whatever it spawns.
  const child = spawn(
    'env',
    [
      '-i',
      `PATH=${process.env.PATH ?? ''}`,
      process.execPath,
      ...imports.map((i) => `--import=${i}`),
      path.join(dir, 'main.mjs'),
      String(wait),
    ],
    { cwd: dir, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const code = await new Promise((resolve) => child.on('close', resolve));
  t.equal(code, 0, 'the process ran');
  return (JSON.parse(out || '[]') as string[]).filter(
    (f) => f.startsWith(dir) && !f.endsWith('main.mjs'),
  );
}

t.test('without the preload, processinfo records the modules a process loads', async (t) => {
  const files = await recorded(t, [PROCESSINFO], 60_000);
  t.equal(files.length, 3, 'a.mjs, b.mjs and c.mjs recorded');
});

t.test('with the preload first, as tap runs a test file, it records none', async (t) => {
  // What the control above got within milliseconds, a second's wait here does not.
  t.strictSame(await recorded(t, [PRELOAD, PROCESSINFO], 1000), [], 'no module recorded');
});

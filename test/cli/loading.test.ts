/**
 * The CLI loads what it runs and no more: `flowplan --help` and `help COMMAND` are answered from
 * src/cli's plain JavaScript with no TypeScript loader and no package (registering tsx alone
 * costs more than the help), and a command loads its own module and what its run uses, never
 * another command's or the server's. What a process loaded is read from a module hook that
 * writes down each module as it loads, in bin/flowplan.js run as an operator runs it.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import t, { type Test } from 'tap';
import { createTestDatabase } from '../helpers/database.ts';
import { operatorEnv, run, type Finished } from '../helpers/process.ts';

const ROOT = process.cwd();

/** bin/flowplan.js with `args`; its outcome, and the files it loaded (relative to the root; packages as `package:NAME`). */
async function loadedBy(
  t: Test,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ result: Finished; files: string[] }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'flowplan-loads-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const log = path.join(dir, 'loaded');
  writeFileSync(
    path.join(dir, 'hooks.mjs'),
    `import { appendFileSync } from 'node:fs';
export async function load(url, context, next) {
  appendFileSync(${JSON.stringify(log)}, url + '\\n');
  return next(url, context);
}
`,
  );
  writeFileSync(
    path.join(dir, 'register.mjs'),
    "import { register } from 'node:module';\nregister('./hooks.mjs', import.meta.url);\n",
  );
  writeFileSync(log, '');
  const result = await run(
    process.execPath,
    ['--import', pathToFileURL(path.join(dir, 'register.mjs')).href, 'bin/flowplan.js', ...args],
    { env: operatorEnv({ LOG_LEVEL: 'silent', ...env }) },
  );
  const files = readFileSync(log, 'utf8')
    .split('\n')
    .filter((url) => url.startsWith('file:'))
    .map((url) => {
      const file = fileURLToPath(url);
      const inPackage = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(file);
      return inPackage ? `package:${inPackage[1]}` : path.relative(ROOT, file);
    });
  return { result, files: [...new Set(files)] };
}

const HELP_PATH = [
  'bin/flowplan.js',
  'src/platform/node-version.js',
  'src/cli/dispatch.js',
  'src/cli/args.js',
  'src/cli/commands.js',
  'src/cli/help.js',
];

t.test(
  'help and usage errors: plain JavaScript of src/cli alone, no loader, no package',
  async (t) => {
    for (const args of [
      ['--help'],
      ['help', 'key', 'create'],
      ['key', 'list', '--help'],
      ['key', 'list'],
    ]) {
      const { result, files } = await loadedBy(t, args);
      t.equal(result.code, args.includes('--help') || args[0] === 'help' ? 0 : 2, args.join(' '));
      t.strictSame(
        files.sort(),
        [...HELP_PATH].sort(),
        `flowplan ${args.join(' ')} loads the help path only`,
      );
    }
  },
);

t.test('a command loads its own module and what its run uses', async (t) => {
  const databaseUrl = await createTestDatabase(t);
  const created = await run(
    process.execPath,
    ['bin/flowplan.js', 'workspace', 'create', '--name', 'Loads', '--json'],
    {
      env: operatorEnv({ DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' }),
    },
  );
  t.equal(created.code, 0, created.stderr);
  const { id } = JSON.parse(created.stdout) as { id: string };
  const { result, files } = await loadedBy(t, ['key', 'list', '--workspace', id], {
    DATABASE_URL: databaseUrl,
  });
  t.equal(result.code, 0, result.stderr);
  t.match(result.stdout, `no API keys in ${id}`);
  t.ok(files.includes('src/cli/credential.commands.ts'), 'its own module');
  t.ok(files.includes('src/storage/credentials.store.ts'), 'the store its run reads');
  const others = files.filter(
    (file) =>
      /^src\/cli\/(maintenance|workspace|user)\.commands\.ts$/.test(file) ||
      /^src\/(web|engine)\//.test(file) ||
      (file.startsWith('src/services/') && !file.startsWith('src/services/auth/')) ||
      /^package:(pino|pg-boss|piscina|uWebSockets\.js|pdfkit|@resvg\/resvg-js)$/.test(file),
  );
  t.strictSame(others, [], "nothing of another command's, nor of the server's");
});

/**
 * README.md's shell blocks, run the way a reader pastes them into a terminal, against flowplan
 * started the way `npm start` starts it (src/main.ts as a child) on a fresh database.
 *
 * The conventions, for whoever writes the README:
 * - Every ```sh block runs, in README order, in bash with `set -euo pipefail`, from the
 *   repository's root, and must exit 0.
 * - Each block starts from the banner's `export BASE=… KEY=…` line (run as printed) and with
 *   DATABASE_URL set to the server's database, so `npx flowplan …` works on it as it does next
 *   to `npm start`. Blocks build on each other as in one terminal: the shell variables and
 *   functions a block defines are there in every block after it.
 * - A block that cannot run here (installing, serving until stopped, a browser, minutes of
 *   benchmarks) starts with the line `# doc-test: skip (why)`. It is reported as a skipped test
 *   with that reason. A block the README asks to run against a server started otherwise
 *   (`WEBHOOK_ALLOW_PRIVATE=1 npm start`) starts with `# doc-test: restart NAME=value … (why)`:
 *   the server is stopped and started again on the same database and port with those settings
 *   added, as the reader restarts theirs, and the block runs. A marker without a reason, or any
 *   other `# doc-test:` line, fails.
 * - A ```text block right after a ```sh block (blank lines between at most) is what the README
 *   promises that block prints: each of its non-empty lines must match a line of the block's
 *   stdout, in order, with other lines allowed in between; `…` stands for any text, and
 *   trailing white space is ignored. A ```text exact block promises all of it: the stdout is
 *   those lines and no others (blank lines aside), for a block whose every line of output is shown.
 * - Files a block writes at the repository's top level (an export) are removed at the end.
 *
 * The server runs with `npm start`'s settings (no WEBHOOK_ALLOW_PRIVATE: a reader's server has
 * none until the Webhooks section asks for a restart with it), on a free port picked first rather
 * than PORT=0: the links it hands out (a published flow's publicUrl) are built from BASE_URL, so
 * the port must be known when it starts.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { freePort } from '../../src/storage/embedded.ts';
import { Agent } from '../services/auth/agent.ts';
import { createTestDatabase } from '../helpers/database.ts';
import { until } from '../helpers/server.ts';

/** The project's root, where tap runs every test file (this one may run compiled, from elsewhere). */
const ROOT = process.cwd();
const BLOCK_TIMEOUT_MS = 120_000;

interface Block {
  lang: string;
  body: string;
  /** 1-based line of the opening fence. */
  line: number;
  heading: string;
  /** The ```text block that follows, if any. */
  expected: string | null;
  /** That block is ```text exact: no other output. */
  exact: boolean;
}

/** The fenced blocks of a Markdown text, each with the heading it sits under. */
function fencedBlocks(markdown: string): Block[] {
  const lines = markdown.split('\n');
  const blocks: Block[] = [];
  let heading = '';
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (/^#{1,6} /.test(line)) heading = line.replace(/^#+ /, '');
    const open = /^```(\w*)\s*$/.exec(line);
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]!); i++) body.push(lines[i]!);
    blocks.push({
      lang: open[1]!,
      body: body.join('\n'),
      line: start + 1,
      heading,
      expected: null,
      exact: false,
    });
    // What follows: blank lines, then perhaps the text block that states this one's output.
    let next = i + 1;
    while (next < lines.length && lines[next]!.trim() === '') next++;
    if (open[1] === 'sh' && (lines[next] === '```text' || lines[next] === '```text exact')) {
      blocks.at(-1)!.exact = lines[next] === '```text exact';
      const text: string[] = [];
      for (next++; next < lines.length && !/^```\s*$/.test(lines[next]!); next++)
        text.push(lines[next]!);
      blocks.at(-1)!.expected = text.join('\n');
      i = next;
    }
  }
  return blocks;
}

type Marker = { kind: 'skip'; reason: string } | { kind: 'restart'; env: Record<string, string> };

/**
 * The block's `# doc-test:` marker, which must be its first line: `skip (why)`, or `restart
 * NAME=value … (why)`; null for a block that just runs. Throws on a malformed marker.
 */
function marker(body: string): Marker | null {
  const markers = body.split('\n').filter((line) => /^\s*#\s*doc-test\b/.test(line));
  if (markers.length === 0) return null;
  const first = body.split('\n')[0]!;
  const skip = /^# doc-test: skip \((.*\S.*)\)\s*$/.exec(first);
  const restart = /^# doc-test: restart ((?:[A-Z][A-Z0-9_]*=\S+ )+)\((.*\S.*)\)\s*$/.exec(first);
  if (markers.length === 1 && skip) return { kind: 'skip', reason: skip[1]?.trim() ?? '' };
  if (markers.length === 1 && restart) {
    const pairs = restart[1]?.trim().split(' ') ?? [];
    return {
      kind: 'restart',
      env: Object.fromEntries(pairs.map((pair) => pair.split(/=(.*)/s, 2))),
    };
  }
  throw new Error(
    `a doc-test marker must be the first line and read "# doc-test: skip (why)" or "# doc-test: restart NAME=value (why)": ${markers.join(' | ')}`,
  );
}

/**
 * Whether each line of `expected` matches a line of `output`, in order; the first that does not,
 * else null. `exact`: no other line may come between or after (the first extra line is returned).
 */
function unmatchedLine(expected: string, output: string, exact = false): string | null {
  const actual = output
    .split('\n')
    .map((line) => line.trimEnd())
    .filter((line) => !exact || line !== '');
  let at = 0;
  for (const want of expected
    .split('\n')
    .map((line) => line.trimEnd())
    .filter((line) => line !== '')) {
    const pattern = new RegExp(
      `^${want
        .split('…')
        .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
        .join('.*')}$`,
    );
    while (!exact && at < actual.length && !pattern.test(actual[at]!)) at++;
    if (at === actual.length || !pattern.test(actual[at]!)) return want;
    at++;
  }
  return exact && at < actual.length ? `(nothing more, but got) ${actual[at]}` : null;
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function bash(script: string, env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', script], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const timer = setTimeout(() => child.kill('SIGKILL'), BLOCK_TIMEOUT_MS);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({
        code,
        stdout,
        stderr: stderr + (code === null ? `\n(killed after ${BLOCK_TIMEOUT_MS} ms)` : ''),
      });
    });
  });
}

/** Where the README's server runs: its database, port and data directory, kept across a restart. */
interface Place {
  databaseUrl: string;
  port: number;
  dataDir: string;
}

/**
 * The README's own server: src/main.ts, as `npm start` runs it, with `env` added. Resolves with
 * what it printed once it serves: a first start's banner ends with the curl to try, a later
 * start's names the web app.
 */
async function startServer(
  t: Test,
  place: Place,
  env: Record<string, string> = {},
): Promise<{ banner: string; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: {
      ...process.env,
      DATABASE_URL: place.databaseUrl,
      PORT: String(place.port),
      HOST: '127.0.0.1',
      METRICS_PORT: '0',
      LOG_LEVEL: 'warn',
      WORKERS: '1',
      // Mail (none is sent here) would go under the data directory: keep it out of the clone's.
      FLOWPLAN_DATA_DIR: place.dataDir,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  t.teardown(stop);
  await until(
    async () => stdout,
    (out) =>
      /^\s+curl .*\/v1\/me$/m.test(out) ||
      (/^Web app: /m.test(out) && !/admin API key/.test(out)) ||
      child.exitCode !== null,
    120_000,
  );
  if (child.exitCode !== null)
    throw new Error(`flowplan exited ${child.exitCode}\n${stdout}\n${stderr}`);
  return { banner: stdout, stop };
}

/** Regular files at the top of the clone, so that what the blocks write there can be removed. */
function topLevelFiles(): Set<string> {
  return new Set(
    readdirSync(ROOT).filter((name) =>
      statSync(path.join(ROOT, name), { throwIfNoEntry: false })?.isFile(),
    ),
  );
}

/** The README's blocks are curl commands: on a machine without curl they cannot run at all. */
function hasCurl(): boolean {
  return (process.env.PATH ?? '')
    .split(path.delimiter)
    .some((dir) => dir && statSync(path.join(dir, 'curl'), { throwIfNoEntry: false })?.isFile());
}

t.test(
  'README.md: every shell block runs, or says why not',
  {
    skip: hasCurl()
      ? false
      : "curl is not installed (apt-get install -y curl): the README's shell blocks cannot run",
  },
  async (t) => {
    const databaseUrl = await createTestDatabase(t);
    const place: Place = {
      databaseUrl,
      port: await freePort(),
      dataDir: mkdtempSync(path.join(os.tmpdir(), 'flowplan-readme-')),
    };
    t.teardown(() => rmSync(place.dataDir, { recursive: true, force: true }));
    const base = `http://127.0.0.1:${place.port}`;
    let server = await startServer(t, place);
    const { banner } = server;

    const exportLine = /^\s*(export BASE=\S+ KEY=fpk_\S+)$/m.exec(banner)?.[1];
    t.ok(exportLine, 'the banner has the line to paste into a shell');
    t.match(banner, `flowplan is running at ${base}`);
    const webApp = /^Web app: (\S+)$/m.exec(banner)?.[1];
    t.equal(webApp, `${base}/app/signin`, "the banner names the web app's sign-in page");
    const email = /Sign in to the web app as (\S+),/.exec(banner)?.[1];
    const password = /with this password \(shown once\):\n\n\s+(\S+)/.exec(banner)?.[1];
    t.equal(email, 'demo@flowplan.localhost', 'and a demo person');
    t.ok(password, 'with a password');
    if (!exportLine) return;

    t.test('the demo person signs in to the web app, reached from the base URL', async (t) => {
      const agent = new Agent(base);
      const root = await agent.get('/');
      t.equal(root.status, 303, 'GET / sends a browser on');
      const home = await agent.get(root.location!);
      t.equal(home.location, '/app/signin', 'to the app, which asks to sign in');
      const page = await agent.get(new URL(webApp!).pathname);
      const signedIn = await agent.post(
        '/app/signin',
        { email: email!, password: password! },
        page,
      );
      t.equal(signedIn.status, 303, signedIn.text);
      t.equal(signedIn.location, '/app', 'signed in, on the home page');
      t.match(
        (await agent.get(signedIn.location!)).text,
        /href="\/app\/access"/,
        'which leads an owner to API access',
      );
      const access = await agent.get('/app/access');
      t.match(access.text, 'Demo admin key', 'which lists the Demo key');
    });

    const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const blocks = fencedBlocks(readme).filter((block) => block.lang === 'sh');
    t.ok(blocks.length >= 10, `${blocks.length} shell blocks`);

    const scratch = mkdtempSync(path.join(os.tmpdir(), 'flowplan-readme-'));
    const state = path.join(scratch, 'state.sh');
    writeFileSync(state, '');
    const filesBefore = topLevelFiles();
    t.teardown(() => {
      for (const name of topLevelFiles())
        if (!filesBefore.has(name)) rmSync(path.join(ROOT, name), { force: true });
      rmSync(scratch, { recursive: true, force: true });
    });

    const env = { ...process.env, DATABASE_URL: databaseUrl, DOCTEST_STATE: state };
    let failed = false;
    for (const block of blocks) {
      const name = `README.md:${block.line} (${block.heading}): ${
        block.body
          .split('\n')
          .find((l) => l.trim() && !l.startsWith('#'))
          ?.trim() ?? ''
      }`;
      let mark: Marker | null;
      try {
        mark = marker(block.body);
      } catch (error) {
        t.fail(`${name}: ${(error as Error).message}`);
        continue;
      }
      if (mark?.kind === 'skip') {
        await t.test(name, { skip: mark.reason }, async () => {});
        continue;
      }
      if (mark?.kind === 'restart' && !failed) {
        await server.stop();
        server = await startServer(t, place, mark.env);
      }
      await t.test(name, { skip: failed ? 'a block before it failed' : false }, async (t) => {
        // Before the block: the banner's line, then what the blocks before it defined. After it:
        // what it defined (shell variables beyond bash's own and the environment's, and functions).
        const script = [
          'set -euo pipefail',
          '__own=$(compgen -v)',
          exportLine,
          'source "$DOCTEST_STATE"',
          block.body,
          '__vars=$(compgen -v | grep -vxF "$__own" | grep -Ev \'^(__|BASH_)\' || true)',
          '{ if [ -n "$__vars" ]; then declare -p $__vars; fi; declare -f; } > "$DOCTEST_STATE.next"',
        ].join('\n');
        const run = await bash(script, env);
        const shown = `\n--- stdout\n${run.stdout}\n--- stderr\n${run.stderr}`;
        if (run.code !== 0) {
          failed = true;
          t.fail(`exited ${run.code}${shown}`);
          return;
        }
        writeFileSync(state, readFileSync(`${state}.next`));
        if (block.expected !== null) {
          const missing = unmatchedLine(block.expected, run.stdout, block.exact);
          t.equal(
            missing,
            null,
            `prints what the README shows${missing === null ? '' : `: no line matches "${missing}"${shown}`}`,
          );
        } else {
          t.pass('exits 0');
        }
      });
    }
  },
);

t.test('the doc-test conventions themselves', async (t) => {
  const blocks = fencedBlocks(
    '# A\n\n```sh\necho hi\n```\n\n```text\nhi\n```\n\n## B\n```sh\n# doc-test: skip (why not)\nnpm start\n```\n```\nplain\n```\n',
  );
  t.same(
    blocks.map((b) => [b.lang, b.heading, b.expected, b.exact]),
    [
      ['sh', 'A', 'hi', false],
      ['sh', 'B', null, false],
      ['', 'B', null, false],
    ],
  );
  t.equal(
    fencedBlocks('```sh\necho hi\n```\n```text exact\nhi\n```\n')[0]!.exact,
    true,
    'text exact',
  );
  t.strictSame(marker(blocks[1]!.body), { kind: 'skip', reason: 'why not' });
  t.equal(marker('echo hi'), null);
  t.strictSame(
    marker('# doc-test: restart A_B=1 C=x (the prose asks)\ncurl …'),
    { kind: 'restart', env: { A_B: '1', C: 'x' } },
    'a restart with settings',
  );
  t.throws(() => marker('# doc-test: skip\nnpm start'), 'a skip needs a reason');
  t.throws(() => marker('# doc-test: restart A=1\ncurl'), 'so does a restart');
  t.throws(() => marker('# doc-test: restart (why)\ncurl'), 'and a restart, its settings');
  t.throws(() => marker('echo\n# doc-test: skip (late)'), 'only as the first line');
  t.throws(() => marker('# doc-test: maybe (x)'), 'only skip and restart are known');
  t.equal(
    unmatchedLine('a …\nc', 'a b\nx\nc\n'),
    null,
    'in order, lines between allowed, … for any text',
  );
  t.equal(unmatchedLine('c\na …', 'a b\nc'), 'a …', 'order matters');
  t.equal(unmatchedLine('a.b', 'axb'), 'a.b', 'everything but … is literal');
  t.equal(
    unmatchedLine('a …\nc', 'a b\n\nc\n', true),
    null,
    'exact: the same lines, blank ones aside',
  );
  t.equal(
    unmatchedLine('<title>x</title>', '<title>x</title>\n<title>y</title>', true),
    '(nothing more, but got) <title>y</title>',
    'exact: nothing after',
  );
  t.equal(unmatchedLine('a\nc', 'a\nb\nc', true), 'c', 'exact: nothing between');
});

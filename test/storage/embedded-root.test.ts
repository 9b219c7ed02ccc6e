/**
 * `npm start` as root with the data directory where other accounts cannot enter: the
 * embedded Postgres must run as the `postgres` account, which could not reach it. flowplan
 * stops at once with one line naming the directory and the ways out, not a stack trace from
 * `spawn initdb EACCES`. (Only as root: another user runs Postgres as themselves.)
 */
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';

t.test(
  'root, private data directory: one clear line and exit 1',
  { skip: process.getuid?.() !== 0 ? 'not running as root' : false },
  async (t) => {
    const privateDir = mkdtempSync(path.join(tmpdir(), 'flowplan-private-'));
    chmodSync(privateDir, 0o700);
    t.teardown(() => rmSync(privateDir, { recursive: true, force: true }));
    const dataDir = path.join(privateDir, 'data');

    const env: Record<string, string> = {
      ...process.env,
      FLOWPLAN_DATA_DIR: dataDir,
      PORT: '0',
      LOG_LEVEL: 'silent',
    } as Record<string, string>;
    delete env.DATABASE_URL;
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));

    t.equal(code, 1, 'exits with 1');
    const lines = stderr.trim().split('\n');
    t.equal(lines.length, 1, `one line: ${stderr}`);
    t.match(
      lines[0],
      /^flowplan: the embedded Postgres cannot start: .*"postgres" account.*cannot enter .*flowplan-private-.*\(mode 700\)\. Set DATABASE_URL/,
    );
    t.notMatch(stderr, /EACCES|\n\s+at /, 'no spawn error, no stack trace');
    t.notMatch(stdout, /running at/);
    t.notOk(existsSync(dataDir), 'nothing was created in the private directory');
  },
);

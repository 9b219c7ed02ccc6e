/**
 * A second flowplan process (`SERVER_MAIN`) on a test's database, for the tests that need
 * two processes or a process to kill: resolves once it listens; killed at teardown.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Test } from 'tap';
import { SERVER_MAIN } from '../../helpers/process.ts';

export interface ChildServer {
  url: string;
  process: ChildProcess;
  /** SIGKILL: no shutdown hooks, as in a crash. Resolves when it is gone. */
  kill(): Promise<void>;
}

export async function startChildServer(
  t: Test,
  databaseUrl: string,
  env: Record<string, string> = {},
): Promise<ChildServer> {
  const child = spawn(process.execPath, SERVER_MAIN, {
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      PORT: '0',
      LOG_LEVEL: 'silent',
      WORKERS: '1',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  };
  t.teardown(kill);
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`child server did not start: ${output}`)),
      60_000,
    );
    child.stdout!.on('data', (chunk) => {
      output += chunk;
      const match = /flowplan is running at (\S+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.stderr!.on('data', (chunk) => (output += chunk));
    child.once('exit', (code) => reject(new Error(`child server exited ${code}: ${output}`)));
  });
  return { url, process: child, kill };
}

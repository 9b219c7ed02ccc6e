/**
 * Commands run as an operator would run them (the built server, npm, the CLI), as child
 * processes with their output kept, for the tests of the production build, the Dockerfile
 * and the runtime checks.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Test } from 'tap';
import { compiledModule, until } from './server.ts';

/**
 * The arguments that start the server as a process of its own: src/main.ts as `npm start` runs
 * it; in a compiled run, the compiled entry, as `npm run start:prod` runs dist's, so that the
 * server and the pool workers it starts do not load their TypeScript through tsx's loader.
 * README's quick start (test/ops/readme.test.ts), the production start and the runtime checks
 * still start it as `npm start` does.
 */
const compiledMain = compiledModule('../../src/main.ts');
export const SERVER_MAIN = compiledMain ? [compiledMain] : ['--import', 'tsx', 'src/main.ts'];

/**
 * The environment of a command run as an operator would: without NODE_OPTIONS, through which
 * the test runner's loaders (tsx among them) would otherwise reach the child.
 */
export function operatorEnv(env: Record<string, string> = {}): NodeJS.ProcessEnv {
  const { NODE_OPTIONS: _loaders, ...rest } = process.env;
  return { ...rest, ...env };
}

export interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end. */
export function run(
  command: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<Finished> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env ?? operatorEnv() });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('exit', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

export interface Server {
  child: ChildProcess;
  base: string;
  stdout: () => string;
  stderr: () => string;
  /** SIGTERM, then how it ended (SIGKILL if it has not within 30 s). */
  stop: () => Promise<Finished>;
}

/**
 * Starts a server command and waits until it has printed its banner and answers /healthz on
 * `port`; fails at once, with its output, if it exits first. Stopped at the end of the test.
 */
export async function startServer(
  t: Test,
  command: string,
  args: string[],
  options: { port: number; cwd?: string; env: NodeJS.ProcessEnv },
): Promise<Server> {
  const child = spawn(command, args, { cwd: options.cwd, env: options.env });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  let exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  const exited = new Promise<Finished>((resolve) =>
    child.on('exit', (code, signal) => {
      exit = { code, signal };
      resolve({ code, signal, stdout, stderr });
    }),
  );
  const stop = async (): Promise<Finished> => {
    if (!exit) child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    const finished = await exited;
    clearTimeout(killer);
    return finished;
  };
  t.teardown(stop);
  const base = `http://127.0.0.1:${options.port}`;
  await until(
    async () => {
      if (exit)
        throw new Error(
          `${command} ${args.join(' ')} exited (${JSON.stringify(exit)}) before serving\nstdout:\n${stdout}\nstderr:\n${stderr}`,
        );
      const healthy = await fetch(`${base}/healthz`).then(
        (r) => r.status === 200,
        () => false,
      );
      return healthy && stdout.includes('flowplan is running at');
    },
    (ready) => ready,
    120_000,
  ).catch((error: unknown) => {
    throw new Error(`${(error as Error).message}\nstdout:\n${stdout}\nstderr:\n${stderr}`);
  });
  return { child, base, stdout: () => stdout, stderr: () => stderr, stop };
}

/** The Demo admin key from a first start's banner. */
export function bannerKey(stdout: string): string | undefined {
  return /\b(fpk_[A-Za-z0-9_-]+)/.exec(stdout)?.[1];
}

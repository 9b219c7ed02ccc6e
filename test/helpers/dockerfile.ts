/**
 * Runs a Dockerfile's steps without Docker (this machine cannot build images): each stage
 * gets a directory standing for its filesystem, COPY copies from the build context or an
 * earlier stage (failing, as `docker build` would, on a missing source), RUN runs its npm
 * commands in the stage's WORKDIR, and ENV, USER, EXPOSE, HEALTHCHECK and CMD are recorded
 * for the caller to start and check. Only the RUN commands this project's Dockerfile uses
 * are understood (npm, `node -e`, mkdir, chown); any other fails, so a new one is taught here
 * rather than skipped.
 */
import { cpSync, existsSync, mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { operatorEnv, run } from './process.ts';

export interface Instruction {
  keyword: string;
  args: string;
}

/** Instructions in order: continuation lines joined, comments and blank lines dropped. */
export function parseDockerfile(text: string): Instruction[] {
  const logical: string[] = [];
  let pending = '';
  for (const line of text.split('\n')) {
    if (pending === '' && /^\s*(#|$)/.test(line)) continue;
    if (/\\\s*$/.test(line)) {
      pending += line.replace(/\\\s*$/, ' ');
      continue;
    }
    logical.push(pending + line);
    pending = '';
  }
  if (pending) logical.push(pending);
  return logical.map((line) => {
    const [, keyword = '', args = ''] = /^\s*(\S+)\s*(.*)$/.exec(line) ?? [];
    return { keyword: keyword.toUpperCase(), args: args.trim() };
  });
}

export interface Stage {
  name: string;
  /** The external image it starts from (null: an earlier stage). */
  image: string | null;
  /** The directory standing for the stage's `/`. */
  root: string;
  workdir: string;
  env: Record<string, string>;
  user: string;
  exposed: string[];
  healthcheck: string[] | null;
  cmd: string[] | null;
}

/** Where an absolute path of the stage's filesystem lies on this machine. */
export const hostPath = (stage: Stage, file: string) =>
  path.join(stage.root, path.posix.resolve(stage.workdir, file));

/** `K=V K2="V 2"`, or the legacy `K V`. */
function parseEnv(args: string): Record<string, string> {
  if (!/^\S+=/.test(args)) {
    const [key = '', ...rest] = args.split(/\s+/);
    return { [key]: rest.join(' ') };
  }
  const env: Record<string, string> = {};
  for (const [, key, quoted, plain] of args.matchAll(/(\w+)=(?:"([^"]*)"|(\S*))/g))
    env[key!] = quoted ?? plain ?? '';
  return env;
}

/** Exec form (a JSON array) only: the shell form would put a shell, not node, at PID 1. */
function execForm(args: string, what: string): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(args);
  } catch {
    throw new Error(`${what} is not in exec form (a JSON array): ${args}`);
  }
  if (!Array.isArray(parsed) || !parsed.every((part) => typeof part === 'string'))
    throw new Error(`${what} is not an array of strings: ${args}`);
  return parsed;
}

export interface RunOptions {
  /** The build context (COPY sources). */
  context: string;
  /** Where the stages' directories are made. */
  workspace: string;
  /** Extra environment for the npm commands (cache use: not part of the image). */
  npmEnv?: Record<string, string>;
  /** Told each RUN step and how long it took. */
  onStep?: (step: string, ms: number) => void;
}

/** Runs every stage in order; the last one is the image. Throws on the first step that fails. */
export async function runDockerfile(text: string, options: RunOptions): Promise<Stage[]> {
  const args: Record<string, string> = {};
  const stages: Stage[] = [];
  let stage: Stage | null = null;
  const substitute = (value: string) =>
    value.replace(
      /\$\{(\w+)\}|\$(\w+)/g,
      (_, a: string | undefined, b: string | undefined) => args[(a ?? b)!] ?? '',
    );

  for (const { keyword, args: rest } of parseDockerfile(text)) {
    if (keyword === 'ARG') {
      const [, name = '', value = ''] = /^(\w+)(?:=(.*))?$/.exec(rest) ?? [];
      args[name] ??= value;
      continue;
    }
    if (keyword === 'FROM') {
      const [, from = '', name] = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(substitute(rest)) ?? [];
      const parent = stages.find((s) => s.name === from);
      const root = path.join(options.workspace, name ?? `stage${stages.length}`);
      mkdirSync(root, { recursive: true });
      if (parent) cpSync(parent.root, root, { recursive: true });
      stage = {
        name: name ?? String(stages.length),
        image: parent ? null : from,
        root,
        workdir: parent?.workdir ?? '/',
        env: { ...parent?.env },
        user: parent?.user ?? 'root',
        exposed: [...(parent?.exposed ?? [])],
        healthcheck: parent?.healthcheck ?? null,
        cmd: parent?.cmd ?? null,
      };
      stages.push(stage);
      continue;
    }
    if (!stage) throw new Error(`${keyword} before any FROM`);
    const current: Stage = stage;
    switch (keyword) {
      case 'WORKDIR':
        current.workdir = path.posix.resolve(current.workdir, substitute(rest));
        mkdirSync(hostPath(current, current.workdir), { recursive: true });
        break;
      case 'ENV':
        Object.assign(current.env, parseEnv(rest));
        break;
      case 'USER':
        current.user = rest;
        break;
      case 'EXPOSE':
        current.exposed.push(...rest.split(/\s+/).map((port) => port.replace(/\/tcp$/, '')));
        break;
      case 'CMD':
        current.cmd = execForm(rest, 'CMD');
        break;
      case 'HEALTHCHECK': {
        const [, command = ''] = /\bCMD\s+(.*)$/.exec(rest) ?? [];
        current.healthcheck = execForm(command, 'HEALTHCHECK CMD');
        break;
      }
      case 'COPY':
        copy(current, rest, stages, options.context);
        break;
      case 'RUN':
        for (const command of commands(rest)) {
          const started = performance.now();
          await runStep(current, command, options.npmEnv ?? {});
          options.onStep?.(`${current.name}: RUN ${command}`, performance.now() - started);
        }
        break;
      default:
        throw new Error(`unsupported instruction ${keyword}: teach test/helpers/dockerfile.ts`);
    }
  }
  return stages;
}

/** A shell-form RUN's `&&`-joined commands (an `&&` inside quotes stays in its command). */
function commands(line: string): string[] {
  const parts: string[] = [];
  let current = '';
  let quote: string | null = null;
  for (let i = 0; i < line.length; i++) {
    const char = line[i]!;
    if (quote) {
      if (char === quote) quote = null;
    } else if (char === '"' || char === "'") {
      quote = char;
    } else if (char === '&' && line[i + 1] === '&') {
      parts.push(current.trim());
      current = '';
      i++;
      continue;
    }
    current += char;
  }
  parts.push(current.trim());
  return parts;
}

function copy(stage: Stage, rest: string, stages: Stage[], context: string): void {
  const words = rest.split(/\s+/);
  const flags = words.filter((word) => word.startsWith('--'));
  const paths = words.filter((word) => !word.startsWith('--'));
  const dest = paths.pop();
  if (!dest || paths.length === 0)
    throw new Error(`COPY needs a source and a destination: ${rest}`);
  const fromName = flags.find((flag) => flag.startsWith('--from='))?.slice('--from='.length);
  const from = fromName === undefined ? null : stages.find((s) => s.name === fromName);
  if (from === undefined) throw new Error(`COPY --from=${fromName}: no such stage`);
  const target = hostPath(stage, dest);
  const intoDirectory = dest.endsWith('/') || paths.length > 1;
  for (const source of paths) {
    const file = from ? hostPath(from, source) : path.join(context, source);
    if (!existsSync(file))
      throw new Error(
        `COPY ${source}: no such file in ${from ? `stage ${from.name}` : 'the build context'}`,
      );
    const to =
      intoDirectory && !statSync(file).isDirectory()
        ? path.join(target, path.basename(file))
        : target;
    mkdirSync(path.dirname(to), { recursive: true });
    cpSync(file, to, { recursive: true });
  }
}

async function runStep(
  stage: Stage,
  command: string,
  npmEnv: Record<string, string>,
): Promise<void> {
  const npmPin = /^npm install -g npm@(\S+)$/.exec(command);
  if (npmPin) {
    // Installs the image's npm; here, the steps must run with that very npm.
    const local = (await run('npm', ['--version'])).stdout.trim();
    if (local !== npmPin[1])
      throw new Error(`the image pins npm ${npmPin[1]}; these steps run with npm ${local}`);
    return;
  }
  if (command === 'npm cache clean --force') return; // the image's cache, not this machine's
  const mkdir = /^mkdir -p (.+)$/.exec(command);
  if (mkdir) {
    for (const dir of mkdir[1]!.split(/\s+/)) mkdirSync(hostPath(stage, dir), { recursive: true });
    return;
  }
  const chown = /^chown (\S+) (.+)$/.exec(command);
  if (chown) {
    for (const file of chown[2]!.split(/\s+/))
      if (!existsSync(hostPath(stage, file))) throw new Error(`chown ${file}: no such file`);
    return;
  }
  // npm, and node scripts given inline, run in the stage's WORKDIR and touch only what is there.
  if (/^(npm|node)\s/.test(command)) {
    const result = await run('sh', ['-c', command], {
      cwd: hostPath(stage, stage.workdir),
      env: operatorEnv({ ...stage.env, ...npmEnv }),
    });
    if (result.code !== 0)
      throw new Error(`RUN ${command} failed (${result.code})\n${result.stdout}\n${result.stderr}`);
    return;
  }
  throw new Error(`unsupported RUN step "${command}": teach test/helpers/dockerfile.ts`);
}

/**
 * `flowplan`: the operator command (CONTRACT §0). Works whether or not the server runs, on the
 * same database; with --json prints one JSON object and nothing else on stdout. Which database
 * it uses goes to stderr; usage errors exit 2, failures 1.
 */
import type { Config } from '../platform/config.ts';
import type { Database } from '../storage/db.ts';
import { parse, UsageError } from './args.ts';
import type { Command } from './command.ts';
import { COMMANDS, GROUPS } from './commands.ts';
import type { Where } from './database.ts';
import { commandHelp, groupHelp, overview } from './help.ts';
import { escapeControls } from './terminal.ts';

type Env = Record<string, string | undefined>;

const isHelp = (arg: string | undefined) => arg === '--help' || arg === '-h';

type Resolved = { kind: 'help'; text: string } | { kind: 'run'; command: Command; argv: string[] };

/** Finds the command (or the help asked for) in the words before the options; UsageError when there is none. */
function resolve(argv: string[]): Resolved {
  const [first, second] = argv;
  if (first === undefined) throw new UsageError('no command given', overview(COMMANDS), '');
  if (isHelp(first)) return { kind: 'help', text: overview(COMMANDS) };
  if (first === 'help') {
    if (argv.length === 1) return { kind: 'help', text: overview(COMMANDS) };
    const found = resolve([...argv.slice(1), '--help']);
    return found.kind === 'help' ? found : { kind: 'help', text: commandHelp(found.command) };
  }
  if (first.startsWith('-'))
    throw new UsageError(`the command comes first, then its options (got ${first})`, undefined, '');
  if (GROUPS.includes(first)) {
    const group = COMMANDS.filter((c) => c.name.startsWith(`${first} `));
    if (second === undefined || second.startsWith('-')) {
      if (isHelp(second)) return { kind: 'help', text: groupHelp(first, group) };
      throw new UsageError(
        `\`flowplan ${first}\` needs a command: ${group.map((c) => c.name.split(' ')[1]).join(', ')}`,
        undefined,
        first,
      );
    }
    const command = group.find((c) => c.name === `${first} ${second}`);
    if (!command) {
      throw new UsageError(
        `unknown command "${first} ${second}": the ${first} commands are ${group.map((c) => c.name.split(' ')[1]).join(', ')}`,
        undefined,
        first,
      );
    }
    return argv.slice(2).some(isHelp)
      ? { kind: 'help', text: commandHelp(command) }
      : { kind: 'run', command, argv: argv.slice(2) };
  }
  const command = COMMANDS.find((c) => c.name === first);
  if (!command) throw new UsageError(`unknown command "${first}"`, undefined, '');
  return argv.slice(1).some(isHelp)
    ? { kind: 'help', text: commandHelp(command) }
    : { kind: 'run', command, argv: argv.slice(1) };
}

/** Where to read more, after a usage error: the command's own help, a group's, or the list. */
function pointer(about: string): string {
  if (!about) return 'Run `flowplan --help` to list the commands.';
  return GROUPS.includes(about)
    ? `Run \`flowplan ${about} --help\` to list its commands.`
    : `Run \`flowplan ${about} --help\` for its options.`;
}

const out = (text: string) => process.stdout.write(`${text}\n`);
const err = (text: string) => process.stderr.write(`${text}\n`);

/** The command and its checked input; or, after printing help or a usage error, the exit code. */
async function prepare(
  argv: string[],
): Promise<{ command: Command; input: unknown; json: boolean } | number> {
  let resolved: Resolved | undefined;
  try {
    resolved = resolve(argv);
    if (resolved.kind === 'help') {
      out(resolved.text);
      return 0;
    }
    const options = parse(resolved.argv, resolved.command.options);
    return {
      command: resolved.command,
      input: await resolved.command.input(options),
      json: options.json === true,
    };
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    if (error.text) err(`${error.text}\n`);
    err(
      `flowplan: ${error.message}. ${pointer(error.about ?? (resolved?.kind === 'run' ? resolved.command.name : ''))}`,
    );
    return 2;
  }
}

async function main(argv: string[], env: Env): Promise<number> {
  const prepared = await prepare(argv);
  if (typeof prepared === 'number') return prepared;
  const { command, input, json } = prepared;
  // Loaded only for a command that runs: help and usage errors (exit 2) need none of them, and
  // the settings' schema and the Postgres driver are most of what a command loads (about 0.6 s
  // of CPU under tsx on a small machine).
  const [{ loadConfig }, { DomainError }, { migrate }, { DatabaseRefused, describe, openFor }] =
    await Promise.all([
      import('../platform/config.ts'),
      import('../platform/errors.ts'),
      import('../storage/migrate.ts'),
      import('./database.ts'),
    ]);
  const fail = (code: string, message: string) => {
    err(`flowplan: ${message}`);
    if (json) out(JSON.stringify({ error: { code, message } }));
    return 1;
  };
  let config: Config;
  try {
    config = loadConfig(env);
  } catch (error) {
    return fail('INVALID_SETTING', (error as Error).message);
  }
  const where: Where = { config, dataDirSet: Boolean(env.FLOWPLAN_DATA_DIR), cwd: process.cwd() };
  err(`flowplan: ${describe(where)}`);
  let database: Database;
  try {
    database = await openFor(where, command.createsDatabase === true, (line) =>
      err(`flowplan: ${line}`),
    );
  } catch (error) {
    return fail(
      error instanceof DatabaseRefused ? error.code : 'INTERNAL',
      (error as Error).message,
    );
  }
  try {
    // An existing flowplan schema is brought up to date first, as the server does at start.
    if (!command.createsDatabase) await migrate(database.sql);
    const { result, text } = await command.run(database.sql, input);
    // Tables escape their cells; a JSON answer's text is escaped as a whole (still the same JSON).
    out(json ? escapeControls(JSON.stringify(result)) : text);
    return 0;
  } catch (error) {
    return fail(error instanceof DomainError ? error.code : 'INTERNAL', (error as Error).message);
  } finally {
    await database.close();
  }
}

process.exit(await main(process.argv.slice(2), process.env));

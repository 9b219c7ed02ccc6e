// @ts-check
/**
 * From the words of a `flowplan` command line to the command that runs and its options; or, for
 * help and bad arguments, what to print and the exit status. Plain JavaScript (type-checked
 * through its JSDoc): bin/flowplan.js answers `--help`, `help COMMAND` and usage errors from
 * here before any TypeScript loader is registered, and main.ts runs the rest.
 */
import { parse, UsageError } from './args.js';
import { COMMANDS, GROUPS } from './commands.js';
import { commandHelp, groupHelp, overview } from './help.js';

/** @typedef {import('./args.js').Options} Options */
/** @typedef {import('./commands.js').CommandSpec} CommandSpec */
/** @typedef {{ kind: 'help', text: string } | { kind: 'run', command: CommandSpec, argv: string[] }} Resolved */

/** @param {string | undefined} arg */
const isHelp = (arg) => arg === '--help' || arg === '-h';

/**
 * Finds the command (or the help asked for) in the words before the options; UsageError when there is none.
 * @param {string[]} argv
 * @returns {Resolved}
 */
function resolve(argv) {
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
    const names = group.map((c) => c.name.split(' ')[1]).join(', ');
    if (second === undefined || second.startsWith('-')) {
      if (isHelp(second)) return { kind: 'help', text: groupHelp(first, group) };
      throw new UsageError(`\`flowplan ${first}\` needs a command: ${names}`, undefined, first);
    }
    const command = group.find((c) => c.name === `${first} ${second}`);
    if (!command) {
      throw new UsageError(
        `unknown command "${first} ${second}": the ${first} commands are ${names}`,
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

/**
 * Where to read more, after a usage error: the command's own help, a group's, or the list.
 * @param {string} about
 */
function pointer(about) {
  if (!about) return 'Run `flowplan --help` to list the commands.';
  return GROUPS.includes(about)
    ? `Run \`flowplan ${about} --help\` to list its commands.`
    : `Run \`flowplan ${about} --help\` for its options.`;
}

/**
 * Prints a usage error (a command's `about` unless the error names another) and gives exit status 2.
 * @param {UsageError} error
 * @param {string} about
 * @returns {number}
 */
export function usageFailure(error, about) {
  if (error.text) process.stderr.write(`${error.text}\n\n`);
  process.stderr.write(`flowplan: ${error.message}. ${pointer(error.about ?? about)}\n`);
  return 2;
}

/**
 * The command to run and its options; or, after printing the help asked for (exit 0) or a usage
 * error (exit 2), the exit status.
 * @param {string[]} argv
 * @returns {{ command: CommandSpec, options: Options } | number}
 */
export function prepare(argv) {
  /** @type {Resolved | undefined} */
  let resolved;
  try {
    resolved = resolve(argv);
    if (resolved.kind === 'help') {
      process.stdout.write(`${resolved.text}\n`);
      return 0;
    }
    return { command: resolved.command, options: parse(resolved.argv, resolved.command.options) };
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    return usageFailure(error, resolved?.kind === 'run' ? resolved.command.name : '');
  }
}

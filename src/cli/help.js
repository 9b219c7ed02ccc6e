// @ts-check
/**
 * The help texts, written from the commands' own specs: every command one line, each option one
 * line. Plain JavaScript (type-checked through its JSDoc), so help needs no TypeScript loader.
 */
import { COMMON_OPTIONS } from './args.js';

/** @typedef {import('./args.js').OptionSpec} OptionSpec */
/** @typedef {import('./commands.js').CommandSpec} CommandSpec */

const WIDTH = 100;

/**
 * @param {string} text
 * @param {string} [indent]
 * @returns {string[]}
 */
function wrap(text, indent = '') {
  /** @type {string[]} */
  const lines = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    if (line && indent.length + line.length + 1 + word.length > WIDTH) {
      lines.push(indent + line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  if (line) lines.push(indent + line);
  return lines;
}

/**
 * Two columns; a long right-hand text wraps under itself.
 * @param {[string, string][]} rows
 * @returns {string[]}
 */
function columns(rows) {
  const width = Math.max(...rows.map(([left]) => left.length));
  const indent = ' '.repeat(width + 5);
  return rows.flatMap(([left, right]) => {
    const [head = '', ...rest] = wrap(right, indent);
    return [`  ${left.padEnd(width)}   ${head.trimStart()}`, ...rest];
  });
}

/**
 * @param {string} name
 * @param {OptionSpec} option
 */
function flag(name, option) {
  return option.type === 'boolean'
    ? `--${name}`
    : `--${name} ${option.value ?? 'X'}${option.multiple ? ' …' : ''}`;
}

/** @param {CommandSpec} command */
export function usageLine(command) {
  const options =
    command.usage ??
    [
      ...Object.entries(command.options).map(([name, o]) =>
        o.required ? flag(name, o) : `[${flag(name, o)}]`,
      ),
      '[--json]',
    ].join(' ');
  return `flowplan ${command.name} ${options}`;
}

/** @param {readonly CommandSpec[]} commands */
export function overview(commands) {
  return [
    'flowplan: the operator command. It works on the database the server uses, whether or not the server runs.',
    '',
    'usage: flowplan COMMAND [options]',
    '       flowplan COMMAND --help   (or: flowplan help COMMAND) its options, each explained, and an example',
    '',
    'commands:',
    ...columns([
      ...commands.map((c) => /** @type {[string, string]} */ ([c.name, c.summary])),
      ['help [COMMAND]', "this list, or one command's options"],
    ]),
    '',
    'every command also takes:',
    ...columns(
      Object.entries(COMMON_OPTIONS).map(([name, o]) => [
        `--${name}`,
        name === 'help' ? "show the command's options and an example" : o.description,
      ]),
    ),
    '',
    ...wrap(
      'The database: DATABASE_URL when set, else the embedded Postgres under FLOWPLAN_DATA_DIR (default: .flowplan in the ' +
        'working directory). Each command names it on stderr. Only `flowplan migrate` creates a database; the others refuse ' +
        'one that does not exist or has no flowplan schema.',
    ),
  ].join('\n');
}

/**
 * `flowplan workspace --help`: the commands of one group.
 * @param {string} group
 * @param {readonly CommandSpec[]} commands
 */
export function groupHelp(group, commands) {
  return [
    `flowplan ${group}: the ${group} commands`,
    '',
    ...columns(commands.map((c) => [c.name, c.summary])),
    '',
    `Run \`flowplan ${group} COMMAND --help\` for a command's options.`,
  ].join('\n');
}

/** @param {CommandSpec} command */
export function commandHelp(command) {
  /** @type {[string, string][]} */
  const rows = Object.entries(command.options).map(([name, o]) => [
    flag(name, o),
    o.required ? `${o.description}; required` : o.description,
  ]);
  rows.push(
    ['--json', `print only JSON on stdout: ${command.json}`],
    ['--help', COMMON_OPTIONS.help.description],
  );
  return [
    `flowplan ${command.name}: ${command.summary}`,
    '',
    `usage: ${usageLine(command)}`,
    '',
    'options:',
    ...columns(rows),
    ...(command.notes ?? []).flatMap((note) => ['', ...wrap(note)]),
    '',
    command.examples.length > 1 ? 'examples:' : 'example:',
    ...command.examples.map((example) => `  ${example}`),
  ].join('\n');
}

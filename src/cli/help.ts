/** The help texts, written from the commands' own specs: every command one line, each option one line. */
import { COMMON_OPTIONS, type OptionSpec } from './args.ts';
import type { Command } from './command.ts';

const WIDTH = 100;

function wrap(text: string, indent = ''): string[] {
  const lines: string[] = [];
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

/** Two columns; a long right-hand text wraps under itself. */
function columns(rows: [string, string][]): string[] {
  const width = Math.max(...rows.map(([left]) => left.length));
  const indent = ' '.repeat(width + 5);
  return rows.flatMap(([left, right]) => {
    const [head, ...rest] = wrap(right, indent);
    return [`  ${left.padEnd(width)}   ${head!.trimStart()}`, ...rest];
  });
}

function flag(name: string, option: OptionSpec): string {
  return option.type === 'boolean'
    ? `--${name}`
    : `--${name} ${option.value ?? 'X'}${option.multiple ? ' …' : ''}`;
}

export function usageLine(command: Command): string {
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

export function overview(commands: readonly Command[]): string {
  return [
    'flowplan: the operator command. It works on the database the server uses, whether or not the server runs.',
    '',
    'usage: flowplan COMMAND [options]',
    '       flowplan COMMAND --help   (or: flowplan help COMMAND) its options, each explained, and an example',
    '',
    'commands:',
    ...columns([
      ...commands.map((c): [string, string] => [c.name, c.summary]),
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

/** `flowplan workspace --help`: the commands of one group. */
export function groupHelp(group: string, commands: readonly Command[]): string {
  return [
    `flowplan ${group}: the ${group} commands`,
    '',
    ...columns(commands.map((c) => [c.name, c.summary])),
    '',
    `Run \`flowplan ${group} COMMAND --help\` for a command's options.`,
  ].join('\n');
}

export function commandHelp(command: Command): string {
  const rows: [string, string][] = Object.entries(command.options).map(([name, o]) => [
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

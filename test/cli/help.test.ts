/**
 * The CLI explains itself: `flowplan --help`, `flowplan help` list every command with what it
 * does; `flowplan COMMAND --help` gives each option's meaning and an example; an unknown command
 * or option is exit 2 with a pointer to the help. None of these opens a database.
 */
import t from 'tap';
import { COMMON_OPTIONS } from '../../src/cli/args.js';
import { COMMANDS } from '../../src/cli/commands.js';
import { commandHelp, usageLine } from '../../src/cli/help.js';
import { implementationOf } from '../../src/cli/implementations.ts';
import { SCOPES } from '../../src/contract/vocabulary.ts';
import { MAX_PASSWORD, MIN_PASSWORD } from '../../src/services/account/password.ts';
import { cli } from '../helpers/server.ts';

/** Help never opens the database: a URL that cannot be reached proves it. */
const NOWHERE = 'postgres://nobody:secret@127.0.0.1:1/nothing';

const EXPECTED = [
  'migrate',
  'workspace create',
  'workspace set',
  'workspace list',
  'user create',
  'user set-password',
  'user list',
  'key create',
  'key list',
  'key revoke',
  'client create',
  'client list',
  'client delete',
  'jobs',
];

t.test('help and usage errors, through the command', async (t) => {
  const [help, helpWord, userCreate, group, unknown, unknownOption, missing] = await Promise.all([
    cli(NOWHERE, ['--help']),
    cli(NOWHERE, ['help']),
    cli(NOWHERE, ['user', 'create', '--help']),
    cli(NOWHERE, ['key', '--help']),
    cli(NOWHERE, ['frobnicate', '--json']),
    cli(NOWHERE, ['user', 'list', '--colour', 'red']),
    cli(NOWHERE, ['key', 'list']),
  ]);

  t.equal(help.code, 0, help.stderr);
  t.equal(help.stderr, '', 'help goes to stdout, and names no database');
  for (const name of EXPECTED) {
    t.match(
      help.stdout,
      new RegExp(`^  ${name} +\\S.{10,}$`, 'm'),
      `--help lists ${name} with a description`,
    );
  }
  t.match(help.stdout, /^ {2}--json +\S/m, 'and the options every command takes');
  t.match(help.stdout, /FLOWPLAN_DATA_DIR/, 'and where the database is found');
  t.equal(helpWord.code, 0);
  t.equal(helpWord.stdout, help.stdout, '`flowplan help` is the same list');

  t.equal(userCreate.code, 0, userCreate.stderr);
  t.match(userCreate.stdout, /^flowplan user create: \S/, 'names the command and what it does');
  t.match(userCreate.stdout, /^usage: flowplan user create --email E /m);
  for (const option of [
    '--email E',
    '--name N',
    '--password P',
    '--workspace W',
    '--role owner|admin|member|viewer',
    '--json',
    '--help',
  ]) {
    t.match(
      userCreate.stdout,
      new RegExp(`^  ${option.replace(/[|]/g, '\\|')} +\\S`, 'm'),
      `${option} with its meaning`,
    );
  }
  t.match(
    userCreate.stdout,
    /^examples?:\n {2}flowplan user create --email \S+@example\.com/m,
    'an example',
  );

  t.equal(group.code, 0);
  t.match(group.stdout, /^ {2}key create +\S/m);
  t.match(group.stdout, /^ {2}key list +\S/m);
  t.match(group.stdout, /^ {2}key revoke +\S/m);
  t.notMatch(group.stdout, /workspace create/, 'a group lists only its own commands');

  t.equal(unknown.code, 2, 'an unknown command is a usage error');
  t.equal(unknown.stdout, '');
  t.match(unknown.stderr, /unknown command "frobnicate".*`flowplan --help`/);
  t.equal(unknownOption.code, 2, 'so is an unknown option');
  t.match(unknownOption.stderr, /unknown option --colour.*`flowplan user list --help`/);
  t.equal(missing.code, 2);
  t.match(missing.stderr, /--workspace is required.*`flowplan key list --help`/);
  for (const result of [unknown, unknownOption, missing])
    t.notMatch(result.stderr, /database/, 'refused before any database is opened');
});

t.test("every command's help, from its spec", async (t) => {
  t.same(
    COMMANDS.map((c) => c.name),
    EXPECTED,
    'every command, in the order --help lists them',
  );
  for (const command of COMMANDS) {
    const text = commandHelp(command);
    t.match(text, new RegExp(`^flowplan ${command.name}: \\S`), `${command.name}: a summary`);
    t.match(text, `usage: ${usageLine(command)}`);
    for (const [name, option] of Object.entries({ ...command.options, ...COMMON_OPTIONS })) {
      t.ok(option.description.length > 10, `${command.name} --${name} says what it means`);
      t.match(
        text,
        new RegExp(`^  --${name}\\b.* +\\S`, 'm'),
        `${command.name} --${name} is in its help`,
      );
    }
    t.ok(command.examples.length > 0, `${command.name} has an example`);
    for (const example of command.examples)
      t.match(example, new RegExp(`^(\\w+=\\S+ )?flowplan ${command.name}\\b`));
  }
});

t.test('the specs, written in plain JavaScript, say what the TypeScript enforces', async (t) => {
  // A command's help, its lines joined: a long option text wraps.
  const help = (name: string) =>
    COMMANDS.filter((c) => c.name === name)
      .map(commandHelp)
      .join('')
      .replace(/\s+/g, ' ');
  for (const name of ['key create', 'client create'])
    t.match(help(name), `some of: ${SCOPES.join(' ')} (quoted`, `${name} lists every scope`);
  for (const name of ['user create', 'user set-password'])
    t.match(
      help(name),
      `${MIN_PASSWORD} to ${MAX_PASSWORD} characters`,
      `${name} gives the password bounds`,
    );
  for (const command of COMMANDS)
    t.type(await implementationOf(command.name), 'object', `${command.name} has its run`);
  await t.rejects(implementationOf('key frobnicate'), /has a spec but no implementation/);
  await t.rejects(implementationOf('frobnicate'), /has a spec but no implementation/);
});

// @ts-check
/**
 * Every command of `flowplan`, in the order `flowplan --help` lists them, as data: its name,
 * one-line summary, options with their meanings and examples drive the parser and the help
 * alike, so the two cannot drift apart. What a command does (its `input` and `run`) is in the
 * TypeScript of its group (credential.commands.ts, …), loaded only when it runs. This file is
 * plain JavaScript (type-checked through its JSDoc) so that the help needs no TypeScript loader:
 * the scopes and the password bounds it shows are written out here, and test/cli/help.test.ts
 * holds them to src/contract/vocabulary.ts and src/services/account/password.ts.
 */

/** @typedef {import('./args.js').OptionSpec} OptionSpec */

/**
 * @typedef {object} CommandSpec
 * @property {string} name `migrate`, `workspace create`.
 * @property {string} summary One line, for `flowplan --help`.
 * @property {string} [usage] The usage after the name, when the options alone would mislead (alternatives, pairs).
 * @property {Record<string, OptionSpec>} options
 * @property {string} json What `--json` prints, in a few words (`{ "id" }`).
 * @property {string[]} [notes] Paragraphs after the options.
 * @property {string[]} examples
 * @property {boolean} [createsDatabase] Only `migrate`: may create the database (every other command refuses a missing one).
 */

const SCOPES_HELP =
  '"all", or some of: flows:read flows:write work:write team:read team:write templates:read ' +
  'notifications:read notifications:write (quoted, space-separated)';

/** @satisfies {Record<string, OptionSpec>} */
const PASSWORD_OPTIONS = {
  'password-stdin': {
    type: 'boolean',
    description:
      'read the password from the first line of stdin (a terminal: asked twice, not shown); ' +
      '10 to 1024 characters; only a scrypt hash is stored',
  },
  password: {
    type: 'string',
    value: 'P',
    description:
      'the password on the command line: discouraged, since shell history and `ps` keep it',
  },
};

/** @type {readonly CommandSpec[]} */
export const COMMANDS = [
  {
    name: 'migrate',
    summary: 'set up the database, or bring its schema up to date',
    options: {},
    json: '{ "applied": [file names] }: the migrations this run applied',
    notes: [
      'With no DATABASE_URL it initialises the embedded Postgres under FLOWPLAN_DATA_DIR when there is none yet. ' +
        'Every other command refuses a database that does not exist or has no flowplan schema.',
    ],
    examples: ['flowplan migrate', 'FLOWPLAN_DATA_DIR=/srv/flowplan flowplan migrate --json'],
    createsDatabase: true,
  },
  {
    name: 'workspace create',
    summary: 'create a workspace (plan pro unless --plan free)',
    options: {
      name: { type: 'string', value: 'N', required: true, description: "the workspace's name" },
      plan: { type: 'string', value: 'free|pro', description: 'its plan (default pro)' },
      seats: {
        type: 'string',
        value: 'N',
        description: 'how many members it may have (default 25 on pro, 2 on free)',
      },
    },
    json: '{ "id" }: the new workspace\'s id',
    examples: ['flowplan workspace create --name Acme --json'],
  },
  {
    name: 'workspace set',
    summary: "change a workspace's plan, past-due flag or seats",
    options: {
      id: { type: 'string', value: 'W', required: true, description: 'the workspace (wsp_…)' },
      plan: { type: 'string', value: 'free|pro', description: 'its new plan' },
      'past-due': {
        type: 'string',
        value: 'true|false',
        description: 'true: every change in the workspace is refused until it is false again',
      },
      seats: { type: 'string', value: 'N', description: 'how many members it may have' },
    },
    json: '{ "id", "plan", "pastDue", "seats" }: the workspace as it now is',
    notes: ['Give at least one of --plan, --past-due, --seats; what is not named stays as it is.'],
    examples: ['flowplan workspace set --id wsp_… --plan free --seats 2'],
  },
  {
    name: 'workspace list',
    summary: 'list the workspaces: plan, seats, members, past due',
    options: {},
    json: '{ "items": [{ "id", "name", "plan", "pastDue", "seats", "members", "createdAt" }] }',
    examples: ['flowplan workspace list', 'flowplan workspace list --json'],
  },
  {
    name: 'user create',
    summary: "create a person's account, or add an existing account to a workspace",
    usage:
      '--email E [--name N --password-stdin] [--workspace W [--role owner|admin|member|viewer]] [--json]',
    options: {
      email: {
        type: 'string',
        value: 'E',
        required: true,
        description: 'their email; an existing account with it (in any letter case) is reused',
      },
      name: { type: 'string', value: 'N', description: 'their name (a new account needs it)' },
      ...PASSWORD_OPTIONS,
      workspace: {
        type: 'string',
        value: 'W',
        description: 'make them a member of this workspace (wsp_…)',
      },
      role: {
        type: 'string',
        value: 'owner|admin|member|viewer',
        description: 'their role there (default member)',
      },
    },
    json: '{ "id" }: the person\'s id, which is also their member id in every workspace',
    notes: [
      'A new account needs --name and a password. Given an email that already has an account, it adds that person to --workspace and ' +
        'prints the same id; with --name or a password it refuses and changes nothing (`flowplan user set-password` sets a password).',
      'In a script, pipe the password in: printf \'%s\\n\' "$PASSWORD" | flowplan user create … --password-stdin (printf is a shell builtin, so it is not in `ps` either).',
    ],
    examples: [
      'flowplan user create --email ada@example.com --name Ada --password-stdin --workspace wsp_… --role owner --json',
      'flowplan user create --email ada@example.com --workspace wsp_… --role viewer',
    ],
  },
  {
    name: 'user set-password',
    summary: "set a person's password and end their sign-ins",
    usage: '(--email E | --id U) --password-stdin [--json]',
    options: {
      email: { type: 'string', value: 'E', description: 'the person, by email (any case)' },
      id: {
        type: 'string',
        value: 'U',
        description: 'the person, by id (usr_…), instead of --email',
      },
      ...PASSWORD_OPTIONS,
    },
    json: '{ "id", "sessionsEnded", "signinsEnded" }',
    notes: [
      "It ends the person's web-app sessions and their apps' sign-ins (refresh tokens and the access tokens issued from them, " +
        'in every workspace): they sign in again, with the new password. API keys and clients are not touched.',
    ],
    examples: [
      'flowplan user set-password --email ada@example.com --password-stdin   # asks for it, twice, on a terminal',
    ],
  },
  {
    name: 'user list',
    summary: 'list people and their workspaces and roles',
    options: {
      workspace: {
        type: 'string',
        value: 'W',
        description: 'only the members of this workspace, with their role there',
      },
    },
    json: '{ "items": [{ "id", "email", "name", "createdAt", "workspaces": [{ "id", "role" }] }] }',
    examples: ['flowplan user list', 'flowplan user list --workspace wsp_… --json'],
  },
  {
    name: 'key create',
    summary: 'create an API key for a workspace (the key is shown once)',
    options: {
      workspace: {
        type: 'string',
        value: 'W',
        required: true,
        description: 'the workspace it acts in (wsp_…)',
      },
      role: {
        type: 'string',
        value: 'admin|member|viewer',
        required: true,
        description: 'the most it may do',
      },
      scopes: {
        type: 'string',
        value: '"s1 s2 …"|all',
        required: true,
        description: `what it may touch: ${SCOPES_HELP}`,
      },
      name: { type: 'string', value: 'N', description: 'a label to know it by' },
    },
    json: '{ "id", "key" }: the key itself appears only here; only its hash is stored',
    examples: [
      'flowplan key create --workspace wsp_… --role member --scopes "flows:read work:write" --name Robot --json',
    ],
  },
  {
    name: 'key list',
    summary: "list a workspace's API keys, revoked ones too (never the keys)",
    options: {
      workspace: {
        type: 'string',
        value: 'W',
        required: true,
        description: 'the workspace (wsp_…)',
      },
    },
    json: '{ "items": [{ "id", "workspaceId", "name", "role", "scopes", "createdAt", "revokedAt" }] }',
    examples: ['flowplan key list --workspace wsp_…'],
  },
  {
    name: 'key revoke',
    summary: 'revoke an API key (or client) and every token it issued',
    options: {
      id: {
        type: 'string',
        value: 'K',
        required: true,
        description: 'the key (key_…) or client (cli_…)',
      },
    },
    json: '{ "id", "revoked": true }',
    examples: ['flowplan key revoke --id key_…'],
  },
  {
    name: 'client create',
    summary: 'register an OAuth client (its secret is shown once)',
    options: {
      workspace: {
        type: 'string',
        value: 'W',
        required: true,
        description: 'the workspace that registers it (wsp_…)',
      },
      role: {
        type: 'string',
        value: 'admin|member|viewer',
        required: true,
        description: 'the most any token it issues may do',
      },
      scopes: {
        type: 'string',
        value: '"s1 s2 …"|all',
        required: true,
        description: `what its tokens may touch: ${SCOPES_HELP}`,
      },
      name: {
        type: 'string',
        value: 'N',
        description: 'the name people see on the consent screen',
      },
      'first-party': {
        type: 'boolean',
        description:
          'an app of this installation: public (PKCE, no secret); people of every workspace sign in through it',
      },
      'redirect-uri': {
        type: 'string',
        value: 'URI',
        multiple: true,
        description: 'where a first-party client receives its codes (repeat for several)',
      },
    },
    json: '{ "clientId", "clientSecret" }: the secret appears only here (null for a first-party client)',
    examples: [
      'flowplan client create --workspace wsp_… --role member --scopes all --name Integration --json',
      'flowplan client create --workspace wsp_… --role admin --scopes all --name "My CLI" --first-party --redirect-uri http://127.0.0.1/callback',
    ],
  },
  {
    name: 'client list',
    summary: 'list OAuth clients, deleted ones too (never their secrets)',
    options: {
      workspace: {
        type: 'string',
        value: 'W',
        description:
          "only those acting in this workspace: its own, and the installation's first-party clients",
      },
    },
    json: '{ "items": [{ "id", "workspaceId", "name", "role", "scopes", "firstParty", "redirectUris", "createdAt", "revokedAt" }] }',
    examples: ['flowplan client list', 'flowplan client list --workspace wsp_… --json'],
  },
  {
    name: 'client delete',
    summary: 'delete an OAuth client and every token it issued',
    options: {
      id: { type: 'string', value: 'C', required: true, description: 'the client (cli_…)' },
    },
    json: '{ "id", "deleted": true }',
    notes: [
      'A first-party client belongs to the installation: deleting it ends the sign-ins through it in every workspace.',
    ],
    examples: ['flowplan client delete --id cli_…'],
  },
  {
    name: 'jobs',
    summary: 'job queues by state, the newest failed jobs, the outbox and webhook backlogs',
    options: {
      failed: {
        type: 'string',
        value: 'N',
        description: 'how many of the newest failed jobs to show (default 20)',
      },
    },
    json: '{ "queues", "failed", "outbox", "webhooks" }',
    examples: ['flowplan jobs --failed 5'],
  },
];

/** The first words of two-word commands: `workspace`, `user`, `key`, `client`. */
export const GROUPS = [
  ...new Set(COMMANDS.filter((c) => c.name.includes(' ')).map((c) => c.name.split(' ')[0] ?? '')),
];

/** `flowplan user create | set-password | list`. */
import { createUser, requireWorkspace } from '../services/auth/provision.ts';
import { hashPassword } from '../services/auth/secrets.ts';
import { MAX_PASSWORD, MIN_PASSWORD, newPasswordProblem } from '../services/account/password.ts';
import { MEMBER_ROLES } from '../contract/vocabulary.ts';
import { DomainError, notFound } from '../platform/errors.ts';
import { endSigninsOf, findPerson } from '../storage/people.store.ts';
import { findUserByEmail, listPeople, setPasswordHash } from '../storage/workspaces.store.ts';
import {
  email,
  name,
  optional,
  required,
  role,
  UsageError,
  type Options,
  type OptionSpec,
} from './args.ts';
import { command, minute } from './command.ts';
import { table } from './table.ts';
import { readPassword } from './secret.ts';

const PASSWORD_OPTIONS = {
  'password-stdin': {
    type: 'boolean',
    description:
      'read the password from the first line of stdin (a terminal: asked twice, not shown); ' +
      `${MIN_PASSWORD} to ${MAX_PASSWORD} characters; only a scrypt hash is stored`,
  },
  password: {
    type: 'string',
    value: 'P',
    description:
      'the password on the command line: discouraged, since shell history and `ps` keep it',
  },
} as const satisfies Record<string, OptionSpec>;

/** The new password from --password-stdin or --password (one of them, when `needed`), held to the one floor. */
async function newPassword(o: Options, needed: boolean): Promise<string | undefined> {
  const inline = o.password;
  if (typeof inline === 'string' && o['password-stdin'] === true)
    throw new UsageError('give --password-stdin or --password, not both');
  let password: string;
  if (o['password-stdin'] === true) password = await readPassword();
  else if (typeof inline === 'string') password = inline;
  else if (needed) throw new UsageError('--password-stdin (or --password) is required');
  else return undefined;
  const problem = newPasswordProblem(password);
  if (problem)
    throw new UsageError(
      `${problem} (the floor of every password here, the invitation's sign-up form's too); nothing was changed`,
    );
  return password;
}

export const userCommands = [
  command({
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
    input: async (o) => {
      const workspaceId = optional(o, 'workspace');
      const roleName = optional(o, 'role');
      if (roleName && !workspaceId) throw new UsageError('--role goes with --workspace');
      const address = email(required(o, 'email'));
      return {
        email: address,
        name: name(optional(o, 'name')),
        password: await newPassword(o, false),
        workspaceId,
        role: workspaceId ? role(roleName ?? 'member', MEMBER_ROLES) : undefined,
      };
    },
    run: async (sql, input) => {
      const existing = await findUserByEmail(sql, input.email);
      if (existing && (input.password !== undefined || input.name !== undefined)) {
        throw new DomainError(
          'VALIDATION_FAILED',
          `${existing.email} has an account already (${existing.id}): nothing was changed, its password and name included. ` +
            `Set its password with \`flowplan user set-password --email ${existing.email} --password-stdin\`; ` +
            'leave out --name and the password to add it to a workspace',
        );
      }
      const { id } = await createUser(sql, input);
      return { result: { id }, text: `user ${id}` };
    },
  }),
  command({
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
    input: async (o) => {
      const byEmail = optional(o, 'email');
      const byId = optional(o, 'id');
      if (!byEmail === !byId) throw new UsageError('give either --email or --id');
      const address = byEmail === undefined ? undefined : email(byEmail);
      return { email: address, id: byId, password: (await newPassword(o, true))! };
    },
    run: async (sql, input) => {
      const person = input.id
        ? await findPerson(sql, input.id)
        : await findUserByEmail(sql, input.email!);
      if (!person) throw notFound('Account', input.id ?? input.email);
      // The hash (a second or two of CPU) is made before the transaction, so no lock waits on it.
      const passwordHash = await hashPassword(input.password);
      const ended = await sql.begin(async (tx) => {
        if (!(await setPasswordHash(tx, person.id, passwordHash)))
          throw notFound('Account', person.id);
        return endSigninsOf(tx, person.id);
      });
      return {
        result: { id: person.id, sessionsEnded: ended.sessions, signinsEnded: ended.signins },
        text: `password of ${person.id} (${person.email}) set; ended ${ended.sessions} web-app session(s) and ${ended.signins} app sign-in(s): they sign in again with the new password`,
      };
    },
  }),
  command({
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
    input: (o) => ({ workspaceId: optional(o, 'workspace') }),
    run: async (sql, input) => {
      if (input.workspaceId) await requireWorkspace(sql, input.workspaceId);
      const rows = await listPeople(sql, input.workspaceId);
      return {
        result: {
          items: rows.map((p) => ({
            id: p.id,
            email: p.email,
            name: p.name,
            createdAt: p.createdAt.toISOString(),
            workspaces: p.workspaces,
          })),
        },
        text: table(
          rows,
          [
            ['ID', (p) => p.id],
            ['EMAIL', (p) => p.email],
            ['NAME', (p) => p.name],
            ['CREATED (UTC)', (p) => minute(p.createdAt)],
            input.workspaceId
              ? ['ROLE', (p) => p.workspaces[0]?.role ?? '-']
              : [
                  'WORKSPACES',
                  (p) => p.workspaces.map((w) => `${w.id} (${w.role})`).join(', ') || '-',
                ],
          ],
          input.workspaceId
            ? `no members in ${input.workspaceId}`
            : 'no people yet: `flowplan user create` makes one',
        ),
      };
    },
  }),
];

/** `flowplan user create | set-password | list`. */
import { MEMBER_ROLES } from '../contract/vocabulary.ts';
import { newPasswordProblem } from '../services/account/password.ts';
import { optional, required, UsageError, type Options } from './args.js';
import { implement, minute } from './command.ts';
import { email, name, role } from './input.ts';
import { readPassword } from './secret.ts';
import { table } from './table.ts';

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

export const userCommands = {
  'user create': implement({
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
      const [{ findUserByEmail }, { DomainError }, { createUser }] = await Promise.all([
        import('../storage/workspaces.store.ts'),
        import('../platform/errors.ts'),
        import('../services/auth/provision.ts'),
      ]);
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
  'user set-password': implement({
    input: async (o) => {
      const byEmail = optional(o, 'email');
      const byId = optional(o, 'id');
      if (!byEmail === !byId) throw new UsageError('give either --email or --id');
      const address = byEmail === undefined ? undefined : email(byEmail);
      return { email: address, id: byId, password: (await newPassword(o, true))! };
    },
    run: async (sql, input) => {
      const [{ endSigninsOf, findPerson }, { findUserByEmail, setPasswordHash }, { notFound }] =
        await Promise.all([
          import('../storage/people.store.ts'),
          import('../storage/workspaces.store.ts'),
          import('../platform/errors.ts'),
        ]);
      const person = input.id
        ? await findPerson(sql, input.id)
        : await findUserByEmail(sql, input.email!);
      if (!person) throw notFound('Account', input.id ?? input.email);
      // The hash (a second or two of CPU) is made before the transaction, so no lock waits on it.
      const { hashPassword } = await import('../services/auth/secrets.ts');
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
  'user list': implement({
    input: (o) => ({ workspaceId: optional(o, 'workspace') }),
    run: async (sql, input) => {
      const [{ requireWorkspace }, { listPeople }] = await Promise.all([
        import('../services/auth/provision.ts'),
        import('../storage/workspaces.store.ts'),
      ]);
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
};

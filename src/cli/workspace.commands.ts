/** `flowplan workspace create | set | list`. */
import { optional, required, UsageError } from './args.js';
import { implement, minute } from './command.ts';
import { bool, count, name, plan } from './input.ts';
import { table } from './table.ts';

export const workspaceCommands = {
  'workspace create': implement({
    input: (o) => ({
      name: name(required(o, 'name')),
      plan: plan(optional(o, 'plan')),
      seats: count(optional(o, 'seats'), 'seats'),
    }),
    run: async (sql, input) => {
      const { createWorkspace } = await import('../services/auth/provision.ts');
      const { id } = await createWorkspace(sql, input);
      return { result: { id }, text: `workspace ${id}` };
    },
  }),
  'workspace set': implement({
    input: (o) => {
      const changes = {
        plan: plan(optional(o, 'plan')),
        pastDue: bool(optional(o, 'past-due'), 'past-due'),
        seats: count(optional(o, 'seats'), 'seats'),
      };
      if (Object.values(changes).every((v) => v === undefined))
        throw new UsageError('give at least one of --plan, --past-due, --seats');
      return { id: required(o, 'id'), changes };
    },
    run: async (sql, input) => {
      const { setWorkspace } = await import('../services/auth/provision.ts');
      const row = await setWorkspace(sql, input.id, input.changes);
      return {
        result: { id: row.id, plan: row.plan, pastDue: row.pastDue, seats: row.seats },
        text: `workspace ${row.id}: plan ${row.plan}, past due ${row.pastDue}, seats ${row.seats}`,
      };
    },
  }),
  'workspace list': implement({
    input: () => ({}),
    run: async (sql) => {
      const { listWorkspaces } = await import('../storage/workspaces.store.ts');
      const rows = await listWorkspaces(sql);
      return {
        result: {
          items: rows.map((w) => ({
            id: w.id,
            name: w.name,
            plan: w.plan,
            pastDue: w.pastDue,
            seats: w.seats,
            members: w.members,
            createdAt: w.createdAt.toISOString(),
          })),
        },
        text: table(
          rows,
          [
            ['ID', (w) => w.id],
            ['NAME', (w) => w.name],
            ['PLAN', (w) => w.plan],
            ['MEMBERS', (w) => `${w.members}/${w.seats}`],
            ['PAST DUE', (w) => (w.pastDue ? 'yes' : 'no')],
            ['CREATED (UTC)', (w) => minute(w.createdAt)],
          ],
          'no workspaces yet: `flowplan workspace create --name N` makes one',
        ),
      };
    },
  }),
};

/** `flowplan workspace create | set | list`. */
import { createWorkspace, setWorkspace } from '../services/auth/provision.ts';
import { listWorkspaces } from '../storage/workspaces.store.ts';
import { bool, count, name, optional, plan, required, UsageError } from './args.ts';
import { command, minute } from './command.ts';
import { table } from './table.ts';

export const workspaceCommands = [
  command({
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
    input: (o) => ({
      name: name(required(o, 'name')),
      plan: plan(optional(o, 'plan')),
      seats: count(optional(o, 'seats'), 'seats'),
    }),
    run: async (sql, input) => {
      const { id } = await createWorkspace(sql, input);
      return { result: { id }, text: `workspace ${id}` };
    },
  }),
  command({
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
      const row = await setWorkspace(sql, input.id, input.changes);
      return {
        result: { id: row.id, plan: row.plan, pastDue: row.pastDue, seats: row.seats },
        text: `workspace ${row.id}: plan ${row.plan}, past due ${row.pastDue}, seats ${row.seats}`,
      };
    },
  }),
  command({
    name: 'workspace list',
    summary: 'list the workspaces: plan, seats, members, past due',
    options: {},
    json: '{ "items": [{ "id", "name", "plan", "pastDue", "seats", "members", "createdAt" }] }',
    examples: ['flowplan workspace list', 'flowplan workspace list --json'],
    input: () => ({}),
    run: async (sql) => {
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
];

/** `flowplan key create | list | revoke` and `flowplan client create | list | delete`. */
import { ROLES, SCOPES, type Scope } from '../services/auth/principal.ts';
import {
  createClient,
  createKey,
  deleteClient,
  requireWorkspace,
} from '../services/auth/provision.ts';
import { notFound } from '../platform/errors.ts';
import {
  listClientsFor,
  listKeysOf,
  revokeCredential,
  type CredentialAdminRow,
} from '../storage/credentials.store.ts';
import { name, optional, required, role, scopes, UsageError } from './args.ts';
import { command, minute } from './command.ts';
import { table } from './table.ts';

const SCOPES_HELP = `"all", or some of: ${SCOPES.join(' ')} (quoted, space-separated)`;

function scopeText(granted: Scope[]): string {
  return SCOPES.every((s) => granted.includes(s)) ? 'all' : granted.join(' ');
}

/** A key or client as the lists print it: no secret, no hash. */
function view(row: CredentialAdminRow) {
  return {
    id: row.id,
    workspaceId: row.workspaceId,
    name: row.name,
    role: row.role,
    scopes: row.scopes,
    createdAt: row.createdAt.toISOString(),
    revokedAt: row.revokedAt?.toISOString() ?? null,
  };
}

export const keyCommands = [
  command({
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
    input: (o) => ({
      workspaceId: required(o, 'workspace'),
      role: role(required(o, 'role'), ROLES),
      scopes: scopes(required(o, 'scopes')),
      name: name(optional(o, 'name')),
    }),
    run: async (sql, input) => {
      const created = await createKey(sql, input);
      return { result: created, text: `key ${created.id} (shown once, keep it):\n${created.key}` };
    },
  }),
  command({
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
    input: (o) => ({ workspaceId: required(o, 'workspace') }),
    run: async (sql, input) => {
      await requireWorkspace(sql, input.workspaceId);
      const rows = await listKeysOf(sql, input.workspaceId);
      return {
        result: { items: rows.map(view) },
        text: table(
          rows,
          [
            ['ID', (k) => k.id],
            ['NAME', (k) => k.name ?? '-'],
            ['ROLE', (k) => k.role],
            ['CREATED (UTC)', (k) => minute(k.createdAt)],
            ['REVOKED (UTC)', (k) => minute(k.revokedAt)],
            ['SCOPES', (k) => scopeText(k.scopes)],
          ],
          `no API keys in ${input.workspaceId}`,
        ),
      };
    },
  }),
  command({
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
    input: (o) => ({ id: required(o, 'id') }),
    run: async (sql, input) => {
      if (!(await revokeCredential(sql, input.id))) throw notFound('Credential', input.id);
      return { result: { id: input.id, revoked: true }, text: `revoked ${input.id}` };
    },
  }),
];

export const clientCommands = [
  command({
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
    input: (o) => {
      const firstParty = o['first-party'] === true;
      const redirectUris = (o['redirect-uri'] as string[] | undefined) ?? [];
      if (firstParty && redirectUris.length === 0)
        throw new UsageError('a --first-party client needs at least one --redirect-uri');
      if (!firstParty && redirectUris.length > 0)
        throw new UsageError('--redirect-uri goes with --first-party');
      for (const uri of redirectUris)
        if (!URL.canParse(uri)) throw new UsageError(`--redirect-uri is not a URL: ${uri}`);
      return {
        workspaceId: required(o, 'workspace'),
        role: role(required(o, 'role'), ROLES),
        scopes: scopes(required(o, 'scopes')),
        name: name(optional(o, 'name')),
        firstParty,
        redirectUris,
      };
    },
    run: async (sql, input) => {
      const created = await createClient(sql, input);
      return {
        result: created,
        text: `client ${created.clientId}${created.clientSecret ? `\nsecret (shown once, keep it): ${created.clientSecret}` : ' (public: no secret)'}`,
      };
    },
  }),
  command({
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
    input: (o) => ({ workspaceId: optional(o, 'workspace') }),
    run: async (sql, input) => {
      if (input.workspaceId) await requireWorkspace(sql, input.workspaceId);
      const rows = await listClientsFor(sql, input.workspaceId);
      return {
        result: {
          items: rows.map((c) => ({
            ...view(c),
            firstParty: c.firstParty,
            redirectUris: c.redirectUris,
          })),
        },
        text: table(
          rows,
          [
            ['ID', (c) => c.id],
            ['NAME', (c) => c.name ?? '-'],
            ['KIND', (c) => (c.firstParty ? 'first-party' : 'confidential')],
            ['WORKSPACE', (c) => c.workspaceId],
            ['ROLE', (c) => c.role],
            ['CREATED (UTC)', (c) => minute(c.createdAt)],
            ['DELETED (UTC)', (c) => minute(c.revokedAt)],
            ['SCOPES', (c) => scopeText(c.scopes)],
          ],
          input.workspaceId ? `no clients act in ${input.workspaceId}` : 'no OAuth clients yet',
        ),
      };
    },
  }),
  command({
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
    input: (o) => ({ id: required(o, 'id') }),
    run: async (sql, input) => {
      const { firstParty } = await deleteClient(sql, input.id);
      return {
        result: { id: input.id, deleted: true },
        text: `deleted client ${input.id}${firstParty ? ' (first-party: its sign-ins in every workspace ended)' : ''}`,
      };
    },
  }),
];

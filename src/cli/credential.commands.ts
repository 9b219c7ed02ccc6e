/** `flowplan key create | list | revoke` and `flowplan client create | list | delete`. */
import type { CredentialAdminRow } from '../storage/credentials.store.ts';
import { ROLES, SCOPES, type Scope } from '../contract/vocabulary.ts';
import { optional, required, UsageError } from './args.js';
import { implement, minute } from './command.ts';
import { name, role, scopes } from './input.ts';
import { table } from './table.ts';

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

export const keyCommands = {
  'key create': implement({
    input: (o) => ({
      workspaceId: required(o, 'workspace'),
      role: role(required(o, 'role'), ROLES),
      scopes: scopes(required(o, 'scopes')),
      name: name(optional(o, 'name')),
    }),
    run: async (sql, input) => {
      const { createKey } = await import('../services/auth/provision.ts');
      const created = await createKey(sql, input);
      return { result: created, text: `key ${created.id} (shown once, keep it):\n${created.key}` };
    },
  }),
  'key list': implement({
    input: (o) => ({ workspaceId: required(o, 'workspace') }),
    run: async (sql, input) => {
      const [{ requireWorkspace }, { listKeysOf }] = await Promise.all([
        import('../services/auth/provision.ts'),
        import('../storage/credentials.store.ts'),
      ]);
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
  'key revoke': implement({
    input: (o) => ({ id: required(o, 'id') }),
    run: async (sql, input) => {
      const [{ revokeCredential }, { notFound }] = await Promise.all([
        import('../storage/credentials.store.ts'),
        import('../platform/errors.ts'),
      ]);
      if (!(await revokeCredential(sql, input.id))) throw notFound('Credential', input.id);
      return { result: { id: input.id, revoked: true }, text: `revoked ${input.id}` };
    },
  }),
};

export const clientCommands = {
  'client create': implement({
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
      const { createClient } = await import('../services/auth/provision.ts');
      const created = await createClient(sql, input);
      return {
        result: created,
        text: `client ${created.clientId}${created.clientSecret ? `\nsecret (shown once, keep it): ${created.clientSecret}` : ' (public: no secret)'}`,
      };
    },
  }),
  'client list': implement({
    input: (o) => ({ workspaceId: optional(o, 'workspace') }),
    run: async (sql, input) => {
      const [{ requireWorkspace }, { listClientsFor }] = await Promise.all([
        import('../services/auth/provision.ts'),
        import('../storage/credentials.store.ts'),
      ]);
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
  'client delete': implement({
    input: (o) => ({ id: required(o, 'id') }),
    run: async (sql, input) => {
      const { deleteClient } = await import('../services/auth/provision.ts');
      const { firstParty } = await deleteClient(sql, input.id);
      return {
        result: { id: input.id, deleted: true },
        text: `deleted client ${input.id}${firstParty ? ' (first-party: its sign-ins in every workspace ended)' : ''}`,
      };
    },
  }),
};

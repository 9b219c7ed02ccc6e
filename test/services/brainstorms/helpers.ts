/** What the brainstorm tests share: a server with room in its rate budget, and row counts that show nothing was written. */
import type { Test } from 'tap';
import { SCOPES } from '../../../src/services/auth/principal.ts';
import { createKey, createWorkspace } from '../../../src/services/auth/provision.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import type { Brainstorm } from '../../helpers/wire.ts';

export const server = (t: Test) =>
  startTestServer(t, { rateLimitPerMinute: 1_000_000, rateLimitBurst: 1_000_000 });

export const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

/** Another pro workspace with an admin key holding every scope. */
export async function otherWorkspace(
  s: TestServer,
  name = 'Other',
): Promise<{ id: string; key: string }> {
  const { id } = await createWorkspace(s.sql, { name, plan: 'pro' });
  const { key } = await createKey(s.sql, { workspaceId: id, role: 'admin', scopes: [...SCOPES] });
  return { id, key };
}

/** Every brainstorm row of the database, in a form `t.same` compares: proof that a refusal wrote nothing. */
export async function everything(s: TestServer): Promise<unknown> {
  const [counts] = await s.sql`select
    (select count(*) from brainstorms)::int as brainstorms,
    (select count(*) from ideas)::int as ideas,
    (select count(*) from idea_comments)::int as comments,
    (select count(*) from idea_attachments)::int as files,
    (select count(*) from brainstorm_shares)::int as shares,
    (select coalesce(sum(version), 0)::int from brainstorms) as versions,
    (select string_agg(id || ':' || coalesce(parent_id, '-') || ':' || title || ':' || coalesce(notes, '-'), ',' order by id) from ideas) as tree`;
  return counts;
}

export async function newBrainstorm(
  t: Test,
  s: TestServer,
  body: Record<string, unknown>,
  token = s.adminKey,
): Promise<Brainstorm> {
  const res = await s.api<Brainstorm>('POST', '/v1/brainstorms', { token, body });
  t.equal(res.status, 201, `created ${String(body.name)}`);
  return res.body;
}

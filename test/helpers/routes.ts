/**
 * Test-only routes registered on a running edge, for the JSON-body, idempotency and access
 * mechanics that no platform route exercises yet. Writes go to a real table (`echo_rows`),
 * so a test can prove that a refused request wrote nothing.
 */
import { DomainError } from '../../src/platform/errors.ts';
import { AUTH_CHANNEL } from '../../src/storage/credentials.store.ts';
import { Type } from '@sinclair/typebox';
import { json, route, type Route } from '../../src/web/http/route.ts';
import { Defaulted } from '../../src/contract/common.schema.ts';
import type { TestServer } from './server.ts';

export const EchoBody = Type.Object(
  { name: Type.String({ maxLength: 50 }), count: Type.Optional(Type.Integer()) },
  { additionalProperties: false },
);

export interface TestRoutes {
  /** Set to make the echo handler wait until the promise settles. */
  gate: Promise<void> | null;
  /** Called when a gated handler has started (it is then holding its Idempotency-Key). */
  onEnter: (() => void) | null;
  /** How many more echo calls throw a non-API error (a 500 on our side). */
  failures: number;
  /** Handler invocations so far (a replay or a refusal does not count). */
  calls: number;
  rows(): Promise<number>;
}

export async function addTestRoutes(s: TestServer): Promise<TestRoutes> {
  await s.sql`create table if not exists echo_rows (
    id serial primary key, name text not null, count integer, credential_id text not null, path text not null)`;
  const state: TestRoutes = {
    gate: null,
    onEnter: null,
    failures: 0,
    calls: 0,
    rows: async () =>
      (await s.sql<{ n: number }[]>`select count(*)::int as n from echo_rows`)[0]!.n,
  };
  const write = async (
    body: { name: string; count?: number },
    credentialId: string,
    path: string,
  ) => {
    state.calls += 1;
    if (state.gate) {
      state.onEnter?.();
      await state.gate;
    }
    if (state.failures > 0) {
      state.failures -= 1;
      throw new Error('simulated failure on our side');
    }
    if (body.name === 'missing') throw new DomainError('NOT_FOUND', 'Nothing called missing');
    const [row] = await s.sql<
      { id: number }[]
    >`insert into echo_rows (name, count, credential_id, path)
      values (${body.name}, ${body.count ?? null}, ${credentialId}, ${path}) returning id`;
    return json(201, { ...body, id: row!.id });
  };
  const routes: Route[] = [
    route({
      method: 'POST',
      path: '/v1/test/echo',
      operationId: 'echo',
      summary: 'echo',
      auth: 'bearer',
      scopes: ['flows:write'],
      minRole: 'member',
      body: EchoBody,
      responses: { 201: { description: 'ok' } },
      handler: ({ body, principal }) => write(body, principal.credentialId, '/v1/test/echo'),
    }),
    route({
      // No minRole: only the write method makes it a write.
      method: 'POST',
      path: '/v1/test/echo-any',
      operationId: 'echoAny',
      summary: 'echo, any role',
      auth: 'bearer',
      scopes: ['flows:write'],
      body: EchoBody,
      responses: { 201: { description: 'ok' } },
      handler: ({ body, principal }) => write(body, principal.credentialId, '/v1/test/echo-any'),
    }),
    route({
      method: 'POST',
      path: '/v1/test/admin',
      operationId: 'adminOnly',
      summary: 'admin only',
      auth: 'bearer',
      scopes: ['flows:write'],
      minRole: 'admin',
      body: EchoBody,
      responses: { 201: { description: 'ok' } },
      handler: ({ body, principal }) => write(body, principal.credentialId, '/v1/test/admin'),
    }),
    route({
      // A read over POST (like exports): not a write.
      method: 'POST',
      path: '/v1/test/lookup',
      operationId: 'lookup',
      summary: 'read over POST',
      auth: 'bearer',
      scopes: ['flows:read'],
      write: false,
      body: EchoBody,
      responses: { 200: { description: 'ok' } },
      handler: ({ body }) => json(200, { found: body.name }),
    }),
    route({
      method: 'GET',
      path: '/v1/test/items/{itemId}',
      operationId: 'getItem',
      summary: 'read with params and query',
      auth: 'bearer',
      scopes: ['flows:read'],
      params: Type.Object({
        itemId: Type.String({ pattern: '^itm_[A-Za-z0-9_-]+$', maxLength: 64 }),
      }),
      query: Type.Object(
        { size: Defaulted(Type.Integer({ minimum: 1, maximum: 100, default: 25 })) },
        { additionalProperties: false },
      ),
      responses: { 200: { description: 'ok' } },
      handler: ({ params, query }) => json(200, { id: params.itemId, size: query.size }),
    }),
    route({
      // No credential, a budget per client address (as public views have).
      method: 'GET',
      path: '/test/address',
      operationId: 'address',
      summary: 'the caller address',
      auth: 'none',
      rateLimit: 'address',
      responses: { 200: { description: 'ok' } },
      handler: ({ remoteAddress }) => json(200, { remoteAddress }),
    }),
  ];
  s.app.edge.add(routes);
  return state;
}

/** A promise and the function that settles it. */
export function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/**
 * Runs an operator command and, when it succeeds, waits until the server has received the
 * change notice it sends (LISTEN/NOTIFY on the server's own listen connection, whose handlers
 * run in order: the server's cache is dropped before this resolves). Cached credentials are
 * invalidated by that notice, so "the very next request" is the next one after it arrived.
 */
export async function afterAuthChange<T extends { code: number }>(
  s: TestServer,
  action: () => Promise<T>,
): Promise<T> {
  let noticed!: () => void;
  const notice = new Promise<void>((resolve) => (noticed = resolve));
  const { unlisten } = await s.sql.listen(AUTH_CHANNEL, () => noticed());
  try {
    const result = await action();
    if (result.code === 0) await notice;
    return result;
  } finally {
    await unlisten();
  }
}

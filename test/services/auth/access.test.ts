/**
 * What a credential may do (spec §1, §5): scopes, roles, the viewer rule, the plan gate on
 * every /v1 route but GET /v1/me, past-due subscriptions, changes taking effect on the very
 * next request, and the order of the checks (401 before 403, 403 before 400).
 */
import t from 'tap';
import { SCOPES } from '../../../src/services/auth/principal.ts';
import { createKey, createWorkspace } from '../../../src/services/auth/provision.ts';
import { addTestRoutes, afterAuthChange } from '../../helpers/routes.ts';
import { assertError, cli, startTestServer } from '../../helpers/server.ts';
import type { Context, Refusal } from '../../helpers/wire.ts';

t.test('access', async (t) => {
  const s = await startTestServer(t);
  const echo = await addTestRoutes(s);
  const key = async (
    role: 'admin' | 'member' | 'viewer',
    scopes: readonly string[] = SCOPES,
    workspaceId = s.workspaceId,
  ) =>
    (await createKey(s.sql, { workspaceId, role, scopes: scopes as (typeof SCOPES)[number][] }))
      .key;
  // Read only when refused: what a refusal's details say.
  const write = (token: string, path = '/v1/test/echo', body: unknown = { name: 'w' }) =>
    s.api<Refusal>('POST', path, { token, body });

  t.test('a missing scope is 403 INSUFFICIENT_SCOPE', async (t) => {
    const readOnly = await key('admin', ['flows:read']);
    const res = await write(readOnly);
    assertError(t, res, 403, 'INSUFFICIENT_SCOPE');
    t.same(res.body.error.details.missing, ['flows:write'], 'details name the missing scope');
    const writeOnly = await key('admin', ['flows:write']);
    assertError(
      t,
      await s.api('GET', '/v1/test/items/itm_1', { token: writeOnly }),
      403,
      'INSUFFICIENT_SCOPE',
      'a read needs its scope too',
    );
    assertError(
      t,
      await s.api('POST', '/v1/test/lookup', { token: writeOnly, body: { name: 'x' } }),
      403,
      'INSUFFICIENT_SCOPE',
    );
    t.equal(
      (await s.api('GET', '/v1/me', { token: writeOnly })).status,
      200,
      '/v1/me needs no scope',
    );
    t.equal(await echo.rows(), 0);
  });

  t.test('a viewer with every scope is refused every write with 403 FORBIDDEN', async (t) => {
    const viewer = await key('viewer');
    for (const path of ['/v1/test/echo', '/v1/test/echo-any', '/v1/test/admin']) {
      const res = await write(viewer, path);
      assertError(t, res, 403, 'FORBIDDEN', `${path}`);
    }
    t.equal(await echo.rows(), 0, 'nothing written');
    t.equal(echo.calls, 0, 'no handler ran');
    t.equal(
      (await s.api('GET', '/v1/test/items/itm_1', { token: viewer })).status,
      200,
      'reads are fine',
    );
    t.equal(
      (await s.api('POST', '/v1/test/lookup', { token: viewer, body: { name: 'x' } })).status,
      200,
      'a read over POST is not a write',
    );

    // Every write route of the running service refuses a viewer before looking at the input.
    const writes = s.app.edge.router.routes.filter(
      (r) => r.auth === 'bearer' && (r.write ?? r.method !== 'GET'),
    );
    t.ok(writes.length >= 3);
    for (const route of writes) {
      const res = await s.api(route.method, fill(route.path), { token: viewer, body: {} });
      assertError(t, res, 403, 'FORBIDDEN', `viewer: ${route.method} ${route.path}`);
    }
  });

  t.test('a role below minRole is 403 FORBIDDEN', async (t) => {
    const member = await key('member');
    const admin = await key('admin');
    const res = await write(member, '/v1/test/admin');
    assertError(t, res, 403, 'FORBIDDEN');
    t.match(res.body.error.details, { role: 'member', minRole: 'admin' });
    t.equal(await echo.rows(), 0);
    t.equal((await write(member, '/v1/test/echo')).status, 201, 'a member may make member writes');
    t.equal((await write(admin, '/v1/test/admin')).status, 201, 'an admin may make admin writes');
    t.equal(await echo.rows(), 2);
    await s.sql`delete from echo_rows`;
  });

  t.test('free plan: 403 PLAN_REQUIRED on every /v1 route but GET /v1/me', async (t) => {
    const { id } = await createWorkspace(s.sql, { name: 'Free', plan: 'free' });
    const free = await key('admin', SCOPES, id);
    const me = await s.api<Context>('GET', '/v1/me', { token: free });
    t.equal(me.status, 200);
    t.equal(me.body.plan, 'free');
    const gated = s.app.edge.router.routes.filter(
      (r) => r.auth === 'bearer' && !(r.method === 'GET' && r.path === '/v1/me'),
    );
    t.ok(gated.length >= 5, `${gated.length} gated routes`);
    for (const route of gated) {
      const res = await s.api(route.method, fill(route.path), {
        token: free,
        body: route.method === 'GET' ? undefined : { name: 'x' },
      });
      assertError(t, res, 403, 'PLAN_REQUIRED', `${route.method} ${route.path}`);
    }
    t.equal(await echo.rows(), 0, 'nothing written');
    for (const route of s.app.edge.router.routes.filter((r) => r.auth === 'bearer')) {
      t.ok(route.path.startsWith('/v1/'), `${route.path} is under /v1`);
    }
  });

  t.test(
    'past due: writes 403 SUBSCRIPTION_PAST_DUE, reads fine, from the very next request',
    async (t) => {
      const { id } = await createWorkspace(s.sql, { name: 'Late payer', plan: 'pro' });
      const member = await key('member', SCOPES, id);
      t.equal((await write(member)).status, 201, 'writes work while paid');
      t.equal((await s.api('GET', '/v1/me', { token: member })).status, 200, 'principal is cached');

      const set = await afterAuthChange(s, () =>
        cli(s.databaseUrl, ['workspace', 'set', '--id', id, '--past-due', 'true']),
      );
      t.equal(set.code, 0, set.stderr);
      assertError(
        t,
        await write(member),
        403,
        'SUBSCRIPTION_PAST_DUE',
        'the next write is refused',
      );
      assertError(t, await write(member, '/v1/test/echo-any'), 403, 'SUBSCRIPTION_PAST_DUE');
      t.equal((await s.api('GET', '/v1/me', { token: member })).status, 200, 'reads still work');
      t.equal((await s.api('GET', '/v1/test/items/itm_1', { token: member })).status, 200);
      t.equal(
        (await s.api('POST', '/v1/test/lookup', { token: member, body: { name: 'x' } })).status,
        200,
        'a read over POST still works',
      );
      t.equal((await write(s.adminKey)).status, 201, 'other workspaces are unaffected');
      t.equal(await echo.rows(), 2, 'only the paid writes landed');

      const paid = await afterAuthChange(s, () =>
        cli(s.databaseUrl, ['workspace', 'set', '--id', id, '--past-due', 'false']),
      );
      t.equal(paid.code, 0, paid.stderr);
      t.equal((await write(member)).status, 201, 'writes work again on the next request');
      await s.sql`delete from echo_rows`;
    },
  );

  t.test('plan change through the CLI takes effect on the very next request', async (t) => {
    const { id } = await createWorkspace(s.sql, { name: 'Downgrader', plan: 'pro' });
    const member = await key('member', SCOPES, id);
    t.equal((await s.api('GET', '/v1/test/items/itm_1', { token: member })).status, 200);
    const down = await afterAuthChange(s, () =>
      cli(s.databaseUrl, ['workspace', 'set', '--id', id, '--plan', 'free']),
    );
    t.equal(down.code, 0, down.stderr);
    assertError(
      t,
      await s.api('GET', '/v1/test/items/itm_1', { token: member }),
      403,
      'PLAN_REQUIRED',
      'reads refused',
    );
    assertError(t, await write(member), 403, 'PLAN_REQUIRED', 'writes refused');
    const me = await s.api<Context>('GET', '/v1/me', { token: member });
    t.equal(me.status, 200);
    t.equal(me.body.plan, 'free', '/v1/me reports the new plan');
    const up = await afterAuthChange(s, () =>
      cli(s.databaseUrl, ['workspace', 'set', '--id', id, '--plan', 'pro']),
    );
    t.equal(up.code, 0, up.stderr);
    t.equal(
      (await s.api('GET', '/v1/test/items/itm_1', { token: member })).status,
      200,
      'back on pro',
    );
    t.equal((await s.api<Context>('GET', '/v1/me', { token: member })).body.plan, 'pro');
    t.equal(await echo.rows(), 0);
  });

  t.test('order of checks', async (t) => {
    const { id } = await createWorkspace(s.sql, { name: 'Order', plan: 'free' });
    const freeViewer = await key('viewer', ['flows:read'], id);
    const revoked = await createKey(s.sql, {
      workspaceId: id,
      role: 'viewer',
      scopes: ['flows:read'],
    });
    const calls = echo.calls;
    t.equal(
      (await afterAuthChange(s, () => cli(s.databaseUrl, ['key', 'revoke', '--id', revoked.id])))
        .code,
      0,
    );

    // 401 before any 403, and before the body is looked at.
    assertError(
      t,
      await s.api('POST', '/v1/test/admin', {
        raw: 'not json',
        headers: { 'content-type': 'text/plain' },
      }),
      401,
      'UNAUTHORIZED',
      'no credential',
    );
    assertError(
      t,
      await s.api('POST', '/v1/test/admin', { token: 'fpk_nope', body: { bad: 1 } }),
      401,
      'UNAUTHORIZED',
      'unknown credential',
    );
    assertError(
      t,
      await s.api('POST', '/v1/test/admin', { token: revoked.key, body: { bad: 1 } }),
      401,
      'CREDENTIAL_REVOKED',
      'revoked, on a free plan, lacking scope and role',
    );
    // Plan, then scope, then role.
    assertError(
      t,
      await write(freeViewer, '/v1/test/admin'),
      403,
      'PLAN_REQUIRED',
      'free plan first',
    );
    const proViewer = await key('viewer', ['flows:read']);
    assertError(
      t,
      await write(proViewer, '/v1/test/admin'),
      403,
      'INSUFFICIENT_SCOPE',
      'then scope',
    );
    // 403 before 400/415: a refused caller learns nothing about the input rules.
    const viewer = await key('viewer');
    assertError(
      t,
      await s.api('POST', '/v1/test/echo', { token: viewer, body: { bad: 1 } }),
      403,
      'FORBIDDEN',
      'role before validation',
    );
    assertError(
      t,
      await s.api('POST', '/v1/test/echo', {
        token: viewer,
        raw: 'x',
        headers: { 'content-type': 'text/plain' },
      }),
      403,
      'FORBIDDEN',
      'role before media type',
    );
    t.equal(await echo.rows(), 0);
    t.equal(echo.calls, calls, 'no handler ran');
  });
});

/** A concrete path for a route template: placeholders get a plausible id. */
function fill(path: string): string {
  return path.replace(
    /\{(\w+)\}/g,
    (_, name: string) => `${name.replace(/Id$/, '').slice(0, 3).toLowerCase()}_x1`,
  );
}

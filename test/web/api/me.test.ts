import t from 'tap';
import { SCOPES } from '../../../src/services/auth/principal.ts';
import { createKey, createWorkspace } from '../../../src/services/auth/provision.ts';
import { assertError, cli, startTestServer } from '../../helpers/server.ts';
import type { Context } from '../../helpers/wire.ts';

t.test('GET /v1/me answers the Context of the calling key', async (t) => {
  const s = await startTestServer(t);
  const res = await s.api<Context>('GET', '/v1/me', { token: s.adminKey });
  t.equal(res.status, 200);
  t.same(res.body, {
    workspaceId: s.workspaceId,
    workspaceName: 'Demo',
    credentialId: res.body.credentialId,
    credentialName: 'Demo admin key',
    role: 'admin',
    scopes: [...SCOPES],
    plan: 'pro',
  });
  t.match(res.body.credentialId, /^key_/);
  t.equal(res.headers.get('vary'), 'Authorization, Accept');
  t.ok(res.headers.get('etag'));
  t.match(res.headers.get('content-type'), /^application\/json/);
});

t.test('free plan: /v1/me reports plan free instead of refusing', async (t) => {
  const s = await startTestServer(t);
  const { id } = await createWorkspace(s.sql, { name: 'Tiny', plan: 'free' });
  const { key } = await createKey(s.sql, {
    workspaceId: id,
    role: 'viewer',
    scopes: ['flows:read'],
  });
  const res = await s.api<Context>('GET', '/v1/me', { token: key });
  t.equal(res.status, 200);
  t.equal(res.body.plan, 'free');
  t.equal(res.body.role, 'viewer');
  t.same(res.body.scopes, ['flows:read']);
  t.equal((await cli(s.databaseUrl, ['workspace', 'set', '--id', id, '--plan', 'pro'])).code, 0);
  t.equal(
    (await s.api<Context>('GET', '/v1/me', { token: key })).body.plan,
    'pro',
    'a plan change by the operator shows on the next request',
  );
});

t.test('missing, malformed and unknown credentials are 401 UNAUTHORIZED', async (t) => {
  const s = await startTestServer(t);
  for (const authorization of [
    undefined,
    '',
    'Bearer',
    'Bearer ',
    s.adminKey,
    `Basic ${Buffer.from('a:b').toString('base64')}`,
    'Bearer fpk_unknown',
    'Token abc',
    `Bearer ${s.adminKey} extra`,
  ]) {
    const res = await s.api('GET', '/v1/me', {
      headers: authorization === undefined ? {} : { authorization },
    });
    assertError(t, res, 401, 'UNAUTHORIZED', `authorization ${JSON.stringify(authorization)}`);
    t.match(res.headers.get('www-authenticate'), /^Bearer/);
  }
});

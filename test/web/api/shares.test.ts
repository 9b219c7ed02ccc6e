import t, { type Test } from 'tap';
import { SCOPES } from '../../../src/services/auth/principal.ts';
import { createKey, createWorkspace } from '../../../src/services/auth/provision.ts';
import { assertError, startTestServer, type TestServer } from '../../helpers/server.ts';
import { createPerson } from '../../helpers/people.ts';
import type { Flow, MemberList, Refusal, Share, ShareList } from '../../helpers/wire.ts';

const server = (t: Test) =>
  startTestServer(t, { rateLimitPerMinute: 1_000_000, rateLimitBurst: 1_000_000 });
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

async function newFlow(t: Test, s: TestServer, name: string, token = s.adminKey): Promise<string> {
  const res = await s.api<Flow>('POST', '/v1/flows', { token, body: { name } });
  t.equal(res.status, 201, `flow ${name}`);
  return res.body.id;
}

async function workspace(s: TestServer, seats?: number) {
  const { id } = await createWorkspace(s.sql, {
    name: 'Other',
    plan: 'pro',
    ...(seats === undefined ? {} : { seats }),
  });
  const { key } = await createKey(s.sql, { workspaceId: id, role: 'admin', scopes: [...SCOPES] });
  return { id, key };
}

const shareRows = (s: TestServer) =>
  s.sql`select id, flow_id, email, role, created_at from shares order by id`;

t.test('shares: create, list, share again to change the role', async (t) => {
  const s = await server(t);
  const flowId = await newFlow(t, s, 'Launch');
  const otherFlow = await newFlow(t, s, 'Other');

  const first = await s.api<Share>('POST', `/v1/flows/${flowId}/shares`, {
    token: s.adminKey,
    body: { email: 'Gina@Example.com' },
  });
  t.equal(first.status, 201);
  t.match(first.body, { email: 'Gina@Example.com', role: 'viewer', flowId });
  t.match(first.body.id, /^shr_/);
  t.match(first.body.createdAt, ISO);
  t.same(Object.keys(first.body).sort(), ['createdAt', 'email', 'flowId', 'id', 'role']);
  const second = await s.api<Share>('POST', `/v1/flows/${flowId}/shares`, {
    token: s.adminKey,
    body: { email: 'hugo@example.com', role: 'commenter' },
  });
  t.equal(second.status, 201);
  t.equal(second.body.role, 'commenter');
  // The same address on another flow is another share.
  const elsewhere = await s.api<Share>('POST', `/v1/flows/${otherFlow}/shares`, {
    token: s.adminKey,
    body: { email: 'gina@example.com' },
  });
  t.equal(elsewhere.status, 201);
  t.not(elsewhere.body.id, first.body.id);

  const list = await s.api('GET', `/v1/flows/${flowId}/shares`, { token: s.adminKey });
  t.equal(list.status, 200);
  t.same(list.body, { total: 2, items: [first.body, second.body] }, 'oldest first, this flow only');
  t.ok(list.headers.get('etag'));

  const again = await s.api('POST', `/v1/flows/${flowId}/shares`, {
    token: s.adminKey,
    body: { email: ' GINA@example.com', role: 'commenter' },
  });
  t.equal(again.status, 201);
  t.same(again.body, { ...first.body, role: 'commenter' }, 'the same share, with the new role');
  const after = await s.api('GET', `/v1/flows/${flowId}/shares`, { token: s.adminKey });
  t.same(after.body, { total: 2, items: [{ ...first.body, role: 'commenter' }, second.body] });

  const page = await s.api('GET', `/v1/flows/${flowId}/shares?size=1&from=1`, {
    token: s.adminKey,
  });
  t.same(page.body, { total: 2, items: [second.body] });
  t.same((await s.api('GET', `/v1/flows/${flowId}/shares?from=5`, { token: s.adminKey })).body, {
    total: 2,
    items: [],
  });

  const memberKey = await createKey(s.sql, {
    workspaceId: s.workspaceId,
    role: 'member',
    scopes: ['flows:read', 'flows:write'],
  });
  t.equal(
    (
      await s.api('POST', `/v1/flows/${flowId}/shares`, {
        token: memberKey.key,
        body: { email: 'ivy@example.com' },
      })
    ).status,
    201,
    'a member may share',
  );
  const viewerKey = await createKey(s.sql, {
    workspaceId: s.workspaceId,
    role: 'viewer',
    scopes: ['flows:read'],
  });
  t.equal(
    (await s.api<ShareList>('GET', `/v1/flows/${flowId}/shares`, { token: viewerKey.key })).body
      .total,
    3,
    'a viewer may read shares',
  );
});

t.test('shares: refusals write nothing', async (t) => {
  const s = await server(t);
  const flowId = await newFlow(t, s, 'Launch');
  const other = await workspace(s);
  const foreignFlow = await newFlow(t, s, 'Theirs', other.key);
  t.equal(
    (
      await s.api('POST', `/v1/flows/${flowId}/shares`, {
        token: s.adminKey,
        body: { email: 'gina@example.com' },
      })
    ).status,
    201,
  );
  const before = await shareRows(s);

  for (const email of [
    '',
    'gina',
    'gina@',
    '@example.com',
    'gi na@example.com',
    'gina@example',
    'gina@@example.com',
    'gina@example..com',
  ]) {
    assertError(
      t,
      await s.api('POST', `/v1/flows/${flowId}/shares`, { token: s.adminKey, body: { email } }),
      400,
      'INVALID_EMAIL',
      JSON.stringify(email),
    );
  }
  for (const body of [
    {},
    { email: 'ok@example.com', role: 'admin' },
    { email: 'ok@example.com', flowId },
    { email: ['ok@example.com'] },
  ]) {
    assertError(
      t,
      await s.api('POST', `/v1/flows/${flowId}/shares`, { token: s.adminKey, body }),
      400,
      'VALIDATION_FAILED',
      JSON.stringify(body),
    );
  }
  for (const id of [foreignFlow, 'flw_unknown']) {
    assertError(
      t,
      await s.api('POST', `/v1/flows/${id}/shares`, {
        token: s.adminKey,
        body: { email: 'ok@example.com' },
      }),
      404,
      'NOT_FOUND',
      `share ${id}`,
    );
    assertError(
      t,
      await s.api('GET', `/v1/flows/${id}/shares`, { token: s.adminKey }),
      404,
      'NOT_FOUND',
      `list ${id}`,
    );
  }
  const viewerKey = await createKey(s.sql, {
    workspaceId: s.workspaceId,
    role: 'viewer',
    scopes: [...SCOPES],
  });
  assertError(
    t,
    await s.api('POST', `/v1/flows/${flowId}/shares`, {
      token: viewerKey.key,
      body: { email: 'ok@example.com' },
    }),
    403,
    'FORBIDDEN',
  );
  const readOnly = await createKey(s.sql, {
    workspaceId: s.workspaceId,
    role: 'admin',
    scopes: ['flows:read'],
  });
  assertError(
    t,
    await s.api('POST', `/v1/flows/${flowId}/shares`, {
      token: readOnly.key,
      body: { email: 'ok@example.com' },
    }),
    403,
    'INSUFFICIENT_SCOPE',
  );
  const teamOnly = await createKey(s.sql, {
    workspaceId: s.workspaceId,
    role: 'admin',
    scopes: ['team:read'],
  });
  assertError(
    t,
    await s.api('GET', `/v1/flows/${flowId}/shares`, { token: teamOnly.key }),
    403,
    'INSUFFICIENT_SCOPE',
  );
  t.same(await shareRows(s), before, 'nothing written by any refusal');
});

t.test('guests never occupy a seat and are never members', async (t) => {
  const s = await server(t);
  const ws = await workspace(s, 2);
  await createPerson(s.sql, {
    email: 'ann@example.com',
    name: 'Ann',
    password: 'correct horse battery',
    workspaceId: ws.id,
    role: 'owner',
  });
  const flowId = await newFlow(t, s, 'Launch', ws.key);
  for (let i = 0; i < 6; i++) {
    const res = await s.api('POST', `/v1/flows/${flowId}/shares`, {
      token: ws.key,
      body: { email: `guest${i}@example.com`, role: i % 2 ? 'commenter' : 'viewer' },
    });
    t.equal(res.status, 201);
  }
  // A guest who has an account is still no member here.
  await createPerson(s.sql, {
    email: 'guest0@example.com',
    name: 'Guest Zero',
    password: 'correct horse battery',
  });

  t.equal(
    (await s.api('POST', '/v1/team/invites', { token: ws.key, body: { email: 'bea@example.com' } }))
      .status,
    201,
    'the last seat is free whatever the guests',
  );
  const full = await s.api<Refusal>('POST', '/v1/team/invites', {
    token: ws.key,
    body: { email: 'cal@example.com' },
  });
  assertError(t, full, 403, 'PLAN_LIMIT_REACHED');
  t.same(full.body.error.details, { limit: 2, used: 2 });

  // A guest may still be invited to become a member (a seat permitting); the share stays.
  const members = await s.api<MemberList>('GET', '/v1/team/members', { token: ws.key });
  t.same(
    members.body.items.map((m: { email: string }) => m.email),
    ['ann@example.com'],
  );
  t.equal(
    (await s.api<ShareList>('GET', `/v1/flows/${flowId}/shares`, { token: ws.key })).body.total,
    6,
  );
});

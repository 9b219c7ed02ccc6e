import t, { type Test } from 'tap';
import { SCOPES, type MemberRole } from '../../../src/services/auth/principal.ts';
import { createKey, createWorkspace } from '../../../src/services/auth/provision.ts';
import { acceptInvite } from '../../../src/services/team/invites.service.ts';
import { assertError, cli, startTestServer, type TestServer } from '../../helpers/server.ts';
import { createPerson, personToken } from '../../helpers/people.ts';
import type {
  Context,
  Flow,
  Invite,
  InviteList,
  JsonDocument,
  Member,
  MemberList,
  Refusal,
} from '../../helpers/wire.ts';

const PASSWORD = 'correct horse battery';
let people = 0;

const server = (t: Test) =>
  startTestServer(t, { rateLimitPerMinute: 1_000_000, rateLimitBurst: 1_000_000 });

/** A person with a membership; their id is the member id. */
async function person(
  s: TestServer,
  name: string,
  options: { workspaceId?: string; role?: MemberRole; email?: string } = {},
) {
  people++;
  const email = options.email ?? `${name.toLowerCase()}.${people}@example.com`;
  const { id } = await createPerson(s.sql, {
    email,
    name,
    password: PASSWORD,
    workspaceId: options.workspaceId ?? s.workspaceId,
    role: options.role ?? 'member',
  });
  return { id, name, email, role: options.role ?? 'member' };
}

/** A pro workspace with an admin key holding every scope. */
async function workspace(s: TestServer, seats?: number) {
  const { id } = await createWorkspace(s.sql, {
    name: `W${++people}`,
    plan: 'pro',
    ...(seats === undefined ? {} : { seats }),
  });
  const { key } = await createKey(s.sql, { workspaceId: id, role: 'admin', scopes: [...SCOPES] });
  return { id, key };
}

/** Every stored row the team routes could write. */
async function stored(s: TestServer) {
  return {
    memberships:
      await s.sql`select workspace_id, user_id, role from memberships order by workspace_id, user_id`,
    invites: await s.sql`select id, workspace_id, email, role, status from invites order by id`,
  };
}

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

t.test(
  'GET /v1/team/members lists the people of this workspace only, in join order, never guests',
  async (t) => {
    const s = await server(t);
    const owner = await person(s, 'Olive', { role: 'owner' });
    const admin = await person(s, 'Ada', { role: 'admin' });
    const bob = await person(s, 'Bob');
    const vic = await person(s, 'Vic', { role: 'viewer' });
    const other = await workspace(s);
    await person(s, 'Stranger', { workspaceId: other.id });
    // A guest with an account elsewhere, shared on a flow here: not a member.
    const guest = await person(s, 'Guest', { workspaceId: other.id });
    const flow = await s.api<Flow>('POST', '/v1/flows', {
      token: s.adminKey,
      body: { name: 'Launch' },
    });
    t.equal(
      (
        await s.api('POST', `/v1/flows/${flow.body.id}/shares`, {
          token: s.adminKey,
          body: { email: guest.email },
        })
      ).status,
      201,
    );

    const res = await s.api('GET', '/v1/team/members', { token: s.adminKey });
    t.equal(res.status, 200);
    const view = (p: { id: string; name: string; email: string; role: string }) => ({
      id: p.id,
      name: p.name,
      email: p.email,
      role: p.role,
      hoursPerDay: 8,
    });
    t.same(res.body, { total: 4, items: [owner, admin, bob, vic].map(view) });
    t.ok(res.headers.get('etag'));

    const page = await s.api('GET', '/v1/team/members?size=2&from=1', { token: s.adminKey });
    t.same(page.body, { total: 4, items: [admin, bob].map(view) });
    const past = await s.api('GET', '/v1/team/members?from=10', { token: s.adminKey });
    t.same(past.body, { total: 4, items: [] }, 'total stays the total past the end');
    for (const query of ['size=0', 'size=101', 'from=-1', 'size=abc']) {
      assertError(
        t,
        await s.api('GET', `/v1/team/members?${query}`, { token: s.adminKey }),
        400,
        'VALIDATION_FAILED',
        query,
      );
    }

    const otherList = await s.api<MemberList>('GET', '/v1/team/members', { token: other.key });
    t.same(
      otherList.body.items.map((m: { name: string }) => m.name),
      ['Stranger', 'Guest'],
    );

    const noScope = await createKey(s.sql, {
      workspaceId: s.workspaceId,
      role: 'admin',
      scopes: ['flows:read'],
    });
    assertError(
      t,
      await s.api('GET', '/v1/team/members', { token: noScope.key }),
      403,
      'INSUFFICIENT_SCOPE',
    );
    const viewer = await createKey(s.sql, {
      workspaceId: s.workspaceId,
      role: 'viewer',
      scopes: ['team:read'],
    });
    t.equal(
      (await s.api('GET', '/v1/team/members', { token: viewer.key })).status,
      200,
      'a viewer may read the team',
    );
  },
);

t.test(
  'PATCH /v1/team/members/{memberId} changes a role; owner, strangers and weak credentials are refused',
  async (t) => {
    const s = await server(t);
    const owner = await person(s, 'Olive', { role: 'owner' });
    const bob = await person(s, 'Bob');
    const other = await workspace(s);
    const stranger = await person(s, 'Stranger', { workspaceId: other.id });

    const res = await s.api('PATCH', `/v1/team/members/${bob.id}`, {
      token: s.adminKey,
      body: { role: 'admin' },
    });
    t.equal(res.status, 200);
    t.same(res.body, { id: bob.id, name: 'Bob', email: bob.email, role: 'admin', hoursPerDay: 8 });
    const listed = await s.api<MemberList>('GET', '/v1/team/members', { token: s.adminKey });
    t.equal(listed.body.items.find((m: { id: string }) => m.id === bob.id)?.role, 'admin');
    const again = await s.api<Member>('PATCH', `/v1/team/members/${bob.id}`, {
      token: s.adminKey,
      body: { role: 'admin' },
    });
    t.same(again.body.role, 'admin', 'setting the same role again is harmless');

    const before = await stored(s);
    const memberKey = await createKey(s.sql, {
      workspaceId: s.workspaceId,
      role: 'member',
      scopes: [...SCOPES],
    });
    const viewerKey = await createKey(s.sql, {
      workspaceId: s.workspaceId,
      role: 'viewer',
      scopes: [...SCOPES],
    });
    const readOnly = await createKey(s.sql, {
      workspaceId: s.workspaceId,
      role: 'admin',
      scopes: ['team:read'],
    });
    const refusals: [string, string, unknown, string, number, string][] = [
      ['owner', owner.id, { role: 'member' }, s.adminKey, 403, 'FORBIDDEN'],
      ['unknown member', 'usr_nobody', { role: 'member' }, s.adminKey, 404, 'NOT_FOUND'],
      ["another workspace's member", stranger.id, { role: 'viewer' }, s.adminKey, 404, 'NOT_FOUND'],
      ['member key', bob.id, { role: 'viewer' }, memberKey.key, 403, 'FORBIDDEN'],
      ['viewer key', bob.id, { role: 'viewer' }, viewerKey.key, 403, 'FORBIDDEN'],
      [
        'key without team:write',
        bob.id,
        { role: 'viewer' },
        readOnly.key,
        403,
        'INSUFFICIENT_SCOPE',
      ],
      [
        'owner is not a settable role',
        bob.id,
        { role: 'owner' },
        s.adminKey,
        400,
        'VALIDATION_FAILED',
      ],
      ['role missing', bob.id, {}, s.adminKey, 400, 'VALIDATION_FAILED'],
      [
        'unknown field',
        bob.id,
        { role: 'viewer', name: 'x' },
        s.adminKey,
        400,
        'VALIDATION_FAILED',
      ],
    ];
    for (const [what, id, body, token, status, code] of refusals) {
      assertError(
        t,
        await s.api('PATCH', `/v1/team/members/${id}`, { token, body }),
        status,
        code,
        what,
      );
    }
    const ownerRefusal = await s.api<Refusal>('PATCH', `/v1/team/members/${owner.id}`, {
      token: s.adminKey,
      body: { role: 'admin' },
    });
    t.same(ownerRefusal.body.error.details, { memberId: owner.id, role: 'owner' });
    t.match(ownerRefusal.body.error.message, /owner/);
    const otherRefusal = await s.api<Refusal>('PATCH', `/v1/team/members/${stranger.id}`, {
      token: s.adminKey,
      body: { role: 'viewer' },
    });
    t.notOk(otherRefusal.body.error.details, 'a 404 says nothing about the other workspace');
    t.same(await stored(s), before, 'nothing written by any refusal');
  },
);

t.test(
  "PATCH hoursPerDay: 0–24 in quarter hours, the owner's too, shown on members; bad input changes nothing",
  async (t) => {
    const s = await server(t);
    const owner = await person(s, 'Olive', { role: 'owner' });
    const bob = await person(s, 'Bob');
    const hoursOf = async () =>
      Object.fromEntries(
        (await s.api<MemberList>('GET', '/v1/team/members', { token: s.adminKey })).body.items.map(
          (m) => [m.id, m.hoursPerDay],
        ),
      );
    t.match(await hoursOf(), { [owner.id]: 8, [bob.id]: 8 }, 'a day is 8 hours unless said');

    const patch = (id: string, body: unknown, token = s.adminKey) =>
      s.api<Member>('PATCH', `/v1/team/members/${id}`, { token, body });
    const half = await patch(bob.id, { hoursPerDay: 7.5 });
    t.equal(half.status, 200);
    t.strictSame(half.body, {
      id: bob.id,
      name: 'Bob',
      email: bob.email,
      role: 'member',
      hoursPerDay: 7.5,
    });
    t.match((await patch(owner.id, { hoursPerDay: 0 })).body, { role: 'owner', hoursPerDay: 0 });
    t.match((await patch(bob.id, { role: 'viewer', hoursPerDay: 24 })).body, {
      role: 'viewer',
      hoursPerDay: 24,
    });
    const said = await hoursOf();
    t.match(said, { [owner.id]: 0, [bob.id]: 24 });

    const memberKey = await createKey(s.sql, {
      workspaceId: s.workspaceId,
      role: 'member',
      scopes: [...SCOPES],
    });
    const refusals: [string, string, unknown, string, number, string][] = [
      ['more than a day', bob.id, { hoursPerDay: 24.25 }, s.adminKey, 400, 'VALIDATION_FAILED'],
      ['negative', bob.id, { hoursPerDay: -1 }, s.adminKey, 400, 'VALIDATION_FAILED'],
      ['not a quarter hour', bob.id, { hoursPerDay: 7.3 }, s.adminKey, 400, 'VALIDATION_FAILED'],
      ['a string', bob.id, { hoursPerDay: '8' }, s.adminKey, 400, 'VALIDATION_FAILED'],
      ['null', bob.id, { hoursPerDay: null }, s.adminKey, 400, 'VALIDATION_FAILED'],
      ['member key', bob.id, { hoursPerDay: 4 }, memberKey.key, 403, 'FORBIDDEN'],
      // The owner's role is refused, and so is the whole change: the hours stay.
      [
        "with the owner's role",
        owner.id,
        { role: 'admin', hoursPerDay: 6 },
        s.adminKey,
        403,
        'FORBIDDEN',
      ],
      ['unknown member', 'usr_nobody', { hoursPerDay: 4 }, s.adminKey, 404, 'NOT_FOUND'],
    ];
    for (const [what, id, body, token, status, code] of refusals)
      assertError(t, await patch(id, body, token), status, code, what);
    const refusal = await s.api<Refusal>('PATCH', `/v1/team/members/${bob.id}`, {
      token: s.adminKey,
      body: { hoursPerDay: 25 },
    });
    t.equal(refusal.body.error.details.errors?.[0]?.pointer, '/hoursPerDay', 'names the field');
    t.strictSame(await hoursOf(), said, "no refusal changed anyone's hours");
  },
);

t.test("a role change takes effect at once for the person's tokens", async (t) => {
  const s = await server(t);
  const ada = await person(s, 'Ada', { role: 'admin' });
  const token = await personToken(s, ada.id, s.workspaceId);
  const me = await s.api<Context>('GET', '/v1/me', { token });
  t.equal(me.body.role, 'admin');
  t.equal(me.body.userId, ada.id);
  t.equal(
    (await s.api('POST', '/v1/team/invites', { token, body: { email: 'first@example.com' } }))
      .status,
    201,
    'admin may invite',
  );

  t.equal(
    (
      await s.api('PATCH', `/v1/team/members/${ada.id}`, {
        token: s.adminKey,
        body: { role: 'viewer' },
      })
    ).status,
    200,
  );
  t.equal(
    (await s.api<Context>('GET', '/v1/me', { token })).body.role,
    'viewer',
    'the next request sees the new role',
  );
  const before = await stored(s);
  assertError(
    t,
    await s.api('POST', '/v1/team/invites', { token, body: { email: 'second@example.com' } }),
    403,
    'FORBIDDEN',
  );
  t.same(await stored(s), before);

  t.equal(
    (
      await s.api('PATCH', `/v1/team/members/${ada.id}`, {
        token: s.adminKey,
        body: { role: 'member' },
      })
    ).status,
    200,
  );
  t.equal((await s.api<Context>('GET', '/v1/me', { token })).body.role, 'member');
});

t.test('invites: create, list newest first, answer a pending duplicate, revoke', async (t) => {
  const s = await server(t);
  const first = await s.api<Invite>('POST', '/v1/team/invites', {
    token: s.adminKey,
    body: { email: 'Dana@Example.com' },
  });
  t.equal(first.status, 201);
  t.match(first.body, { email: 'Dana@Example.com', role: 'member', status: 'pending' });
  t.match(first.body.id, /^inv_/);
  t.match(first.body.createdAt, ISO);
  const second = await s.api('POST', '/v1/team/invites', {
    token: s.adminKey,
    body: { email: '  eve@example.com ', role: 'admin' },
  });
  t.equal(second.status, 201);
  t.match(
    second.body,
    { email: 'eve@example.com', role: 'admin', status: 'pending' },
    'surrounding white space is dropped',
  );

  const list = await s.api('GET', '/v1/team/invites', { token: s.adminKey });
  t.equal(list.status, 200);
  t.same(list.body, { total: 2, items: [second.body, first.body] }, 'newest first');

  // The same address again, in another case: the pending invite, not a second one.
  const duplicate = await s.api('POST', '/v1/team/invites', {
    token: s.adminKey,
    body: { email: 'dana@example.COM', role: 'viewer' },
  });
  t.equal(duplicate.status, 200);
  t.same(
    duplicate.body,
    { ...first.body, role: 'viewer' },
    'the existing invite, with the role asked for now',
  );
  t.equal(
    (await s.api<InviteList>('GET', '/v1/team/invites', { token: s.adminKey })).body.total,
    2,
    'no duplicate',
  );

  const revoked = await s.api('DELETE', `/v1/team/invites/${first.body.id}`, { token: s.adminKey });
  t.equal(revoked.status, 200);
  t.same(revoked.body, { ...first.body, role: 'viewer', status: 'revoked' });
  const twice = await s.api('DELETE', `/v1/team/invites/${first.body.id}`, { token: s.adminKey });
  t.equal(twice.status, 200, 'revoking twice is harmless');
  t.same(twice.body, revoked.body);

  const pending = await s.api('GET', '/v1/team/invites?status=pending', { token: s.adminKey });
  t.same(pending.body, { total: 1, items: [second.body] });
  const page = await s.api('GET', '/v1/team/invites?size=1&from=1', { token: s.adminKey });
  t.same(page.body, { total: 2, items: [revoked.body] });
  assertError(
    t,
    await s.api('GET', '/v1/team/invites?status=lost', { token: s.adminKey }),
    400,
    'VALIDATION_FAILED',
  );

  // A revoked address can be invited again: a new invite.
  const renewed = await s.api<Invite>('POST', '/v1/team/invites', {
    token: s.adminKey,
    body: { email: 'dana@example.com' },
  });
  t.equal(renewed.status, 201);
  t.not(renewed.body.id, first.body.id);
});

t.test(
  'invites: malformed addresses, members, unknown invites and weak credentials are refused, writing nothing',
  async (t) => {
    const s = await server(t);
    await person(s, 'Bob', { email: 'bob@example.com' });
    const other = await workspace(s);
    const foreign = await s.api<Invite>('POST', '/v1/team/invites', {
      token: other.key,
      body: { email: 'x@example.com' },
    });
    t.equal(foreign.status, 201);
    const before = await stored(s);

    const malformed = [
      '',
      ' ',
      'plainaddress',
      '@example.com',
      'dana@',
      'dana@example',
      'dana@@example.com',
      'da na@example.com',
      'dana@exa mple.com',
      '.dana@example.com',
      'dana.@example.com',
      'da..na@example.com',
      'dana@-example.com',
      'dana@example-.com',
      'dana@example..com',
      'dana@.example.com',
      'dana@example.c',
      'dana@example.123',
      'dana@example.com.',
      '"dana"@example.com',
      'dana@[127.0.0.1]',
      'dän@example.com',
      'dana@exämple.com',
      'Dana <dana@example.com>',
      'dana\n@example.com',
      'dana@exam\tple.com',
      `${'a'.repeat(65)}@example.com`,
      `dana@${'a'.repeat(64)}.com`,
    ];
    for (const email of malformed) {
      assertError(
        t,
        await s.api('POST', '/v1/team/invites', { token: s.adminKey, body: { email } }),
        400,
        'INVALID_EMAIL',
        JSON.stringify(email),
      );
    }
    const tooLong = `${'a'.repeat(60)}@${'b'.repeat(60)}.${'c'.repeat(60)}.${'d'.repeat(60)}.${'e'.repeat(10)}.com`;
    t.ok(tooLong.length > 254);
    assertError(
      t,
      await s.api('POST', '/v1/team/invites', { token: s.adminKey, body: { email: tooLong } }),
      400,
      'VALIDATION_FAILED',
      'over 254 characters',
    );
    for (const body of [
      {},
      { email: 42 },
      { email: 'ok@example.com', role: 'owner' },
      { email: 'ok@example.com', extra: 1 },
    ]) {
      assertError(
        t,
        await s.api('POST', '/v1/team/invites', { token: s.adminKey, body }),
        400,
        'VALIDATION_FAILED',
        JSON.stringify(body),
      );
    }

    for (const email of ['bob@example.com', 'BOB@example.com', ' Bob@Example.com ']) {
      assertError(
        t,
        await s.api('POST', '/v1/team/invites', { token: s.adminKey, body: { email } }),
        400,
        'ALREADY_MEMBER',
        email,
      );
    }

    const memberKey = await createKey(s.sql, {
      workspaceId: s.workspaceId,
      role: 'member',
      scopes: [...SCOPES],
    });
    const viewerKey = await createKey(s.sql, {
      workspaceId: s.workspaceId,
      role: 'viewer',
      scopes: [...SCOPES],
    });
    const readOnly = await createKey(s.sql, {
      workspaceId: s.workspaceId,
      role: 'admin',
      scopes: ['team:read'],
    });
    for (const [what, token, code] of [
      ['member key', memberKey.key, 'FORBIDDEN'],
      ['viewer key', viewerKey.key, 'FORBIDDEN'],
      ['no team:write', readOnly.key, 'INSUFFICIENT_SCOPE'],
    ] as const) {
      assertError(
        t,
        await s.api('POST', '/v1/team/invites', { token, body: { email: 'ok@example.com' } }),
        403,
        code,
        `invite with ${what}`,
      );
      assertError(
        t,
        await s.api('DELETE', `/v1/team/invites/${foreign.body.id}`, { token }),
        403,
        code,
        `revoke with ${what}`,
      );
    }
    assertError(
      t,
      await s.api('GET', '/v1/team/invites', {
        token: (
          await createKey(s.sql, {
            workspaceId: s.workspaceId,
            role: 'admin',
            scopes: ['flows:read'],
          })
        ).key,
      }),
      403,
      'INSUFFICIENT_SCOPE',
    );
    assertError(
      t,
      await s.api('DELETE', '/v1/team/invites/inv_unknown', { token: s.adminKey }),
      404,
      'NOT_FOUND',
    );
    assertError(
      t,
      await s.api('DELETE', `/v1/team/invites/${foreign.body.id}`, { token: s.adminKey }),
      404,
      'NOT_FOUND',
      "another workspace's invite",
    );
    t.same(await stored(s), before, 'nothing written by any refusal');
    t.same((await s.api('GET', '/v1/team/invites', { token: s.adminKey })).body, {
      total: 0,
      items: [],
    });
  },
);

t.test('an accepted invite makes a member and cannot be revoked', async (t) => {
  const s = await server(t);
  const ws = await workspace(s, 2);
  const invite = await s.api<Invite>('POST', '/v1/team/invites', {
    token: ws.key,
    body: { email: 'finn@example.com', role: 'viewer' },
  });
  t.equal(invite.status, 201);
  const { id: finn } = await createPerson(s.sql, {
    email: 'finn@example.com',
    name: 'Finn',
    password: PASSWORD,
  });
  const accepted = await acceptInvite(s.sql, {
    workspaceId: ws.id,
    inviteId: invite.body.id,
    userId: finn,
  });
  t.equal(accepted.status, 'accepted');

  const members = await s.api('GET', '/v1/team/members', { token: ws.key });
  t.same(members.body, {
    total: 1,
    items: [{ id: finn, name: 'Finn', email: 'finn@example.com', role: 'viewer', hoursPerDay: 8 }],
  });
  const before = await stored(s);
  const refused = await s.api<Refusal>('DELETE', `/v1/team/invites/${invite.body.id}`, {
    token: ws.key,
  });
  assertError(t, refused, 403, 'FORBIDDEN');
  t.same(refused.body.error.details, { status: 'accepted' });
  t.same(await stored(s), before);
  assertError(
    t,
    await s.api('POST', '/v1/team/invites', { token: ws.key, body: { email: 'FINN@example.com' } }),
    400,
    'ALREADY_MEMBER',
  );

  // The accepted invite's seat became the membership's: one seat left of two.
  t.equal(
    (await s.api('POST', '/v1/team/invites', { token: ws.key, body: { email: 'gil@example.com' } }))
      .status,
    201,
  );
  const full = await s.api<Refusal>('POST', '/v1/team/invites', {
    token: ws.key,
    body: { email: 'hal@example.com' },
  });
  assertError(t, full, 403, 'PLAN_LIMIT_REACHED');
  t.same(full.body.error.details, { limit: 2, used: 2 });
});

t.test(
  'seats: members and pending invites fill them; revoking frees one; the operator changes the limit',
  async (t) => {
    const s = await server(t);
    const ws = await workspace(s, 2);
    await person(s, 'Ann', { workspaceId: ws.id, role: 'owner' });

    const taken = await s.api<Invite>('POST', '/v1/team/invites', {
      token: ws.key,
      body: { email: 'one@example.com' },
    });
    t.equal(taken.status, 201);
    const before = await stored(s);
    const full = await s.api<Refusal>('POST', '/v1/team/invites', {
      token: ws.key,
      body: { email: 'two@example.com' },
    });
    assertError(t, full, 403, 'PLAN_LIMIT_REACHED');
    t.same(full.body.error.details, { limit: 2, used: 2 });
    t.same(await stored(s), before, 'nothing written when full');
    const duplicate = await s.api<Invite>('POST', '/v1/team/invites', {
      token: ws.key,
      body: { email: 'ONE@example.com' },
    });
    t.equal(
      duplicate.status,
      200,
      'the pending invite is answered even when full: it holds its seat already',
    );
    t.equal(duplicate.body.id, taken.body.id);

    t.equal(
      (await s.api('DELETE', `/v1/team/invites/${taken.body.id}`, { token: ws.key })).status,
      200,
    );
    const freed = await s.api('POST', '/v1/team/invites', {
      token: ws.key,
      body: { email: 'two@example.com' },
    });
    t.equal(freed.status, 201, 'revoking freed the seat');

    const set = await cli(s.databaseUrl, [
      'workspace',
      'set',
      '--id',
      ws.id,
      '--seats',
      '3',
      '--json',
    ]);
    t.equal(set.code, 0, set.stderr);
    t.equal(
      (
        await s.api('POST', '/v1/team/invites', {
          token: ws.key,
          body: { email: 'three@example.com' },
        })
      ).status,
      201,
      'more seats on the next request',
    );
    const atThree = await s.api<Refusal>('POST', '/v1/team/invites', {
      token: ws.key,
      body: { email: 'four@example.com' },
    });
    assertError(t, atThree, 403, 'PLAN_LIMIT_REACHED');
    t.same(atThree.body.error.details, { limit: 3, used: 3 });

    t.equal(
      (await cli(s.databaseUrl, ['workspace', 'set', '--id', ws.id, '--seats', '1'])).code,
      0,
    );
    const over = await s.api<Refusal>('POST', '/v1/team/invites', {
      token: ws.key,
      body: { email: 'four@example.com' },
    });
    t.same(
      over.body.error.details,
      { limit: 1, used: 3 },
      'fewer seats than people: refused, nothing removed',
    );
  },
);

t.test(
  'seats: the plan defaults (free 2, pro 25) and a free workspace is refused on the team routes',
  async (t) => {
    const s = await server(t);
    const free = await createWorkspace(s.sql, { name: 'Tiny', plan: 'free' });
    const seatsOf = async (id: string) =>
      (await s.sql<{ seats: number }[]>`select seats from workspaces where id = ${id}`)[0]!.seats;
    t.equal(await seatsOf(free.id), 2);
    t.equal(await seatsOf(s.workspaceId), 25, 'the Demo workspace is pro');
    const created = await cli(s.databaseUrl, [
      'workspace',
      'create',
      '--name',
      'Cli',
      '--plan',
      'free',
      '--json',
    ]);
    t.equal(created.code, 0, created.stderr);
    t.equal(await seatsOf(JSON.parse(created.stdout).id), 2);

    const { key } = await createKey(s.sql, {
      workspaceId: free.id,
      role: 'admin',
      scopes: [...SCOPES],
    });
    assertError(
      t,
      await s.api('POST', '/v1/team/invites', { token: key, body: { email: 'a@example.com' } }),
      403,
      'PLAN_REQUIRED',
    );
    assertError(t, await s.api('GET', '/v1/team/members', { token: key }), 403, 'PLAN_REQUIRED');
  },
);

t.test('seats: concurrent invites for the last seat, exactly one wins', async (t) => {
  const s = await server(t);
  const ws = await workspace(s, 3);
  await person(s, 'Ann', { workspaceId: ws.id, role: 'owner' });
  t.equal(
    (
      await s.api('POST', '/v1/team/invites', {
        token: ws.key,
        body: { email: 'first@example.com' },
      })
    ).status,
    201,
  );

  const racers = await Promise.all(
    Array.from({ length: 12 }, (_, i) =>
      // One takes the last seat, the others are refused.
      s.api<Refusal>('POST', '/v1/team/invites', {
        token: ws.key,
        body: { email: `racer${i}@example.com` },
      }),
    ),
  );
  const won = racers.filter((r) => r.status === 201);
  const lost = racers.filter((r) => r.status !== 201);
  t.equal(won.length, 1, 'exactly one invite took the last seat');
  for (const r of lost) {
    assertError(t, r, 403, 'PLAN_LIMIT_REACHED');
    t.same(r.body.error.details, { limit: 3, used: 3 });
  }
  const [row] = await s.sql<
    { n: number }[]
  >`select count(*)::int as n from invites where workspace_id = ${ws.id} and status = 'pending'`;
  t.equal(row!.n, 2);

  // The same address many times at once: one invite, answered to all.
  await cli(s.databaseUrl, ['workspace', 'set', '--id', ws.id, '--seats', '10']);
  const same = await Promise.all(
    Array.from({ length: 8 }, () =>
      s.api<Invite>('POST', '/v1/team/invites', {
        token: ws.key,
        body: { email: 'same@example.com' },
      }),
    ),
  );
  t.same(same.map((r) => r.status).sort(), [200, 200, 200, 200, 200, 200, 200, 201]);
  t.equal(new Set(same.map((r) => r.body.id)).size, 1);
});

t.test('the OpenAPI document describes the team routes with their refusals', async (t) => {
  const s = await server(t);
  const doc = (await s.api<JsonDocument>('GET', '/v1/openapi.json')).body;
  const invite = doc.paths['/v1/team/invites'].post;
  t.ok(invite.responses['201'] && invite.responses['200']);
  const codes = (status: string) =>
    Object.keys(invite.responses[status].content['application/json'].examples);
  t.ok(codes('400').includes('INVALID_EMAIL') && codes('400').includes('ALREADY_MEMBER'));
  t.ok(codes('403').includes('PLAN_LIMIT_REACHED'));
  t.equal(invite.requestBody.content['application/json'].schema.properties.role.default, 'member');
  t.ok(doc.paths['/v1/team/members/{memberId}'].patch.responses['404']);
  t.ok(doc.paths['/v1/team/invites/{inviteId}'].delete);
  t.ok(doc.paths['/v1/team/members'].get);
});

/**
 * Brainstorm shares through HTTP: one existing account, no email, seen by that guest from
 * their own workspace with a person token, and by nobody else.
 */
import t from 'tap';
import { createPerson, personToken } from '../../helpers/people.ts';
import { assertError, item } from '../../helpers/server.ts';
import { everything, ISO, newBrainstorm, otherWorkspace, server } from './helpers.ts';
import type {
  Brainstorm,
  BrainstormList,
  BrainstormShare,
  MemberList,
} from '../../helpers/wire.ts';

t.test('a viewer guest reads from their own workspace; a commenter also comments', async (t) => {
  const s = await server(t);
  const board = await newBrainstorm(t, s, {
    name: 'Shared board',
    ideas: [{ title: 'Root' }, { title: 'Child', parent: 0 }],
  });
  const unshared = await newBrainstorm(t, s, {
    name: 'Private board',
    ideas: [{ title: 'Hidden' }],
  });
  const guestHome = await otherWorkspace(s, 'Guest home');
  const { id: gina } = await createPerson(s.sql, {
    email: 'gina@example.com',
    name: 'Gina',
    password: 'correct horse battery',
    workspaceId: guestHome.id,
    role: 'member',
  });
  const { id: hugo } = await createPerson(s.sql, {
    email: 'hugo@example.com',
    name: 'Hugo',
    password: 'correct horse battery',
    workspaceId: guestHome.id,
    role: 'member',
  });
  const ownBoard = await newBrainstorm(t, s, { name: "Gina's own" }, guestHome.key);
  const ginaToken = await personToken(s, gina, guestHome.id);
  const hugoToken = await personToken(s, hugo, guestHome.id);

  // Before sharing, the guest sees nothing of it.
  assertError(
    t,
    await s.api('GET', `/v1/brainstorms/${board.id}`, { token: ginaToken }),
    404,
    'NOT_FOUND',
    'not shared yet',
  );

  const share = await s.api<BrainstormShare>('POST', `/v1/brainstorms/${board.id}/shares`, {
    token: s.adminKey,
    body: { email: ' Gina@Example.com ' },
  });
  t.equal(share.status, 201);
  t.match(share.body.id, /^shr_/);
  t.match(share.body, { email: 'gina@example.com', role: 'viewer', brainstormId: board.id });
  t.match(share.body.createdAt, ISO);
  t.same(Object.keys(share.body).sort(), ['brainstormId', 'createdAt', 'email', 'id', 'role']);
  t.same((await s.api('GET', `/v1/brainstorms/${board.id}/shares`, { token: s.adminKey })).body, {
    total: 1,
    items: [share.body],
  });

  const seen = await s.api<Brainstorm>('GET', `/v1/brainstorms/${board.id}`, { token: ginaToken });
  t.equal(seen.status, 200, 'the guest reads it from their own workspace');
  t.equal(seen.body.name, 'Shared board');
  t.equal(seen.body.ideas.length, 2);
  const ginaList = await s.api<BrainstormList>('GET', '/v1/brainstorms', { token: ginaToken });
  t.same(
    ginaList.body.items.map((b) => b.name).sort(),
    ["Gina's own", 'Shared board'],
    'listed beside their own boards',
  );
  t.equal(ginaList.body.total, 2);
  t.same(
    (
      await s.api<BrainstormList>('GET', '/v1/brainstorms?q=shared', { token: ginaToken })
    ).body.items.map((b) => b.id),
    [board.id],
  );
  const ideaPath = `/v1/brainstorms/${board.id}/ideas/${item(board.ideas).id}`;
  t.equal(
    (await s.api('GET', `${ideaPath}/comments`, { token: ginaToken })).status,
    200,
    'reads comments',
  );

  // Nobody else: not the guest's colleague, not the guest's workspace key, not the guest on another board.
  assertError(
    t,
    await s.api('GET', `/v1/brainstorms/${board.id}`, { token: hugoToken }),
    404,
    'NOT_FOUND',
    'a colleague of the guest',
  );
  assertError(
    t,
    await s.api('GET', `/v1/brainstorms/${board.id}`, { token: guestHome.key }),
    404,
    'NOT_FOUND',
    "the guest workspace's key",
  );
  t.same(
    (
      await s.api<BrainstormList>('GET', '/v1/brainstorms', { token: guestHome.key })
    ).body.items.map((b) => b.id),
    [ownBoard.id],
  );
  assertError(
    t,
    await s.api('GET', `/v1/brainstorms/${unshared.id}`, { token: ginaToken }),
    404,
    'NOT_FOUND',
    'another board of the owner',
  );
  const stranger = await otherWorkspace(s, 'Stranger');
  assertError(
    t,
    await s.api('GET', `/v1/brainstorms/${board.id}`, { token: stranger.key }),
    404,
    'NOT_FOUND',
    'another workspace',
  );

  // A viewer guest changes nothing; 403 since they may see it.
  const before = await everything(s);
  assertError(
    t,
    await s.api('POST', `${ideaPath}/comments`, { token: ginaToken, body: { body: 'hi' } }),
    403,
    'FORBIDDEN',
    'viewer cannot comment',
  );
  for (const [method, path, body] of [
    ['PATCH', '', { name: 'Mine' }],
    ['DELETE', '', undefined],
    ['POST', '/publish', undefined],
    ['POST', '/ideas', { title: 'x' }],
    ['POST', '/shares', { email: 'hugo@example.com' }],
    ['GET', '/shares', undefined],
    ['PATCH', `/ideas/${item(board.ideas).id}`, { title: 'x' }],
    ['DELETE', `/ideas/${item(board.ideas, 1).id}`, undefined],
  ] as const) {
    assertError(
      t,
      await s.api(method, `/v1/brainstorms/${board.id}${path}`, { token: ginaToken, body }),
      403,
      'FORBIDDEN',
      `guest ${method} ${path || '/'}`,
    );
  }
  t.same(await everything(s), before, 'the guest wrote nothing');

  // Sharing again changes the role of the same share; a commenter comments.
  const promoted = await s.api('POST', `/v1/brainstorms/${board.id}/shares`, {
    token: s.adminKey,
    body: { email: 'gina@example.com', role: 'commenter' },
  });
  t.same(promoted.body, { ...share.body, role: 'commenter' });
  const comment = await s.api('POST', `${ideaPath}/comments`, {
    token: ginaToken,
    body: { body: 'From the guest' },
  });
  t.equal(comment.status, 201);
  t.match(comment.body, { authorId: gina, authorName: 'Gina', body: 'From the guest' });
  assertError(
    t,
    await s.api('PATCH', ideaPath, { token: ginaToken, body: { title: 'x' } }),
    403,
    'FORBIDDEN',
    'a commenter still cannot edit',
  );

  // Revoking ends access at once.
  t.equal(
    (
      await s.api('DELETE', `/v1/brainstorms/${board.id}/shares/${share.body.id}`, {
        token: s.adminKey,
      })
    ).status,
    204,
  );
  assertError(
    t,
    await s.api('GET', `/v1/brainstorms/${board.id}`, { token: ginaToken }),
    404,
    'NOT_FOUND',
    'revoked',
  );
  assertError(
    t,
    await s.api('DELETE', `/v1/brainstorms/${board.id}/shares/${share.body.id}`, {
      token: s.adminKey,
    }),
    404,
    'NOT_FOUND',
    'already revoked',
  );
  t.same(
    (await s.api<BrainstormList>('GET', '/v1/brainstorms', { token: ginaToken })).body.items.map(
      (b) => b.id,
    ),
    [ownBoard.id],
  );
});

t.test('share refusals: unknown account, bad address, bad role; nothing written', async (t) => {
  const s = await server(t);
  const board = await newBrainstorm(t, s, { name: 'Board', ideas: [{ title: 'Root' }] });
  await createPerson(s.sql, {
    email: 'known@example.com',
    name: 'Known',
    password: 'correct horse battery',
  });
  const before = await everything(s);
  const path = `/v1/brainstorms/${board.id}/shares`;

  assertError(
    t,
    await s.api('POST', path, { token: s.adminKey, body: { email: 'nobody@example.com' } }),
    404,
    'NOT_FOUND',
    'no account: no invitation either',
  );
  for (const email of ['', 'gina', 'gina@', '@example.com', 'gi na@example.com']) {
    assertError(
      t,
      await s.api('POST', path, { token: s.adminKey, body: { email } }),
      400,
      'INVALID_EMAIL',
      JSON.stringify(email),
    );
  }
  for (const body of [
    {},
    { email: 'known@example.com', role: 'admin' },
    { email: 'known@example.com', role: 'editor' },
    { email: ['known@example.com'] },
    { email: 'known@example.com', userId: 'usr_x' },
  ]) {
    assertError(
      t,
      await s.api('POST', path, { token: s.adminKey, body }),
      400,
      'VALIDATION_FAILED',
      JSON.stringify(body),
    );
  }
  assertError(
    t,
    await s.api('POST', '/v1/brainstorms/brn_unknown/shares', {
      token: s.adminKey,
      body: { email: 'known@example.com' },
    }),
    404,
    'NOT_FOUND',
  );
  t.same(await everything(s), before, 'nothing written');
  const sent = await s.sql`select count(*)::int as n from invites`;
  t.equal(sent[0]!.n, 0, 'no invitation created');

  const ok = await s.api('POST', path, {
    token: s.adminKey,
    body: { email: 'known@example.com', role: 'commenter' },
  });
  t.equal(ok.status, 201);
  const members = await s.api<MemberList>('GET', '/v1/team/members', { token: s.adminKey });
  t.notOk(
    members.body.items.some((m) => m.email === 'known@example.com'),
    'a guest is never a member',
  );
});

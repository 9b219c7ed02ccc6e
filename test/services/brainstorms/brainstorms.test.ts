/** Brainstorm boards through HTTP: create with an idea tree, list, get (ETag), rename, archive/delete, restore, publish. */
import t from 'tap';
import { createKey } from '../../../src/services/auth/provision.ts';
import { assertError, item } from '../../helpers/server.ts';
import { everything, ISO, newBrainstorm, otherWorkspace, server } from './helpers.ts';
import type {
  Brainstorm,
  BrainstormList,
  BrainstormSummary,
  Idea,
  Refusal,
} from '../../helpers/wire.ts';

t.test('create with an idea tree, then read it back', async (t) => {
  const s = await server(t);
  const created = await newBrainstorm(t, s, {
    name: 'Launch ideas',
    ideas: [
      { title: 'Channels', tags: ['growth'] },
      { title: 'Podcasts', parent: 0, notes: 'ask Ann' },
      { title: 'Newsletter', parent: 0 },
      { title: 'Guest spots', parent: 1, tags: ['audio', 'low-cost'] },
      { title: 'Pricing', parent: 5 },
      {
        title: 'Tiers',
        tags: ['a,b', '{x}', 'q"uote', 'back\\slash', 'NULL', ' spaced ', 'ünï 😀'],
      },
    ],
  });
  t.match(created.id, /^brn_/);
  t.hasStrict(created, {
    name: 'Launch ideas',
    archived: false,
    public: false,
    publicUrl: null,
    ideaCount: 6,
  });
  t.match(created.createdAt, ISO);
  t.match(created.updatedAt, ISO);
  t.equal(created.ideas.length, 6);
  const [channels, podcasts, newsletter, guests, pricing, tiers] = created.ideas as [
    Idea,
    Idea,
    Idea,
    Idea,
    Idea,
    Idea,
  ];
  for (const idea of created.ideas) {
    t.match(idea.id, /^ide_/);
    t.equal(idea.brainstormId, created.id);
    t.equal(idea.commentCount, 0);
    t.equal(idea.fileCount, 0);
    t.match(idea.createdAt, ISO);
  }
  t.same(
    created.ideas.map((i) => i.title),
    ['Channels', 'Podcasts', 'Newsletter', 'Guest spots', 'Pricing', 'Tiers'],
    'in the order given',
  );
  t.equal(channels.parentId, null);
  t.equal(podcasts.parentId, channels.id);
  t.equal(newsletter.parentId, channels.id);
  t.equal(guests.parentId, podcasts.id);
  t.equal(pricing.parentId, tiers.id, 'a parent may come later in the array');
  t.equal(tiers.parentId, null);
  t.same(guests.tags, ['audio', 'low-cost']);
  t.same(channels.tags, ['growth']);
  t.same(newsletter.tags, []);
  t.same(
    tiers.tags,
    ['a,b', '{x}', 'q"uote', 'back\\slash', 'NULL', ' spaced ', 'ünï 😀'],
    'tags come back exactly as sent',
  );
  t.equal(podcasts.notes, 'ask Ann');
  t.equal(newsletter.notes, null);
  t.equal(channels.assigneeId, null);

  const got = await s.api('GET', `/v1/brainstorms/${created.id}`, { token: s.adminKey });
  t.equal(got.status, 200);
  t.same(got.body, created, 'GET answers what create answered');
  const etag = got.headers.get('etag');
  t.ok(etag, 'ETag');
  t.match(got.headers.get('vary') ?? '', /Authorization/i);
  const again = await s.api('GET', `/v1/brainstorms/${created.id}`, {
    token: s.adminKey,
    headers: { 'if-none-match': etag! },
  });
  t.equal(again.status, 304, 'unchanged: 304');
  t.equal(again.text, '');

  // Any write changes the tag.
  t.equal(
    (
      await s.api('POST', `/v1/brainstorms/${created.id}/ideas`, {
        token: s.adminKey,
        body: { title: 'Ads' },
      })
    ).status,
    201,
  );
  const changed = await s.api<Brainstorm>('GET', `/v1/brainstorms/${created.id}`, {
    token: s.adminKey,
    headers: { 'if-none-match': etag! },
  });
  t.equal(changed.status, 200, 'changed: the whole board again');
  t.not(changed.headers.get('etag'), etag);
  t.equal(changed.body.ideaCount, 7);

  const empty = await newBrainstorm(t, s, { name: 'Blank' });
  t.same(empty.ideas, []);
  t.equal(empty.ideaCount, 0);
});

t.test('list: newest first, archived, q, size and from', async (t) => {
  const s = await server(t);
  const names = ['Alpha board', 'Beta board', 'Gamma', '100% ideas', 'Delta board'];
  const ids: string[] = [];
  for (const name of names)
    ids.push((await newBrainstorm(t, s, { name, ideas: [{ title: 'x' }] })).id);
  const other = await otherWorkspace(s);
  await newBrainstorm(t, s, { name: 'Their board' }, other.key);

  const all = await s.api<BrainstormList>('GET', '/v1/brainstorms', { token: s.adminKey });
  t.equal(all.status, 200);
  t.equal(all.body.total, 5, 'only this workspace');
  t.same(
    all.body.items.map((b) => b.name),
    [...names].reverse(),
    'newest first',
  );
  t.same(Object.keys(item(all.body.items)).sort(), [
    'archived',
    'createdAt',
    'id',
    'ideaCount',
    'name',
    'public',
    'publicUrl',
    'updatedAt',
  ]);
  t.equal(all.body.items[0]?.ideaCount, 1);
  t.ok(all.headers.get('etag'));

  const page = await s.api<BrainstormList>('GET', '/v1/brainstorms?size=2&from=1', {
    token: s.adminKey,
  });
  t.same(
    page.body.items.map((b) => b.name),
    ['100% ideas', 'Gamma'],
  );
  t.equal(page.body.total, 5, 'total counts every match, not the page');
  t.same((await s.api('GET', '/v1/brainstorms?from=50', { token: s.adminKey })).body, {
    total: 5,
    items: [],
  });

  const q = await s.api<BrainstormList>('GET', '/v1/brainstorms?q=BOARD', { token: s.adminKey });
  t.same(
    q.body.items.map((b) => b.name),
    ['Delta board', 'Beta board', 'Alpha board'],
    'q matches names, case-insensitively',
  );
  t.equal(q.body.total, 3);
  t.same(
    (
      await s.api<BrainstormList>('GET', '/v1/brainstorms?q=%25', { token: s.adminKey })
    ).body.items.map((b) => b.name),
    ['100% ideas'],
    '% is a literal',
  );

  t.equal((await s.api('DELETE', `/v1/brainstorms/${ids[1]}`, { token: s.adminKey })).status, 204);
  const live = await s.api<BrainstormList>('GET', '/v1/brainstorms', { token: s.adminKey });
  t.equal(live.body.total, 4, 'archived leave the default list');
  const archived = await s.api<BrainstormList>('GET', '/v1/brainstorms?archived=true', {
    token: s.adminKey,
  });
  t.same(
    archived.body.items.map((b) => [b.name, b.archived]),
    [['Beta board', true]],
  );

  for (const query of [
    'size=0',
    'size=101',
    'from=-1',
    'archived=maybe',
    'size=ten',
    `q=${'x'.repeat(201)}`,
  ]) {
    assertError(
      t,
      await s.api('GET', `/v1/brainstorms?${query}`, { token: s.adminKey }),
      400,
      'VALIDATION_FAILED',
      query,
    );
  }
});

t.test('rename, archive, restore; an empty board is deleted outright', async (t) => {
  const s = await server(t);
  const board = await newBrainstorm(t, s, { name: 'Draft', ideas: [{ title: 'One' }] });

  const renamed = await s.api<BrainstormSummary>('PATCH', `/v1/brainstorms/${board.id}`, {
    token: s.adminKey,
    body: { name: 'Final' },
  });
  t.equal(renamed.status, 200);
  t.hasStrict(renamed.body, { id: board.id, name: 'Final', archived: false, ideaCount: 1 });
  t.notOk('ideas' in renamed.body, 'a summary');
  t.equal(
    (await s.api<Brainstorm>('GET', `/v1/brainstorms/${board.id}`, { token: s.adminKey })).body
      .name,
    'Final',
  );

  assertError(
    t,
    await s.api('POST', `/v1/brainstorms/${board.id}/restore`, { token: s.adminKey }),
    404,
    'NOT_ARCHIVED',
  );
  const archive = await s.api('DELETE', `/v1/brainstorms/${board.id}`, { token: s.adminKey });
  t.equal(archive.status, 204);
  t.equal(archive.text, '');
  const archived = await s.api<Brainstorm>('GET', `/v1/brainstorms/${board.id}`, {
    token: s.adminKey,
  });
  t.equal(archived.body.archived, true, 'still readable, archived');
  t.equal(archived.body.ideas.length, 1, 'nothing lost');
  t.equal(
    (await s.api('DELETE', `/v1/brainstorms/${board.id}`, { token: s.adminKey })).status,
    204,
    'archiving again is a no-op',
  );
  const restored = await s.api('POST', `/v1/brainstorms/${board.id}/restore`, {
    token: s.adminKey,
  });
  t.equal(restored.status, 200);
  t.hasStrict(restored.body, { id: board.id, archived: false, ideaCount: 1 });

  const empty = await newBrainstorm(t, s, { name: 'Empty' });
  t.equal(
    (await s.api('DELETE', `/v1/brainstorms/${empty.id}`, { token: s.adminKey })).status,
    204,
  );
  assertError(
    t,
    await s.api('GET', `/v1/brainstorms/${empty.id}`, { token: s.adminKey }),
    404,
    'NOT_FOUND',
    'gone for good',
  );
  t.equal(
    (await s.sql`select count(*)::int as n from brainstorms where id = ${empty.id}`)[0]!.n,
    0,
    'no row left',
  );
  assertError(
    t,
    await s.api('POST', `/v1/brainstorms/${empty.id}/restore`, { token: s.adminKey }),
    404,
    'NOT_FOUND',
  );
});

t.test('publish mints a fresh link each time; unpublish ends it', async (t) => {
  const s = await server(t);
  const board = await newBrainstorm(t, s, { name: 'Public', ideas: [{ title: 'Seen' }] });
  const first = await s.api<BrainstormSummary>('POST', `/v1/brainstorms/${board.id}/publish`, {
    token: s.adminKey,
  });
  t.equal(first.status, 200);
  t.equal(first.body.public, true);
  const base = s.app.services.config.publicUrl;
  t.match(
    first.body.publicUrl,
    new RegExp(`^${base.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}/brainstorms/[A-Za-z0-9_-]{32}$`),
    '{public_url}/brainstorms/{token}',
  );
  const token1 = first.body.publicUrl?.split('/').pop() ?? '';
  t.ok(Buffer.from(token1, 'base64url').length >= 16, 'at least 128 random bits');
  t.equal(
    (await s.api<Brainstorm>('GET', `/v1/brainstorms/${board.id}`, { token: s.adminKey })).body
      .publicUrl,
    first.body.publicUrl,
  );
  t.equal(
    (await s.api<BrainstormList>('GET', '/v1/brainstorms', { token: s.adminKey })).body.items[0]
      ?.publicUrl,
    first.body.publicUrl,
  );

  const second = await s.api<BrainstormSummary>('POST', `/v1/brainstorms/${board.id}/publish`, {
    token: s.adminKey,
  });
  t.not(second.body.publicUrl, first.body.publicUrl, 'a fresh token on every publish');
  const stored =
    await s.sql`select public_token, public_token_hash from brainstorms where id = ${board.id}`;
  t.equal(
    stored[0]!.publicToken,
    second.body.publicUrl?.split('/').pop(),
    'only the newest token is kept',
  );

  const off = await s.api('POST', `/v1/brainstorms/${board.id}/unpublish`, { token: s.adminKey });
  t.equal(off.status, 200);
  t.match(off.body, { public: false, publicUrl: null });
  t.same(
    (
      await s.api<BrainstormSummary>('POST', `/v1/brainstorms/${board.id}/unpublish`, {
        token: s.adminKey,
      })
    ).body.publicUrl,
    null,
    'unpublish again is harmless',
  );
  const third = await s.api<BrainstormSummary>('POST', `/v1/brainstorms/${board.id}/publish`, {
    token: s.adminKey,
  });
  t.not(third.body.publicUrl, first.body.publicUrl);
  t.not(third.body.publicUrl, second.body.publicUrl, 'an old link never comes back');
});

t.test('Idempotency-Key replays a create', async (t) => {
  const s = await server(t);
  const body = { name: 'Once', ideas: [{ title: 'A' }, { title: 'B', parent: 0 }] };
  const headers = { 'idempotency-key': 'create-once-1' };
  const first = await s.api('POST', '/v1/brainstorms', { token: s.adminKey, body, headers });
  t.equal(first.status, 201);
  const replay = await s.api('POST', '/v1/brainstorms', { token: s.adminKey, body, headers });
  t.equal(replay.status, 201);
  t.same(replay.body, first.body, 'the first response again');
  t.equal((await s.sql`select count(*)::int as n from brainstorms`)[0]!.n, 1, 'created once');
  assertError(
    t,
    await s.api('POST', '/v1/brainstorms', { token: s.adminKey, body: { name: 'Other' }, headers }),
    422,
    'IDEMPOTENCY_KEY_REUSED',
  );
});

t.test('refusals: bad input, cycles, roles, other workspaces; nothing written', async (t) => {
  const s = await server(t);
  const board = await newBrainstorm(t, s, { name: 'Mine', ideas: [{ title: 'Root' }] });
  const other = await otherWorkspace(s);
  const theirs = await newBrainstorm(
    t,
    s,
    { name: 'Theirs', ideas: [{ title: 'Secret' }] },
    other.key,
  );
  const before = await everything(s);

  const bad: [unknown, string][] = [
    [{}, 'no name'],
    [{ name: '' }, 'empty name'],
    [{ name: '   ' }, 'blank name'],
    [{ name: 'x'.repeat(201) }, 'long name'],
    [{ name: 'N', ideas: [{}] }, 'idea without title'],
    [{ name: 'N', ideas: [{ title: 'x'.repeat(501) }] }, 'long title'],
    [{ name: 'N', ideas: [{ title: 'T', notes: 'x'.repeat(20_001) }] }, 'long notes'],
    [{ name: 'N', ideas: [{ title: 'T', tags: ['a', 'a'] }] }, 'repeated tag'],
    [{ name: 'N', ideas: [{ title: 'T', tags: ['x'.repeat(51)] }] }, 'long tag'],
    [
      { name: 'N', ideas: [{ title: 'T', tags: Array.from({ length: 21 }, (_, i) => `t${i}`) }] },
      'too many tags',
    ],
    [{ name: 'N', ideas: [{ title: 'T', parent: -1 }] }, 'negative parent'],
    [{ name: 'N', ideas: [{ title: 'T', parent: 1.5 }] }, 'fractional parent'],
    [{ name: 'N', ideas: [{ title: 'T', parent: 1 }] }, 'parent out of range'],
    [{ name: 'N', ideas: [{ title: 'T' }, { title: 'U', parent: 7 }] }, 'parent out of range (2)'],
    [{ name: 'N', ideas: [{ title: 'T', assigneeId: 'usr_nobody' }] }, 'unknown assignee'],
    [{ name: 'N', ideas: [{ title: 'T', owner: 'me' }] }, 'unknown idea field'],
    [{ name: 'N', extra: true }, 'unknown field'],
    [
      { name: 'N', ideas: Array.from({ length: 10_001 }, () => ({ title: 'i' })) },
      'over 10,000 ideas',
    ],
    [{ name: 'N', ideas: [{ title: 'T' }, { title: 'a\u0000b' }] }, 'NUL in a title'],
    [{ name: 'N', ideas: [{ title: 'T', tags: ['a\u0000b'] }] }, 'NUL in a tag'],
  ];
  for (const [body, why] of bad)
    assertError(
      t,
      await s.api('POST', '/v1/brainstorms', { token: s.adminKey, body }),
      400,
      'VALIDATION_FAILED',
      why,
    );
  const outOfRange = await s.api<Refusal>('POST', '/v1/brainstorms', {
    token: s.adminKey,
    body: { name: 'N', ideas: [{ title: 'T' }, { title: 'U', parent: 7 }] },
  });
  t.same(
    outOfRange.body.error.details.errors.map((e: { pointer: string }) => e.pointer),
    ['/ideas/1/parent'],
    'the pointer names the bad index',
  );

  for (const ideas of [
    [{ title: 'Self', parent: 0 }],
    [
      { title: 'A', parent: 1 },
      { title: 'B', parent: 0 },
    ],
    [
      { title: 'Root' },
      { title: 'A', parent: 3 },
      { title: 'B', parent: 1 },
      { title: 'C', parent: 2 },
    ],
  ]) {
    const res = await s.api<Refusal>('POST', '/v1/brainstorms', {
      token: s.adminKey,
      body: { name: 'Cycle', ideas },
    });
    assertError(t, res, 400, 'CIRCULAR_DEPENDENCY', JSON.stringify(ideas));
    t.type(res.body.error.details.cycle, Array);
    const named = res.body.error.details.ideas as { index: number; name: string }[];
    t.ok(
      named.length > 0 && named.every((m) => m.name === ideas[m.index]!.title),
      'the ideas of the cycle are named (issue 29, item 11)',
    );
    t.match(res.body.error.message, `"${named[0]!.name}" (#${named[0]!.index}) → `);
  }
  assertError(
    t,
    await s.api('POST', '/v1/brainstorms', {
      token: s.adminKey,
      raw: '{"name":',
      headers: { 'content-type': 'application/json' },
    }),
    400,
    'VALIDATION_FAILED',
    'not JSON',
  );
  assertError(
    t,
    await s.api('POST', '/v1/brainstorms', {
      token: s.adminKey,
      raw: 'name=x',
      headers: { 'content-type': 'text/plain' },
    }),
    415,
    'UNSUPPORTED_MEDIA_TYPE',
  );
  const huge = await s.api('POST', '/v1/brainstorms', {
    token: s.adminKey,
    body: { name: 'N', ideas: [{ title: 'x'.repeat(1_048_576) }] },
  });
  t.ok(huge.status === 400 || huge.status === 413, `a 1 MB title is refused (${huge.status})`);
  assertError(
    t,
    await s.api('PATCH', `/v1/brainstorms/${board.id}`, { token: s.adminKey, body: {} }),
    400,
    'VALIDATION_FAILED',
  );
  assertError(
    t,
    await s.api('PATCH', `/v1/brainstorms/${board.id}`, {
      token: s.adminKey,
      body: { name: 'x', archived: true },
    }),
    400,
    'VALIDATION_FAILED',
  );

  // Another workspace's board does not exist for us, whatever the route.
  const [theirIdea] = theirs.ideas.map((idea) => idea.id) as [string];
  for (const [method, path, body] of [
    ['GET', '', undefined],
    ['PATCH', '', { name: 'Mine now' }],
    ['DELETE', '', undefined],
    ['POST', '/restore', undefined],
    ['POST', '/publish', undefined],
    ['POST', '/unpublish', undefined],
    ['POST', '/ideas', { title: 'In' }],
    ['GET', '/shares', undefined],
    ['POST', '/shares', { email: 'ann@example.com' }],
    ['GET', `/ideas/${theirIdea}/comments`, undefined],
    ['POST', `/ideas/${theirIdea}/comments`, { body: 'hi' }],
    ['PATCH', `/ideas/${theirIdea}`, { title: 'Mine' }],
    ['DELETE', `/ideas/${theirIdea}`, undefined],
  ] as const) {
    assertError(
      t,
      await s.api(method, `/v1/brainstorms/${theirs.id}${path}`, { token: s.adminKey, body }),
      404,
      'NOT_FOUND',
      `${method} ${path || '/'}`,
    );
  }
  const theirEtag = (
    await s.api('GET', `/v1/brainstorms/${theirs.id}`, { token: other.key })
  ).headers.get('etag')!;
  assertError(
    t,
    await s.api('GET', `/v1/brainstorms/${theirs.id}`, {
      token: s.adminKey,
      headers: { 'if-none-match': theirEtag },
    }),
    404,
    'NOT_FOUND',
    'no 304 that leaks existence',
  );
  t.notOk(
    (await s.api<BrainstormList>('GET', '/v1/brainstorms', { token: s.adminKey })).body.items.some(
      (b) => b.id === theirs.id,
    ),
  );
  assertError(
    t,
    await s.api('GET', '/v1/brainstorms/brn_unknown', { token: s.adminKey }),
    404,
    'NOT_FOUND',
  );

  const viewer = await createKey(s.sql, {
    workspaceId: s.workspaceId,
    role: 'viewer',
    scopes: ['flows:read', 'flows:write'],
  });
  t.equal(
    (await s.api('GET', `/v1/brainstorms/${board.id}`, { token: viewer.key })).status,
    200,
    'a viewer reads',
  );
  assertError(
    t,
    await s.api('POST', '/v1/brainstorms', { token: viewer.key, body: { name: 'No' } }),
    403,
    'FORBIDDEN',
  );
  assertError(
    t,
    await s.api('DELETE', `/v1/brainstorms/${board.id}`, { token: viewer.key }),
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
    await s.api('POST', `/v1/brainstorms/${board.id}/publish`, { token: readOnly.key }),
    403,
    'INSUFFICIENT_SCOPE',
  );
  const noScope = await createKey(s.sql, {
    workspaceId: s.workspaceId,
    role: 'admin',
    scopes: ['team:read'],
  });
  assertError(
    t,
    await s.api('GET', '/v1/brainstorms', { token: noScope.key }),
    403,
    'INSUFFICIENT_SCOPE',
  );

  t.same(await everything(s), before, 'no refusal wrote anything');
});

t.test('10,000 ideas in one create', async (t) => {
  const s = await server(t);
  const ideas = Array.from({ length: 10_000 }, (_, i) => ({
    title: `Idea ${i}`,
    ...(i > 0 ? { parent: Math.floor((i - 1) / 3) } : {}),
  }));
  const board = await newBrainstorm(t, s, { name: 'Big', ideas });
  t.equal(board.ideaCount, 10_000);
  t.equal(board.ideas.length, 10_000);
  t.equal(board.ideas[9_999]?.parentId, board.ideas[3_332]?.id);
  assertError(
    t,
    await s.api('POST', `/v1/brainstorms/${board.id}/ideas`, {
      token: s.adminKey,
      body: { title: 'One too many' },
    }),
    400,
    'VALIDATION_FAILED',
    'the limit holds for added ideas too',
  );
  t.equal((await s.sql`select count(*)::int as n from ideas`)[0]!.n, 10_000);
});

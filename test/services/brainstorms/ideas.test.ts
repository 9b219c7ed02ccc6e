/** Ideas through HTTP: add, edit, re-parent (never into its own subtree), delete (children move up), comments and files. */
import t from 'tap';
import { createPerson, personToken } from '../../helpers/people.ts';
import { assertError, item } from '../../helpers/server.ts';
import { everything, ISO, newBrainstorm, otherWorkspace, server } from './helpers.ts';
import type { Attachment, Brainstorm, Idea, IdeaComment, Refusal } from '../../helpers/wire.ts';

/** root ─ a ─ a1 ─ a1x ; root ─ b ; loose (a second root) */
const TREE = {
  name: 'Tree',
  ideas: [
    { title: 'root' },
    { title: 'a', parent: 0 },
    { title: 'a1', parent: 1 },
    { title: 'a1x', parent: 2 },
    { title: 'b', parent: 0 },
    { title: 'loose' },
  ],
};

/** The ideas of a board of TREE's titles, by title (after a removal, that one is missing). */
const byTitle = (board: Brainstorm) =>
  Object.fromEntries(board.ideas.map((i) => [i.title, i])) as Record<
    'root' | 'a' | 'a1' | 'a1x' | 'b' | 'loose',
    Idea
  >;

t.test('add and edit ideas', async (t) => {
  const s = await server(t);
  const { id: ann } = await createPerson(s.sql, {
    email: 'ann@example.com',
    name: 'Ann',
    password: 'correct horse battery',
    workspaceId: s.workspaceId,
    role: 'member',
  });
  const board = await newBrainstorm(t, s, TREE);
  const ideas = byTitle(board);
  const path = `/v1/brainstorms/${board.id}/ideas`;

  const added = await s.api<Idea>('POST', path, {
    token: s.adminKey,
    body: { title: 'c', parentId: ideas.root.id, notes: 'why', tags: ['q3'], assigneeId: ann },
  });
  t.equal(added.status, 201);
  t.match(added.body.id, /^ide_/);
  t.same(
    { ...added.body, id: 'x', createdAt: 'x' },
    {
      id: 'x',
      brainstormId: board.id,
      parentId: ideas.root.id,
      title: 'c',
      notes: 'why',
      tags: ['q3'],
      assigneeId: ann,
      commentCount: 0,
      fileCount: 0,
      createdAt: 'x',
    },
  );
  t.match(added.body.createdAt, ISO);
  const root = await s.api<Idea>('POST', path, {
    token: s.adminKey,
    body: { title: 'Another root' },
  });
  t.match(root.body, { parentId: null, notes: null, assigneeId: null });
  t.strictSame(root.body.tags, [], 'no tags');
  const explicitRoot = await s.api<Idea>('POST', path, {
    token: s.adminKey,
    body: { title: 'Root too', parentId: null },
  });
  t.equal(explicitRoot.body.parentId, null);

  const edited = await s.api<Idea>('PATCH', `${path}/${added.body.id}`, {
    token: s.adminKey,
    body: { title: 'c!', notes: null, tags: [], assigneeId: null },
  });
  t.equal(edited.status, 200);
  t.match(edited.body, {
    id: added.body.id,
    title: 'c!',
    notes: null,
    assigneeId: null,
    parentId: ideas.root.id,
  });
  t.strictSame(edited.body.tags, [], 'no tags');
  const board2 = (
    await s.api<Brainstorm>('GET', `/v1/brainstorms/${board.id}`, { token: s.adminKey })
  ).body;
  t.equal(board2.ideaCount, 9);
  t.same(
    board2.ideas.slice(-3).map((i) => i.title),
    ['c!', 'Another root', 'Root too'],
    'added ideas come last',
  );

  for (const [body, why] of [
    [{}, 'empty patch'],
    [{ title: '' }, 'empty title'],
    [{ title: null }, 'null title'],
    [{ tags: 'x' }, 'tags not a list'],
    [{ parentId: 'ide_nothere' }, 'unknown parent'],
    [{ assigneeId: 'usr_nobody' }, 'unknown assignee'],
    [{ brainstormId: 'brn_x' }, 'read-only field'],
  ] as const) {
    assertError(
      t,
      await s.api('PATCH', `${path}/${ideas.a.id}`, { token: s.adminKey, body }),
      400,
      'VALIDATION_FAILED',
      why,
    );
  }
  for (const [body, why] of [
    [{}, 'no title'],
    [{ title: 'x', parentId: 'ide_nothere' }, 'unknown parent'],
    [{ title: 'x', parent: 0 }, 'index form is for create'],
  ] as const) {
    assertError(
      t,
      await s.api('POST', path, { token: s.adminKey, body }),
      400,
      'VALIDATION_FAILED',
      why,
    );
  }
  assertError(
    t,
    await s.api('PATCH', `${path}/ide_nothere`, { token: s.adminKey, body: { title: 'x' } }),
    404,
    'NOT_FOUND',
  );

  // An idea of another board is not a parent here.
  const otherBoard = await newBrainstorm(t, s, { name: 'Other', ideas: [{ title: 'elsewhere' }] });
  assertError(
    t,
    await s.api('PATCH', `${path}/${ideas.a.id}`, {
      token: s.adminKey,
      body: { parentId: item(otherBoard.ideas).id },
    }),
    400,
    'VALIDATION_FAILED',
  );
  assertError(
    t,
    await s.api('PATCH', `/v1/brainstorms/${otherBoard.id}/ideas/${ideas.a.id}`, {
      token: s.adminKey,
      body: { title: 'moved?' },
    }),
    404,
    'NOT_FOUND',
    'idea of another board',
  );
});

t.test('re-parent: anywhere but into its own subtree', async (t) => {
  const s = await server(t);
  const board = await newBrainstorm(t, s, TREE);
  const ideas = byTitle(board);
  const patch = <T = Idea>(id: string, body: unknown) =>
    s.api<T>('PATCH', `/v1/brainstorms/${board.id}/ideas/${id}`, { token: s.adminKey, body });
  const before = await everything(s);

  for (const target of ['a', 'a1', 'a1x'] as const) {
    const res = await patch(ideas.a.id, { parentId: ideas[target].id });
    assertError(t, res, 400, 'CIRCULAR_DEPENDENCY', `a under ${target}`);
  }
  const deepest = await patch<Refusal>(ideas.root.id, { parentId: ideas.a1x.id });
  assertError(t, deepest, 400, 'CIRCULAR_DEPENDENCY', 'root under its deepest descendant');
  const chain = (['a1x', 'a1', 'a', 'root'] as const).map((title) => ({
    id: ideas[title].id,
    name: title,
  }));
  t.strictSame(
    deepest.body.error.details.ideas,
    chain,
    'the ideas of the cycle are named, in order (issue 29, item 11)',
  );
  t.match(
    deepest.body.error.message,
    `"a1x" (${ideas.a1x.id}) → "a1" (${ideas.a1.id}) → "a" (${ideas.a.id}) → "root" (${ideas.root.id}) → "a1x"`,
  );
  assertError(
    t,
    await patch(ideas.a.id, { title: 'renamed', parentId: ideas.a1.id }),
    400,
    'CIRCULAR_DEPENDENCY',
    'nothing of a refused patch applies',
  );
  t.same(await everything(s), before, 'refused re-parents wrote nothing');

  const moved = await patch(ideas.a1.id, { parentId: ideas.b.id });
  t.equal(moved.status, 200);
  t.equal(moved.body.parentId, ideas.b.id);
  t.equal(
    (await patch(ideas.a.id, { parentId: ideas.a1x.id })).status,
    200,
    "a1x left a's subtree with a1, so a may go under it",
  );
  t.equal(
    (await patch(ideas.loose.id, { parentId: ideas.a.id })).status,
    200,
    'a root goes under another idea',
  );
  const toRoot = await patch(ideas.a1.id, { parentId: null });
  t.equal(toRoot.body.parentId, null, 'null makes a root');
  const tree = byTitle(
    (await s.api<Brainstorm>('GET', `/v1/brainstorms/${board.id}`, { token: s.adminKey })).body,
  );
  t.same(
    Object.fromEntries(
      Object.entries(tree).map(([title, idea]) => [
        title,
        idea.parentId ? Object.values(tree).find((p) => p.id === idea.parentId)?.title : null,
      ]),
    ),
    { root: null, a: 'a1x', a1: null, a1x: 'a1', b: 'root', loose: 'a' },
  );
});

t.test('two re-parents at once cannot close a cycle between them', async (t) => {
  const s = await server(t);
  for (let round = 0; round < 5; round++) {
    const board = await newBrainstorm(t, s, {
      name: `Race ${round}`,
      ideas: [{ title: 'x' }, { title: 'y' }],
    });
    const [x, y] = board.ideas as [Idea, Idea];
    const path = (id: string) => `/v1/brainstorms/${board.id}/ideas/${id}`;
    const results = await Promise.all([
      s.api<Refusal>('PATCH', path(x.id), { token: s.adminKey, body: { parentId: y.id } }),
      s.api<Refusal>('PATCH', path(y.id), { token: s.adminKey, body: { parentId: x.id } }),
    ]);
    t.same(
      results.map((r) => r.status).sort(),
      [200, 400],
      `round ${round}: one wins, the other is refused`,
    );
    t.equal(results.find((r) => r.status === 400)?.body.error.code, 'CIRCULAR_DEPENDENCY');
    const rows =
      await s.sql`select count(*)::int as n from ideas where brainstorm_id = ${board.id} and parent_id is null`;
    t.equal(rows[0]!.n, 1, 'one root remains');
  }
});

t.test('delete: children move to its parent, with comments and files gone', async (t) => {
  const s = await server(t);
  const board = await newBrainstorm(t, s, TREE);
  const ideas = byTitle(board);
  const base = `/v1/brainstorms/${board.id}/ideas`;
  t.equal(
    (
      await s.api('POST', `${base}/${ideas.a.id}/comments`, {
        token: s.adminKey,
        body: { body: 'note on a' },
      })
    ).status,
    201,
  );
  t.equal(
    (
      await s.api('POST', `${base}/${ideas.a.id}/attachments?name=a.txt`, {
        token: s.adminKey,
        raw: 'bytes',
        headers: { 'content-type': 'text/plain' },
      })
    ).status,
    201,
  );

  const gone = await s.api('DELETE', `${base}/${ideas.a.id}`, { token: s.adminKey });
  t.equal(gone.status, 204);
  const after = byTitle(
    (await s.api<Brainstorm>('GET', `/v1/brainstorms/${board.id}`, { token: s.adminKey })).body,
  );
  t.notOk(after.a, 'removed');
  t.equal(after.a1.parentId, ideas.root.id, 'its child moved up to its parent');
  t.equal(after.a1x.parentId, ideas.a1.id, 'grandchildren stay where they were');
  t.equal(after.b.parentId, ideas.root.id);
  t.equal(
    (await s.sql`select count(*)::int as n from idea_comments`)[0]!.n,
    0,
    'its comments went with it',
  );
  t.equal(
    (await s.sql`select count(*)::int as n from idea_attachments`)[0]!.n,
    0,
    'its files went with it',
  );

  t.equal((await s.api('DELETE', `${base}/${ideas.root.id}`, { token: s.adminKey })).status, 204);
  const rootless = byTitle(
    (await s.api<Brainstorm>('GET', `/v1/brainstorms/${board.id}`, { token: s.adminKey })).body,
  );
  t.equal(rootless.a1.parentId, null, 'children of a root become roots');
  t.equal(rootless.b.parentId, null);
  assertError(
    t,
    await s.api('DELETE', `${base}/${ideas.a.id}`, { token: s.adminKey }),
    404,
    'NOT_FOUND',
    'irreversible: it is gone',
  );

  // A board whose ideas were all deleted is deleted outright when archived.
  for (const idea of Object.values(rootless))
    t.equal((await s.api('DELETE', `${base}/${idea.id}`, { token: s.adminKey })).status, 204);
  t.equal(
    (await s.api('DELETE', `/v1/brainstorms/${board.id}`, { token: s.adminKey })).status,
    204,
  );
  assertError(
    t,
    await s.api('GET', `/v1/brainstorms/${board.id}`, { token: s.adminKey }),
    404,
    'NOT_FOUND',
  );
});

t.test(
  'comments: oldest first, counted on the idea, authored by the person or the key',
  async (t) => {
    const s = await server(t);
    const { id: bob } = await createPerson(s.sql, {
      email: 'bob@example.com',
      name: 'Bob Builder',
      password: 'correct horse battery',
      workspaceId: s.workspaceId,
      role: 'member',
    });
    const bobToken = await personToken(s, bob);
    const board = await newBrainstorm(t, s, TREE);
    const ideas = byTitle(board);
    const path = `/v1/brainstorms/${board.id}/ideas/${ideas.b.id}/comments`;

    const first = await s.api<IdeaComment>('POST', path, {
      token: s.adminKey,
      body: { body: 'first' },
    });
    t.equal(first.status, 201);
    t.match(first.body.id, /^cmt_/);
    t.match(first.body, { ideaId: ideas.b.id, body: 'first' });
    t.match(first.body.createdAt, ISO);
    t.type(first.body.authorId, 'string');
    const second = await s.api('POST', path, { token: bobToken, body: { body: 'second' } });
    t.match(
      second.body,
      { authorId: bob, authorName: 'Bob Builder' },
      'a person token comments as the person',
    );
    const third = await s.api('POST', path, { token: s.adminKey, body: { body: 'third' } });

    const list = await s.api('GET', path, { token: s.adminKey });
    t.equal(list.status, 200);
    t.same(list.body, { total: 3, items: [first.body, second.body, third.body] }, 'oldest first');
    t.same((await s.api('GET', `${path}?size=1&from=1`, { token: s.adminKey })).body, {
      total: 3,
      items: [second.body],
    });
    t.same(
      (
        await s.api('GET', `/v1/brainstorms/${board.id}/ideas/${ideas.a.id}/comments`, {
          token: s.adminKey,
        })
      ).body,
      { total: 0, items: [] },
    );
    const counted = byTitle(
      (await s.api<Brainstorm>('GET', `/v1/brainstorms/${board.id}`, { token: s.adminKey })).body,
    );
    t.equal(counted.b.commentCount, 3, 'commentCount is true');
    t.equal(counted.a.commentCount, 0);

    const before = await everything(s);
    for (const body of [
      {},
      { body: '' },
      { body: '  ' },
      { body: 'x'.repeat(20_001) },
      { body: 'ok', extra: 1 },
    ]) {
      assertError(
        t,
        await s.api('POST', path, { token: s.adminKey, body }),
        400,
        'VALIDATION_FAILED',
        JSON.stringify(body).slice(0, 40),
      );
    }
    assertError(
      t,
      await s.api('POST', `/v1/brainstorms/${board.id}/ideas/ide_nothere/comments`, {
        token: s.adminKey,
        body: { body: 'x' },
      }),
      404,
      'NOT_FOUND',
    );
    assertError(
      t,
      await s.api('GET', `/v1/brainstorms/${board.id}/ideas/ide_nothere/comments`, {
        token: s.adminKey,
      }),
      404,
      'NOT_FOUND',
    );
    t.same(await everything(s), before);
  },
);

t.test('files: fileCount is true, bytes come back, other boards see nothing', async (t) => {
  const s = await server(t);
  const board = await newBrainstorm(t, s, TREE);
  const ideas = byTitle(board);
  const path = `/v1/brainstorms/${board.id}/ideas/${ideas.a.id}/attachments`;
  const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 255]);

  const up = await s.api<Attachment>(
    'POST',
    `${path}?name=${encodeURIComponent('sketch één.png')}`,
    {
      token: s.adminKey,
      raw: png,
      headers: { 'content-type': 'image/png' },
    },
  );
  t.equal(up.status, 201);
  t.match(up.body.id, /^att_/);
  t.match(up.body, {
    name: 'sketch één.png',
    mimeType: 'image/png',
    sizeBytes: png.length,
    kind: 'reference',
  });
  t.match(up.body.uploadedAt, ISO);
  const second = await s.api('POST', `${path}?name=notes.txt`, {
    token: s.adminKey,
    raw: 'plain',
    headers: { 'content-type': 'text/plain' },
  });
  t.equal(second.status, 201);

  const list = await s.api('GET', path, { token: s.adminKey });
  t.same(list.body, { total: 2, items: [up.body, second.body] });
  const content = await fetch(`${s.url}${path}/${up.body.id}/content`, {
    headers: { authorization: `Bearer ${s.adminKey}` },
  });
  t.equal(content.status, 200);
  t.equal(content.headers.get('content-type'), 'image/png');
  t.match(
    content.headers.get('content-disposition'),
    /attachment; filename\*=UTF-8''sketch%20%C3%A9%C3%A9n\.png/,
  );
  t.same(Buffer.from(await content.arrayBuffer()), png, 'the same bytes');
  t.equal(
    byTitle(
      (await s.api<Brainstorm>('GET', `/v1/brainstorms/${board.id}`, { token: s.adminKey })).body,
    ).a.fileCount,
    2,
    'fileCount is true',
  );

  assertError(
    t,
    await s.api('POST', path, {
      token: s.adminKey,
      raw: 'x',
      headers: { 'content-type': 'text/plain' },
    }),
    400,
    'VALIDATION_FAILED',
    'name is required',
  );
  assertError(
    t,
    await s.api('GET', `${path}/att_nothere/content`, { token: s.adminKey }),
    404,
    'NOT_FOUND',
  );
  assertError(
    t,
    await s.api(
      'GET',
      `/v1/brainstorms/${board.id}/ideas/${ideas.b.id}/attachments/${up.body.id}/content`,
      { token: s.adminKey },
    ),
    404,
    'NOT_FOUND',
    'a file of another idea',
  );
  const other = await otherWorkspace(s);
  assertError(
    t,
    await s.api('GET', `${path}/${up.body.id}/content`, { token: other.key }),
    404,
    'NOT_FOUND',
    'another workspace',
  );
  assertError(t, await s.api('GET', path, { token: other.key }), 404, 'NOT_FOUND');
  assertError(
    t,
    await s.api('POST', `${path}?name=x`, {
      token: other.key,
      raw: 'x',
      headers: { 'content-type': 'text/plain' },
    }),
    404,
    'NOT_FOUND',
  );
  t.equal((await s.sql`select count(*)::int as n from idea_attachments`)[0]!.n, 2);
});

/**
 * The public model of a published brainstorm: looked up in Postgres on every call by the
 * token's hash, titles, tree and tags only, and an SVG idea tree that shows user text as text.
 */
import t from 'tap';
import {
  brainstormDiagramSvg,
  publishedBrainstorm,
} from '../../../src/services/brainstorms/public.service.ts';
import { newBrainstorm, server } from './helpers.ts';
import { createPerson } from '../../helpers/people.ts';
import type { BrainstormSummary, Idea } from '../../helpers/wire.ts';

const tokenOf = (publicUrl: string | null) => (publicUrl ?? '').split('/').pop()!;

t.test(
  'published boards only, current on every call, never a note, assignee, comment or file',
  async (t) => {
    const s = await server(t);
    const { id: ann } = await createPerson(s.sql, {
      email: 'ann@example.com',
      name: 'Ann MARKER-ASSIGNEE',
      password: 'correct horse battery',
      workspaceId: s.workspaceId,
      role: 'member',
    });
    const board = await newBrainstorm(t, s, {
      name: 'Public board',
      ideas: [
        { title: 'Root', tags: ['growth'], notes: 'MARKER-NOTE', assigneeId: ann },
        { title: 'Child', parent: 0, tags: [] },
      ],
    });
    const [root, child] = board.ideas as [Idea, Idea];
    await s.api('POST', `/v1/brainstorms/${board.id}/ideas/${root.id}/comments`, {
      token: s.adminKey,
      body: { body: 'MARKER-COMMENT' },
    });
    await s.api(
      'POST',
      `/v1/brainstorms/${board.id}/ideas/${root.id}/attachments?name=MARKER-FILE.txt`,
      { token: s.adminKey, raw: 'MARKER-BYTES', headers: { 'content-type': 'text/plain' } },
    );

    t.equal(
      await publishedBrainstorm(s.sql, 'A'.repeat(32)),
      null,
      'unpublished: nothing under any token',
    );
    const first = tokenOf(
      (
        await s.api<BrainstormSummary>('POST', `/v1/brainstorms/${board.id}/publish`, {
          token: s.adminKey,
        })
      ).body.publicUrl,
    );
    const model = await publishedBrainstorm(s.sql, first);
    t.ok(model);
    const version = (
      await s.sql`select public_version::int as v from brainstorms where id = ${board.id}`
    )[0]!.v;
    t.same(
      model,
      {
        id: board.id,
        name: 'Public board',
        version,
        ideas: [
          { id: root.id, title: 'Root', tags: ['growth'], parentId: null },
          { id: child.id, title: 'Child', tags: [], parentId: root.id },
        ],
      },
      'titles, tree position and tags only',
    );
    const everyByte = JSON.stringify(model) + brainstormDiagramSvg(model!);
    for (const marker of [
      'MARKER-ASSIGNEE',
      'MARKER-NOTE',
      'MARKER-COMMENT',
      'MARKER-FILE',
      'MARKER-BYTES',
      ann,
    ]) {
      t.notOk(everyByte.includes(marker), `no ${marker}`);
    }

    // What the public cannot see leaves the public version alone: its ETag tells nothing.
    await s.api('POST', `/v1/brainstorms/${board.id}/ideas/${root.id}/comments`, {
      token: s.adminKey,
      body: { body: 'MARKER-COMMENT-2' },
    });
    await s.api('PATCH', `/v1/brainstorms/${board.id}/ideas/${root.id}`, {
      token: s.adminKey,
      body: { notes: 'MARKER-NOTE-2', assigneeId: null },
    });
    t.same(
      await publishedBrainstorm(s.sql, first),
      model,
      'comments, notes and assignees change nothing public',
    );

    // Current on every call: a change shows at once, with a new version.
    await s.api('PATCH', `/v1/brainstorms/${board.id}/ideas/${root.id}`, {
      token: s.adminKey,
      body: { title: 'Root renamed' },
    });
    const changed = await publishedBrainstorm(s.sql, first);
    t.equal(changed!.ideas[0]!.title, 'Root renamed');
    t.ok(changed!.version > model!.version, 'the version moves with what the public sees');
    await s.api('PATCH', `/v1/brainstorms/${board.id}/ideas/${child.id}`, {
      token: s.adminKey,
      body: { tags: ['new'] },
    });
    const tagged = await publishedBrainstorm(s.sql, first);
    t.same(tagged!.ideas[1]!.tags, ['new']);
    t.ok(tagged!.version > changed!.version, 'tags are public');
    await s.api('PATCH', `/v1/brainstorms/${board.id}`, {
      token: s.adminKey,
      body: { name: 'Public board, renamed' },
    });
    const renamed = await publishedBrainstorm(s.sql, first);
    t.equal(renamed!.name, 'Public board, renamed');
    t.ok(renamed!.version > tagged!.version, 'so is the name');

    // A new publish retires the old token; unpublish retires every token.
    const second = tokenOf(
      (
        await s.api<BrainstormSummary>('POST', `/v1/brainstorms/${board.id}/publish`, {
          token: s.adminKey,
        })
      ).body.publicUrl,
    );
    t.equal(await publishedBrainstorm(s.sql, first), null, 'the old link is dead');
    t.equal((await publishedBrainstorm(s.sql, second))!.id, board.id);
    await s.api('POST', `/v1/brainstorms/${board.id}/unpublish`, { token: s.adminKey });
    t.equal(await publishedBrainstorm(s.sql, second), null, 'dead at once after unpublish');
    t.same(
      await s.sql`select public_token, public_token_hash from brainstorms where id = ${board.id}`,
      [{ publicToken: null, publicTokenHash: null }],
    );

    for (const wrong of [
      '',
      'short',
      second.slice(0, 31),
      `${second}x`,
      `${second.slice(0, 31)}!`,
      '../'.repeat(11),
      `${'A'.repeat(31)}=`,
    ]) {
      t.equal(await publishedBrainstorm(s.sql, wrong), null, `token ${JSON.stringify(wrong)}`);
    }
  },
);

t.test('the SVG shows names, titles and tags as text, boxes in tree positions', async (t) => {
  const evil = [
    '<script>alert(1)</script>',
    '</svg><img src=x onerror=alert(1)>',
    '"><img onerror=alert(2)>',
    "'&amp;",
  ];
  const svg = brainstormDiagramSvg({
    id: 'brn_x',
    name: evil[1]!,
    version: 1,
    ideas: [
      { id: 'ide_a', title: evil[0]!, tags: [evil[2]!], parentId: null },
      { id: 'ide_b', title: evil[3]!, tags: [], parentId: 'ide_a' },
      { id: 'ide_c', title: 'Second child', tags: ['x'], parentId: 'ide_a' },
    ],
  });
  t.match(svg, /^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  t.equal(svg.match(/<svg/g)!.length, 1, 'one svg element');
  t.equal(svg.match(/<\/svg>/g)!.length, 1, 'closed once: no injected end tag');
  t.notOk(/<script|<img/i.test(svg), 'no injected element');
  t.match(svg, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
  t.match(svg, /&quot;&gt;&lt;img onerror=alert\(2\)&gt;/);
  t.match(svg, /&#39;&amp;amp;/);
  t.match(svg, /role="img"/);
  t.equal(svg.match(/<rect /g)!.length, 3, 'a box per idea');
  t.equal(svg.match(/<line /g)!.length, 2, 'a link per parent');
  const boxes = [...svg.matchAll(/<rect x="(\d+(?:\.\d+)?)" y="(\d+)"/g)].map((m) => ({
    x: Number(m[1]),
    y: Number(m[2]),
  }));
  t.ok(
    boxes[1]!.y > boxes[0]!.y && boxes[2]!.y === boxes[1]!.y,
    'children a row below their parent',
  );
  t.equal(boxes[0]!.x, (boxes[1]!.x + boxes[2]!.x) / 2, 'a parent centred over its children');

  t.match(
    brainstormDiagramSvg({ id: 'brn_e', name: 'Empty', version: 1, ideas: [] }),
    /No ideas yet/,
  );
  const chain = Array.from({ length: 10_000 }, (_, i) => ({
    id: `ide_${i}`,
    title: `Idea ${i}`,
    tags: [],
    parentId: i > 0 ? `ide_${i - 1}` : null,
  }));
  t.equal(
    brainstormDiagramSvg({ id: 'brn_deep', name: 'Deep', version: 1, ideas: chain }).match(
      /<rect /g,
    )!.length,
    10_000,
    'a 10,000-deep chain draws',
  );
});

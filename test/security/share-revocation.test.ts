/**
 * Issue 17, item 3: a share can be taken back and its role changed. DELETE
 * /v1/flows/{flowId}/shares/{shareId} (and under /v1/brainstorms/{id}/shares) ends a guest's
 * access at once: the guest's next read of the flow, its tasks, schedule, report and comments
 * is 404 in this process and in a second one on the same database where the flow is hot, even
 * when revalidating a copy the guest holds (ETag) or asking for MessagePack. PATCH changes the
 * share's role: a commenter comments, a viewer cannot.
 */
import t from 'tap';
import { SCOPES } from '../../src/services/auth/principal.ts';
import { createKey, createWorkspace } from '../../src/services/auth/provision.ts';
import { startApp } from '../../src/compose.ts';
import { loadConfig } from '../../src/platform/config.ts';
import { member, newFlow, ok, startFlowServer } from '../helpers/flows.ts';
import { createPerson, personToken } from '../helpers/people.ts';
import { assertError, item, request } from '../helpers/server.ts';
import type {
  Brainstorm,
  BrainstormShare,
  Flow,
  JsonDocument,
  Share,
  ShareList,
} from '../helpers/wire.ts';

const MSGPACK = 'application/msgpack';
const WORK_VIEWS = [
  '/v1/work/available',
  '/v1/work/blocked',
  '/v1/work/in-progress',
  '/v1/work/mine',
  '/v1/work/overview',
];

t.test('revoking and changing shares of flows and brainstorms, across two processes', async (t) => {
  const s = await startFlowServer(t);
  const second = await startApp(
    loadConfig(
      { LOG_LEVEL: 'silent' },
      {
        port: 0,
        databaseUrl: s.databaseUrl,
        rateLimitPerMinute: 1_000_000,
        rateLimitBurst: 1_000_000,
      },
    ),
  );
  t.teardown(() => second.close());
  const bases = [s.url, second.url] as const;
  const where = (base: string) => (base === s.url ? 'first process' : 'second process');

  const ann = await member(s, 'Ann Assignee');
  const flow = await newFlow(t, s, {
    name: 'Launch',
    description: 'Private plans',
    tasks: [
      { name: 'Design', assigneeId: ann, estimateHours: 8 },
      { name: 'Build', after: [0] },
    ],
  });
  const taskId = item(flow.tasks).id;
  const board = (
    await s.api<Brainstorm>('POST', '/v1/brainstorms', {
      token: s.adminKey,
      body: { name: 'Ideas', ideas: [{ title: 'Root' }] },
    })
  ).body;
  const ideaId = item(board.ideas).id;

  const home = await createWorkspace(s.sql, { name: 'Guest home', plan: 'pro' });
  const { id: guestId } = await createPerson(s.sql, {
    email: 'gina@example.com',
    name: 'Gina',
    password: 'correct horse battery',
    workspaceId: home.id,
    role: 'admin',
  });
  const guest = await personToken(s, guestId, home.id);

  const F = `/v1/flows/${flow.id}`;
  const B = `/v1/brainstorms/${board.id}`;
  const flowReads = [
    F,
    `${F}/tasks/${taskId}`,
    `${F}/schedule`,
    `${F}/report`,
    `${F}/tasks/${taskId}/comments`,
  ];
  const guestGet = <T = unknown>(
    base: string,
    path: string,
    headers: Record<string, string> = {},
  ) => request<T>(base, 'GET', path, { token: guest, headers });
  const flowComment = (base: string) =>
    request(base, 'POST', `${F}/tasks/${taskId}/comments`, {
      token: guest,
      body: { body: 'From the guest' },
    });
  const ideaComment = (base: string) =>
    request(base, 'POST', `${B}/ideas/${ideaId}/comments`, {
      token: guest,
      body: { body: 'From the guest' },
    });

  /** The guest's work views never show another workspace's flow. */
  const checkWorkViews = async (what: string) => {
    for (const base of bases) {
      for (const path of WORK_VIEWS) {
        const res = await guestGet(base, path);
        t.equal(res.status, 200, `${what}: ${path} (${where(base)})`);
        t.notOk(
          res.text.includes(flow.id) || res.text.includes(taskId),
          `${what}: ${path} shows nothing of the shared flow (${where(base)})`,
        );
      }
    }
  };

  t.test('DELETE a flow share: the guest is out at once, everywhere', async (t) => {
    const share = await ok<Share>(
      t,
      s,
      'POST',
      `${F}/shares`,
      { email: 'Gina@Example.com', role: 'viewer' },
      201,
    );
    // The guest reads in both processes: the flow is hot in each, and the guest holds ETags.
    const etags = new Map<string, string>();
    for (const base of bases) {
      for (const path of flowReads) {
        const res = await guestGet(base, path);
        t.equal(res.status, 200, `before: ${path} (${where(base)})`);
        etags.set(`${base} ${path}`, res.headers.get('etag') ?? '');
      }
      t.equal(
        (await guestGet(base, F, { accept: MSGPACK })).status,
        200,
        `before: MessagePack (${where(base)})`,
      );
      const flowRes = await guestGet<Flow>(base, F);
      t.match(
        flowRes.body.tasks[0],
        { id: taskId, assigneeId: ann },
        'the guest sees assignees while shared',
      );
    }
    await checkWorkViews('before');

    const revoked = await s.api('DELETE', `${F}/shares/${share.id}`, { token: s.adminKey });
    t.equal(revoked.status, 204, 'revoked');
    t.equal(revoked.text, '', 'no body');

    // The very next request, in either process, whatever the guest asks with.
    for (const base of [second.url, s.url]) {
      for (const path of flowReads) {
        assertError(
          t,
          await guestGet(base, path),
          404,
          'NOT_FOUND',
          `after: ${path} (${where(base)})`,
        );
        const tag = etags.get(`${base} ${path}`);
        if (tag)
          assertError(
            t,
            await guestGet(base, path, { 'if-none-match': tag }),
            404,
            'NOT_FOUND',
            `after, revalidating: ${path} (${where(base)})`,
          );
      }
      t.equal(
        (await guestGet(base, F, { accept: MSGPACK })).status,
        404,
        `after: MessagePack (${where(base)})`,
      );
      assertError(
        t,
        await flowComment(base),
        404,
        'NOT_FOUND',
        `after: no comment (${where(base)})`,
      );
    }
    await checkWorkViews('after');
    t.same((await ok<ShareList>(t, s, 'GET', `${F}/shares`)).items, [], 'no longer listed');
    assertError(
      t,
      await s.api('DELETE', `${F}/shares/${share.id}`, { token: s.adminKey }),
      404,
      'NOT_FOUND',
      'already revoked',
    );
    assertError(
      t,
      await s.api('PATCH', `${F}/shares/${share.id}`, {
        token: s.adminKey,
        body: { role: 'commenter' },
      }),
      404,
      'NOT_FOUND',
      'a revoked share cannot be changed',
    );

    // Shared again, the guest is back (a new share).
    const again = await ok<Share>(t, s, 'POST', `${F}/shares`, { email: 'gina@example.com' }, 201);
    t.not(again.id, share.id);
    for (const base of bases)
      t.equal((await guestGet(base, F)).status, 200, `shared again (${where(base)})`);
  });

  t.test(
    'PATCH a flow share: viewer ↔ commenter decides whether the guest may comment',
    async (t) => {
      const [share] = (await ok<ShareList>(t, s, 'GET', `${F}/shares`)).items as [Share];
      t.equal(share.role, 'viewer');
      for (const base of bases)
        assertError(
          t,
          await flowComment(base),
          403,
          'FORBIDDEN',
          `a viewer cannot comment (${where(base)})`,
        );

      const promoted = await request(second.url, 'PATCH', `${F}/shares/${share.id}`, {
        token: s.adminKey,
        body: { role: 'commenter' },
      });
      t.equal(promoted.status, 200, promoted.text);
      t.same(promoted.body, { ...share, role: 'commenter' }, 'the same Share, with the new role');
      for (const base of bases)
        t.equal((await flowComment(base)).status, 201, `a commenter comments (${where(base)})`);
      t.same(
        (await ok<ShareList>(t, s, 'GET', `${F}/shares`)).items,
        [promoted.body],
        'listed with the new role',
      );

      const demoted = await s.api<Share>('PATCH', `${F}/shares/${share.id}`, {
        token: s.adminKey,
        body: { role: 'viewer' },
      });
      t.equal(demoted.status, 200);
      t.equal(demoted.body.role, 'viewer');
      for (const base of bases) {
        assertError(
          t,
          await flowComment(base),
          403,
          'FORBIDDEN',
          `a viewer again (${where(base)})`,
        );
        t.equal((await guestGet(base, F)).status, 200, `and still reads (${where(base)})`);
      }
    },
  );

  t.test('brainstorm shares: DELETE ends access everywhere; PATCH changes the role', async (t) => {
    const share = await ok<BrainstormShare>(
      t,
      s,
      'POST',
      `${B}/shares`,
      { email: 'gina@example.com' },
      201,
    );
    const etags = new Map<string, string>();
    for (const base of bases) {
      const res = await guestGet(base, B);
      t.equal(res.status, 200, `the guest reads the board (${where(base)})`);
      etags.set(base, res.headers.get('etag')!);
      assertError(
        t,
        await ideaComment(base),
        403,
        'FORBIDDEN',
        `a viewer cannot comment (${where(base)})`,
      );
    }

    const promoted = await request(second.url, 'PATCH', `${B}/shares/${share.id}`, {
      token: s.adminKey,
      body: { role: 'commenter' },
    });
    t.equal(promoted.status, 200, promoted.text);
    t.same(promoted.body, { ...share, role: 'commenter' }, 'the same share, with the new role');
    for (const base of bases)
      t.equal((await ideaComment(base)).status, 201, `a commenter comments (${where(base)})`);
    const demoted = await s.api('PATCH', `${B}/shares/${share.id}`, {
      token: s.adminKey,
      body: { role: 'viewer' },
    });
    t.same(demoted.body, share, 'back to viewer');
    for (const base of bases)
      assertError(t, await ideaComment(base), 403, 'FORBIDDEN', `a viewer again (${where(base)})`);

    t.equal(
      (await s.api('DELETE', `${B}/shares/${share.id}`, { token: s.adminKey })).status,
      204,
      'revoked',
    );
    for (const base of [second.url, s.url]) {
      assertError(
        t,
        await guestGet(base, B),
        404,
        'NOT_FOUND',
        `the board is gone for the guest (${where(base)})`,
      );
      assertError(
        t,
        await guestGet(base, B, { 'if-none-match': etags.get(base)! }),
        404,
        'NOT_FOUND',
        `also when revalidating (${where(base)})`,
      );
      assertError(
        t,
        await guestGet(base, `${B}/ideas/${ideaId}/comments`),
        404,
        'NOT_FOUND',
        `and its comments (${where(base)})`,
      );
      const listed = await guestGet(base, '/v1/brainstorms');
      t.notOk(listed.text.includes(board.id), `no longer listed for the guest (${where(base)})`);
    }
    assertError(
      t,
      await s.api('PATCH', `${B}/shares/${share.id}`, {
        token: s.adminKey,
        body: { role: 'commenter' },
      }),
      404,
      'NOT_FOUND',
      'a revoked share cannot be changed',
    );
  });

  t.test(
    "refusals: unknown ids, another flow's or workspace's shares, roles, scopes, bodies; nothing changes",
    async (t) => {
      const other = await createWorkspace(s.sql, { name: 'Other', plan: 'pro' });
      const otherKey = (
        await createKey(s.sql, { workspaceId: other.id, role: 'admin', scopes: [...SCOPES] })
      ).key;
      const theirFlow = await newFlow(t, s, { name: 'Theirs' }, otherKey);
      const theirShare = await ok<Share>(
        t,
        s,
        'POST',
        `/v1/flows/${theirFlow.id}/shares`,
        { email: 'gina@example.com' },
        201,
        otherKey,
      );
      const theirBoard = (
        await s.api<Brainstorm>('POST', '/v1/brainstorms', {
          token: otherKey,
          body: { name: 'Theirs' },
        })
      ).body;
      const theirBoardShare = await ok<BrainstormShare>(
        t,
        s,
        'POST',
        `/v1/brainstorms/${theirBoard.id}/shares`,
        { email: 'gina@example.com' },
        201,
        otherKey,
      );
      const sibling = await newFlow(t, s, { name: 'Sibling' });
      const siblingShare = await ok<Share>(
        t,
        s,
        'POST',
        `/v1/flows/${sibling.id}/shares`,
        { email: 'hugo@example.com' },
        201,
      );
      const mine = item((await ok<ShareList>(t, s, 'GET', `${F}/shares`)).items);
      const myBoardShare = await ok<BrainstormShare>(
        t,
        s,
        'POST',
        `${B}/shares`,
        { email: 'gina@example.com' },
        201,
      );

      const rows = async () => ({
        flows: await s.sql`select id, flow_id, role, updated_at from shares order by id`,
        boards:
          await s.sql`select id, brainstorm_id, role, updated_at from brainstorm_shares order by id`,
      });
      const before = await rows();
      const both = (path: string) =>
        [
          ['DELETE', path, undefined],
          ['PATCH', path, { role: 'commenter' }],
        ] as const;
      const notFound: (readonly [string, string, unknown, string?])[] = [
        ...both(`${F}/shares/shr_unknown`),
        ...both(`${F}/shares/${theirShare.id}`), // another workspace's share, under my flow
        ...both(`${F}/shares/${siblingShare.id}`), // another flow's share
        ...both(`/v1/flows/${theirFlow.id}/shares/${theirShare.id}`), // another workspace's flow
        ...both(`/v1/flows/flw_unknown/shares/${mine.id}`),
        ...both(`${B}/shares/shr_unknown`),
        ...both(`${B}/shares/${theirBoardShare.id}`),
        ...both(`${B}/shares/${mine.id}`), // a flow share is no brainstorm share
        ...both(`/v1/brainstorms/${theirBoard.id}/shares/${theirBoardShare.id}`),
      ];
      for (const [method, path, body] of notFound)
        assertError(
          t,
          await s.api(method, path, { token: s.adminKey, body }),
          404,
          'NOT_FOUND',
          `${method} ${path}`,
        );
      // The other workspace cannot touch mine either; the guest cannot change their own share.
      for (const [method, path, body] of [
        ...both(`${F}/shares/${mine.id}`),
        ...both(`${B}/shares/${myBoardShare.id}`),
      ]) {
        assertError(
          t,
          await s.api(method, path, { token: otherKey, body }),
          404,
          'NOT_FOUND',
          `other workspace: ${method} ${path}`,
        );
      }
      for (const [method, path, body] of both(`${F}/shares/${mine.id}`))
        assertError(
          t,
          await s.api(method, path, { token: guest, body }),
          404,
          'NOT_FOUND',
          `guest: ${method} ${path}`,
        );
      for (const [method, path, body] of both(`${B}/shares/${myBoardShare.id}`))
        assertError(
          t,
          await s.api(method, path, { token: guest, body }),
          403,
          'FORBIDDEN',
          `guest: ${method} ${path}`,
        );

      const viewerKey = (
        await createKey(s.sql, { workspaceId: s.workspaceId, role: 'viewer', scopes: [...SCOPES] })
      ).key;
      const readOnly = (
        await createKey(s.sql, {
          workspaceId: s.workspaceId,
          role: 'admin',
          scopes: ['flows:read'],
        })
      ).key;
      for (const path of [`${F}/shares/${mine.id}`, `${B}/shares/${myBoardShare.id}`]) {
        for (const [method, , body] of both(path)) {
          assertError(
            t,
            await s.api(method, path, { token: viewerKey, body }),
            403,
            'FORBIDDEN',
            `viewer role: ${method} ${path}`,
          );
          assertError(
            t,
            await s.api(method, path, { token: readOnly, body }),
            403,
            'INSUFFICIENT_SCOPE',
            `read scope: ${method} ${path}`,
          );
        }
        for (const body of [
          {},
          { role: 'admin' },
          { role: 'viewer', email: 'x@example.com' },
          { role: ['viewer'] },
        ]) {
          assertError(
            t,
            await s.api('PATCH', path, { token: s.adminKey, body }),
            400,
            'VALIDATION_FAILED',
            `PATCH ${path} ${JSON.stringify(body)}`,
          );
        }
      }
      t.same(await rows(), before, 'no refusal changed or removed a share');
    },
  );

  t.test('the routes are in the OpenAPI document', async (t) => {
    const doc = (await request<JsonDocument>(s.url, 'GET', '/v1/openapi.json')).body;
    const flowShare = doc.paths['/v1/flows/{flowId}/shares/{shareId}'];
    const boardShare = doc.paths['/v1/brainstorms/{brainstormId}/shares/{shareId}'];
    for (const [operation, what] of [
      [flowShare?.delete, 'DELETE flow share'],
      [boardShare?.delete, 'DELETE brainstorm share'],
    ] as const) {
      t.ok(operation?.responses?.['204'], `${what} answers 204`);
      t.ok(operation?.responses?.['404'], `${what} documents 404`);
    }
    for (const [operation, what] of [
      [flowShare?.patch, 'PATCH flow share'],
      [boardShare?.patch, 'PATCH brainstorm share'],
    ] as const) {
      t.ok(operation?.responses?.['200'], `${what} answers 200`);
      t.ok(operation?.requestBody, `${what} has a body`);
      t.same(
        operation?.parameters?.map((p: { name: string }) => p.name).sort(),
        what.includes('flow') ? ['flowId', 'shareId'] : ['brainstormId', 'shareId'],
      );
    }
  });
});

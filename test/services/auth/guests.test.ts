/**
 * Guests (spec §5 permission model, §1 rule 9): a person whose account has a share on a flow
 * of another workspace reaches that flow from their own workspace's person token — a viewer
 * reads it, a commenter also comments — and nothing else of that workspace. Nobody without a
 * share sees it (404), and an API key never acts as a guest.
 */
import t from 'tap';
import { createKey, createWorkspace } from '../../../src/services/auth/provision.ts';
import { SCOPES } from '../../../src/services/auth/principal.ts';
import { createPerson, personToken } from '../../helpers/people.ts';
import { assertError, startTestServer, item } from '../../helpers/server.ts';
import type { CommentList, Flow, FlowList } from '../../helpers/wire.ts';

t.test('guests reach exactly the flows shared with them', async (t) => {
  const s = await startTestServer(t);
  const created = await s.api<Flow>('POST', '/v1/flows', {
    token: s.adminKey,
    body: { name: 'Launch', tasks: [{ name: 'Design' }, { name: 'Build', after: [0] }] },
  });
  t.equal(created.status, 201);
  const flowId = created.body.id;
  const taskId = item(created.body.tasks).id;
  const other = await s.api<Flow>('POST', '/v1/flows', {
    token: s.adminKey,
    body: { name: 'Private' },
  });

  const { id: home } = await createWorkspace(s.sql, { name: 'Guest home' });
  const { id: guestId } = await createPerson(s.sql, {
    email: 'Guest@Example.com',
    name: 'Gia Guest',
    password: 'long enough password',
    workspaceId: home,
    role: 'admin',
  });
  const { id: strangerId } = await createPerson(s.sql, {
    email: 'stranger@example.com',
    name: 'Stan',
    password: 'long enough password',
    workspaceId: home,
    role: 'admin',
  });
  const guest = await personToken(s, guestId, home);
  const stranger = await personToken(s, strangerId, home);
  const homeKey = (
    await createKey(s.sql, { workspaceId: home, role: 'admin', scopes: [...SCOPES] })
  ).key;

  const share = (role: string) =>
    s.api('POST', `/v1/flows/${flowId}/shares`, {
      token: s.adminKey,
      body: { email: 'guest@example.com', role },
    });
  t.equal((await share('viewer')).status, 201);

  const reads = [
    `/v1/flows/${flowId}`,
    `/v1/flows/${flowId}/schedule`,
    `/v1/flows/${flowId}/report`,
    `/v1/flows/${flowId}/tasks/${taskId}`,
    `/v1/flows/${flowId}/tasks/${taskId}/comments`,
  ];
  const comment = (token: string) =>
    s.api('POST', `/v1/flows/${flowId}/tasks/${taskId}/comments`, {
      token,
      body: { body: 'Looks good' },
    });

  t.test('a viewer guest reads the flow, and nothing else', async (t) => {
    for (const path of reads)
      t.equal((await s.api('GET', path, { token: guest })).status, 200, path);
    const flow = await s.api<Flow>('GET', `/v1/flows/${flowId}`, { token: guest });
    t.equal(flow.body.name, 'Launch');
    assertError(t, await comment(guest), 403, 'FORBIDDEN', 'a viewer cannot comment');
    const refused: [string, string, unknown?][] = [
      ['PATCH', `/v1/flows/${flowId}`, { name: 'Mine now' }],
      ['DELETE', `/v1/flows/${flowId}`],
      ['POST', `/v1/flows/${flowId}/tasks`, { name: 'Sneaky' }],
      ['POST', `/v1/flows/${flowId}/tasks/${taskId}/start`],
      ['POST', `/v1/flows/${flowId}/publish`],
      ['GET', `/v1/flows/${flowId}/shares`],
      ['POST', `/v1/flows/${flowId}/shares`, { email: 'friend@example.com' }],
      ['GET', `/v1/flows/${other.body.id}`],
    ];
    for (const [method, path, body] of refused)
      assertError(
        t,
        await s.api(method, path, { token: guest, body }),
        404,
        'NOT_FOUND',
        `${method} ${path}`,
      );
    const list = await s.api<FlowList>('GET', '/v1/flows', { token: guest });
    t.equal(list.body.total, 0, "the guest's own workspace list is their own");
  });

  t.test('nobody else: another person of the guest’s workspace, an API key', async (t) => {
    for (const token of [stranger, homeKey]) {
      for (const path of reads)
        assertError(t, await s.api('GET', path, { token }), 404, 'NOT_FOUND', path);
      assertError(t, await comment(token), 404, 'NOT_FOUND');
    }
  });

  t.test('a commenter also comments, attributed to the person', async (t) => {
    t.equal((await share('commenter')).status, 201);
    const res = await comment(guest);
    t.equal(res.status, 201, res.text);
    t.match(res.body, { authorId: guestId, authorName: 'Gia Guest', body: 'Looks good' });
    assertError(
      t,
      await s.api('POST', `/v1/flows/${flowId}/tasks/${taskId}/start`, { token: guest }),
      404,
      'NOT_FOUND',
      'still no work on the flow',
    );
    const listed = await s.api<CommentList>('GET', `/v1/flows/${flowId}/tasks/${taskId}/comments`, {
      token: s.adminKey,
    });
    t.equal(listed.body.total, 1, 'the workspace sees the comment');
  });

  t.test("the token's own scopes still narrow a guest", async (t) => {
    const narrow = await personToken(s, guestId, home, ['team:read']);
    assertError(
      t,
      await s.api('GET', `/v1/flows/${flowId}`, { token: narrow }),
      403,
      'INSUFFICIENT_SCOPE',
    );
  });
});

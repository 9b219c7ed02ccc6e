import t from 'tap';
import { SCOPES } from '../../../src/services/auth/principal.ts';
import { createKey, createWorkspace } from '../../../src/services/auth/provision.ts';
import { assertError, item } from '../../helpers/server.ts';
import { assertUnchanged, newFlow, ok, startFlowServer, visible } from '../../helpers/flows.ts';
import type { Attachment, FlowList } from '../../helpers/wire.ts';

t.test("another workspace's flows and tasks are 404 on every route and never listed", async (t) => {
  const s = await startFlowServer(t);
  const other = await createWorkspace(s.sql, { name: 'Other' });
  const { key } = await createKey(s.sql, {
    workspaceId: other.id,
    role: 'admin',
    scopes: [...SCOPES],
  });
  const theirs = await newFlow(
    t,
    s,
    { name: 'Theirs', tasks: [{ name: 'A' }, { name: 'B', after: [0] }] },
    key,
  );

  const flow = await newFlow(t, s, {
    name: 'Mine',
    tasks: [{ name: 'A' }, { name: 'B', after: [0] }],
  });
  const [a, b] = flow.tasks.map((x) => x.id);
  const F = `/v1/flows/${flow.id}`;
  const T = `${F}/tasks/${a}`;
  await ok(t, s, 'POST', `${T}/comments`, { body: 'secret' }, 201);
  const file = await ok<Attachment>(
    t,
    s,
    'POST',
    `${T}/attachments?name=secret.txt`,
    undefined,
    201,
  );
  await ok(t, s, 'POST', `${F}/tasks/${b}/deliverables`, { name: 'D' }, 201);

  const mineList = await ok<FlowList>(t, s, 'GET', '/v1/flows');
  t.strictSame(
    mineList.items.map((x) => x.id),
    [flow.id],
    'their flow is not in my list',
  );
  const theirList = await ok<FlowList>(t, s, 'GET', '/v1/flows', undefined, 200, key);
  t.strictSame(
    theirList.items.map((x) => x.id),
    [theirs.id],
    'my flow is not in their list',
  );
  t.equal(theirList.total, 1);
  t.equal(
    (await ok<FlowList>(t, s, 'GET', '/v1/flows?archived=true&q=Mine', undefined, 200, key)).total,
    0,
  );

  const before = await visible(s, [flow.id]);
  const routes: [string, string, unknown?, string?][] = [
    ['GET', F],
    ['PATCH', F, { name: 'stolen' }],
    ['DELETE', F],
    ['POST', `${F}/restore`],
    ['POST', `${F}/publish`],
    ['POST', `${F}/unpublish`],
    ['GET', `${F}/schedule?startDate=2025-03-03`],
    ['GET', `${F}/report`],
    ['POST', `${F}/tasks`, { name: 'injected' }],
    ['GET', T],
    ['PATCH', T, { name: 'stolen' }],
    ['DELETE', T],
    ['POST', `${F}/tasks/${b}/dependencies`, { taskId: a }],
    ['DELETE', `${F}/tasks/${b}/dependencies/${a}`],
    ['POST', `${T}/start`],
    ['POST', `${T}/complete`],
    ['POST', `${T}/reopen`],
    ['POST', `${T}/assign`, { assigneeId: null }],
    ['GET', `${T}/comments`],
    ['POST', `${T}/comments`, { body: 'hi' }],
    ['GET', `${T}/attachments`],
    ['POST', `${T}/attachments?name=x.txt`, undefined, 'raw'],
    ['GET', `${T}/attachments/${file.id}/content`],
    ['POST', `${T}/deliverables`, { name: 'x' }],
    // Their own flow id with my task id: still nothing of mine.
    ['GET', `/v1/flows/${theirs.id}/tasks/${a}`],
    ['GET', `/v1/flows/${theirs.id}/tasks/${a}/comments`],
    ['GET', `/v1/flows/${theirs.id}/tasks/${a}/attachments/${file.id}/content`],
    ['POST', `/v1/flows/${theirs.id}/tasks/${a}/start`],
  ];
  for (const [method, path, body, raw] of routes) {
    const res = await s.api(
      method,
      path,
      raw
        ? { token: key, raw: Buffer.from('bytes'), headers: { 'content-type': 'text/plain' } }
        : { token: key, body },
    );
    assertError(t, res, 404, 'NOT_FOUND', `${method} ${path}`);
    t.notOk(
      res.text.includes('secret') || res.text.includes('Mine'),
      `${method} ${path} leaks nothing`,
    );
  }
  await assertUnchanged(t, s, before, "another workspace's attempts");
  // Their flow is untouched by my key as well.
  const theirsBefore = await visible(s, [theirs.id], key);
  assertError(
    t,
    await s.api('GET', `/v1/flows/${theirs.id}`, { token: s.adminKey }),
    404,
    'NOT_FOUND',
  );
  assertError(
    t,
    await s.api('DELETE', `/v1/flows/${theirs.id}`, { token: s.adminKey }),
    404,
    'NOT_FOUND',
  );
  assertError(
    t,
    await s.api('POST', `/v1/flows/${theirs.id}/tasks/${item(theirs.tasks).id}/start`, {
      token: s.adminKey,
    }),
    404,
    'NOT_FOUND',
  );
  await assertUnchanged(t, s, theirsBefore, 'my attempts on their flow', key);
});

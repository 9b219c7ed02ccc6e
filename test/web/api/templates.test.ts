import t, { type Test } from 'tap';
import { SCOPES, type Role, type Scope } from '../../../src/services/auth/principal.ts';
import { createKey, createWorkspace, setWorkspace } from '../../../src/services/auth/provision.ts';
import { TEMPLATES, type TemplateDef } from '../../../src/services/templates/catalogue.ts';
import { syncCatalogue } from '../../../src/services/templates/templates.service.ts';
import { assertUnchanged, startFlowServer, visible } from '../../helpers/flows.ts';
import { afterAuthChange } from '../../helpers/routes.ts';
import { assertError, item, type TestServer } from '../../helpers/server.ts';
import type {
  Flow,
  FlowList,
  JsonDocument,
  Refusal,
  Schedule,
  TemplateDetail,
  TemplateList,
} from '../../helpers/wire.ts';

const RELEASE = TEMPLATES.find((def) => def.id === 'tpl_software-release')!;

async function server(t: Test): Promise<TestServer> {
  const s = await startFlowServer(t);
  // Idempotent: harmless once app.ts syncs at start-up too.
  await syncCatalogue(s.sql);
  return s;
}

async function key(
  s: TestServer,
  role: Role,
  scopes: readonly Scope[] = SCOPES,
  workspaceId = s.workspaceId,
): Promise<string> {
  return (await createKey(s.sql, { workspaceId, role, scopes: [...scopes] })).key;
}

const summary = (def: TemplateDef, usedCount = 0) => ({
  id: def.id,
  name: def.name,
  description: def.description,
  category: def.category,
  taskCount: def.tasks.length,
  usedCount,
});

/** Reference CPM over index order (after points at earlier tasks): working days at 8 hours a day. */
function reference(def: TemplateDef): { critical: boolean[]; durationDays: number } {
  const days = def.tasks.map((task) => Math.max(1, Math.ceil(task.estimateHours / 8)));
  const es: number[] = [];
  def.tasks.forEach(
    (task, i) => (es[i] = Math.max(0, ...task.after.map((j) => es[j]! + days[j]!))),
  );
  const finish = Math.max(...def.tasks.map((_, i) => es[i]! + days[i]!));
  const lf: number[] = def.tasks.map(() => finish);
  for (let i = def.tasks.length - 1; i >= 0; i--) {
    for (const j of def.tasks[i]!.after) lf[j] = Math.min(lf[j]!, lf[i]! - days[i]!);
  }
  return { critical: def.tasks.map((_, i) => lf[i]! - days[i]! === es[i]), durationDays: finish };
}

async function uses(s: TestServer): Promise<number> {
  return (await s.sql<{ n: number }[]>`select count(*)::int as n from template_uses`)[0]!.n;
}

t.test('GET /v1/templates lists the catalogue, filtered by category', async (t) => {
  const s = await server(t);
  const all = await s.api<TemplateList>('GET', '/v1/templates', { token: s.adminKey });
  t.equal(all.status, 200);
  t.ok(all.body.total >= 8, 'at least 8 templates');
  t.same(all.body, { total: TEMPLATES.length, items: TEMPLATES.map((def) => summary(def)) });
  t.ok(all.headers.get('etag'));

  const software = TEMPLATES.filter((def) => def.category === 'software');
  t.ok(software.length >= 2);
  for (const category of ['software', 'Software']) {
    const res = await s.api('GET', `/v1/templates?category=${category}`, { token: s.adminKey });
    t.equal(res.status, 200);
    t.same(
      res.body,
      { total: software.length, items: software.map((def) => summary(def)) },
      `category=${category}`,
    );
  }
  t.same((await s.api('GET', '/v1/templates?category=gardening', { token: s.adminKey })).body, {
    total: 0,
    items: [],
  });
  assertError(
    t,
    await s.api('GET', '/v1/templates?category=', { token: s.adminKey }),
    400,
    'VALIDATION_FAILED',
  );
});

t.test(
  'GET /v1/templates/{id} gives the task graph and schedule shape; unknown is 404',
  async (t) => {
    const s = await server(t);
    const res = await s.api<TemplateDetail>('GET', `/v1/templates/${RELEASE.id}`, {
      token: s.adminKey,
    });
    t.equal(res.status, 200);
    const { critical, durationDays } = reference(RELEASE);
    t.same(res.body, {
      ...summary(RELEASE),
      tasks: RELEASE.tasks.map((task, index) => ({
        index,
        name: task.name,
        description: task.description,
        estimateHours: task.estimateHours,
        estimateRange: task.estimateRange,
        after: [...task.after],
        criticalPath: critical[index],
      })),
      durationDays,
    });
    t.ok(
      res.body.tasks.some((task: { criticalPath: boolean }) => task.criticalPath),
      'a critical path exists',
    );
    for (const def of TEMPLATES) {
      const detail = (
        await s.api<TemplateDetail>('GET', `/v1/templates/${def.id}`, { token: s.adminKey })
      ).body;
      t.equal(detail.durationDays, reference(def).durationDays, `${def.id} duration`);
      t.same(
        detail.tasks.map((task: { criticalPath: boolean }) => task.criticalPath),
        reference(def).critical,
        `${def.id} critical path`,
      );
    }
    for (const id of ['tpl_nope', 'flw_abc', 'x', 'tpl_software-release%20']) {
      assertError(
        t,
        await s.api('GET', `/v1/templates/${id}`, { token: s.adminKey }),
        404,
        'NOT_FOUND',
        `unknown ${id}`,
      );
    }
  },
);

t.test('templates need templates:read', async (t) => {
  const s = await server(t);
  const flowsOnly = await key(s, 'admin', ['flows:read', 'flows:write']);
  assertError(
    t,
    await s.api('GET', '/v1/templates', { token: flowsOnly }),
    403,
    'INSUFFICIENT_SCOPE',
  );
  assertError(
    t,
    await s.api('GET', `/v1/templates/${RELEASE.id}`, { token: flowsOnly }),
    403,
    'INSUFFICIENT_SCOPE',
  );
  const viewer = await key(s, 'viewer', ['templates:read']);
  t.equal(
    (await s.api('GET', '/v1/templates', { token: viewer })).status,
    200,
    'a viewer may read templates',
  );
});

t.test("POST /v1/templates/{id}/flows creates the template's flow", async (t) => {
  const s = await server(t);
  const res = await s.api<Flow>('POST', `/v1/templates/${RELEASE.id}/flows`, { token: s.adminKey });
  t.equal(res.status, 201, 'no body at all');
  const flow = res.body;
  t.match(flow.id, /^flw_/);
  t.equal(flow.name, RELEASE.name, 'name defaults to the template name');
  t.equal(flow.description, RELEASE.description);
  t.equal(flow.archived, false);
  t.equal(flow.dueDate, null);
  t.equal(flow.taskCount, RELEASE.tasks.length);
  t.equal(flow.tasks.length, RELEASE.tasks.length);
  const ids: string[] = flow.tasks.map((task: { id: string }) => task.id);
  RELEASE.tasks.forEach((def, i) => {
    const task = item(flow.tasks, i);
    t.equal(task.name, def.name, `task ${i} name`);
    t.equal(task.description, def.description, `task ${i} description`);
    t.equal(task.estimateHours, def.estimateHours, `task ${i} estimate`);
    t.strictSame(task.estimateRange, def.estimateRange, `task ${i} keeps the template's range`);
    t.ok(
      def.estimateRange.low <= def.estimateHours && def.estimateHours <= def.estimateRange.high,
      `task ${i}: its range holds its estimate`,
    );
    t.equal(task.flowId, flow.id);
    t.equal(task.parentId, null);
    t.same(
      [...task.dependsOn].sort(),
      def.after.map((j) => ids[j]).sort(),
      `task ${i} dependsOn mirrors after`,
    );
    t.equal(task.status, def.after.length === 0 ? 'ready' : 'blocked', `task ${i} status`);
  });
  t.same(
    flow.tasks.map((task: { criticalPath: boolean }) => task.criticalPath),
    reference(RELEASE).critical,
    "the flow's critical path is the one the template announced",
  );

  const stored = await s.api<Flow>('GET', `/v1/flows/${flow.id}`, { token: s.adminKey });
  t.equal(stored.status, 200);
  t.equal(stored.body.name, RELEASE.name);
  t.same(
    stored.body.tasks.map((task: { name: string }) => task.name),
    RELEASE.tasks.map((task) => task.name),
  );
  const list = await s.api<FlowList>('GET', '/v1/flows', { token: s.adminKey });
  t.same(
    list.body.items.map((item: { id: string }) => item.id),
    [flow.id],
    'listed in GET /v1/flows',
  );

  const [event] = await s.sql<
    { flowId: string; data: { templateId: string } }[]
  >`select flow_id, data from outbox where type = 'template.used'`;
  t.same(
    event,
    { flowId: flow.id, data: { templateId: RELEASE.id } },
    'template.used event recorded with the flow',
  );
});

t.test('usedCount counts uses per workspace', async (t) => {
  const s = await server(t);
  const count = async (token: string) => {
    const list = (await s.api<TemplateList>('GET', '/v1/templates', { token })).body.items.find(
      (item: { id: string }) => item.id === RELEASE.id,
    )?.usedCount;
    const one = (await s.api<TemplateDetail>('GET', `/v1/templates/${RELEASE.id}`, { token })).body
      .usedCount;
    t.equal(list, one, 'list and detail agree');
    return one as number;
  };
  const other = await createWorkspace(s.sql, { name: 'Other' });
  const otherKey = await key(s, 'admin', SCOPES, other.id);
  t.equal(await count(s.adminKey), 0);
  t.equal(
    (await s.api('POST', `/v1/templates/${RELEASE.id}/flows`, { token: s.adminKey })).status,
    201,
  );
  t.equal(await count(s.adminKey), 1);
  t.equal(
    (await s.api('POST', `/v1/templates/${RELEASE.id}/flows`, { token: s.adminKey, body: {} }))
      .status,
    201,
  );
  t.equal(await count(s.adminKey), 2);
  t.equal(await count(otherKey), 0, 'another workspace still sees 0');
  t.equal(
    (await s.api('POST', `/v1/templates/${RELEASE.id}/flows`, { token: otherKey })).status,
    201,
  );
  t.equal(await count(otherKey), 1);
  t.equal(await count(s.adminKey), 2);
  const others = (
    await s.api<TemplateList>('GET', '/v1/templates', { token: s.adminKey })
  ).body.items.filter((item: { id: string }) => item.id !== RELEASE.id);
  t.ok(
    others.every((item: { usedCount: number }) => item.usedCount === 0),
    'other templates untouched',
  );
  t.equal(
    (await s.api<FlowList>('GET', '/v1/flows', { token: otherKey })).body.total,
    1,
    'the other workspace sees only its flow',
  );
});

t.test('name and dueDate override', async (t) => {
  const s = await server(t);
  const hire = TEMPLATES.find((def) => def.id === 'tpl_hire-a-role')!;
  const dated = await s.api<Flow>('POST', `/v1/templates/${hire.id}/flows`, {
    token: s.adminKey,
    body: { name: 'Hire a staff engineer', dueDate: '2031-03-14' },
  });
  t.equal(dated.status, 201);
  t.equal(dated.body.name, 'Hire a staff engineer');
  t.equal(dated.body.dueDate, '2031-03-14T00:00:00.000Z');
  t.equal(dated.body.tasks.length, hire.tasks.length);
  const timed = await s.api<Flow>('POST', `/v1/templates/${hire.id}/flows`, {
    token: s.adminKey,
    body: { dueDate: '2031-03-14T17:30:00+01:00' },
  });
  t.equal(timed.status, 201);
  t.equal(timed.body.name, hire.name);
  t.equal(timed.body.dueDate, '2031-03-14T16:30:00.000Z');
  const schedule = await s.api<Schedule>(
    'GET',
    `/v1/flows/${dated.body.id}/schedule?startDate=2031-01-06`,
    {
      token: s.adminKey,
    },
  );
  t.equal(schedule.body.dueDate, '2031-03-14');
});

t.test('bad bodies are 400 VALIDATION_FAILED and write nothing', async (t) => {
  const s = await server(t);
  const before = await visible(s, []);
  const bodies: [unknown, string][] = [
    [{ unknown: 1 }, '/unknown'],
    [{ name: 5 }, '/name'],
    [{ name: '   ' }, '/name'],
    [{ name: '' }, '/name'],
    [{ name: 'x'.repeat(201) }, '/name'],
    [{ dueDate: 'next friday' }, '/dueDate'],
    [{ dueDate: 20310314 }, '/dueDate'],
    [[], ''],
    ['release', ''],
  ];
  for (const [body, pointer] of bodies) {
    const res = await s.api<Refusal>('POST', `/v1/templates/${RELEASE.id}/flows`, {
      token: s.adminKey,
      body,
    });
    assertError(t, res, 400, 'VALIDATION_FAILED', JSON.stringify(body));
    t.ok(
      res.body.error.details.errors.some((e: { pointer: string }) => e.pointer === pointer),
      `points at ${pointer || 'the body'}`,
    );
  }
  assertError(
    t,
    await s.api('POST', `/v1/templates/${RELEASE.id}/flows`, {
      token: s.adminKey,
      raw: '{"name":',
      headers: { 'content-type': 'application/json' },
    }),
    400,
    'VALIDATION_FAILED',
  );
  assertError(
    t,
    await s.api('POST', `/v1/templates/${RELEASE.id}/flows`, {
      token: s.adminKey,
      raw: 'name=x',
      headers: { 'content-type': 'text/plain' },
    }),
    415,
    'UNSUPPORTED_MEDIA_TYPE',
  );
  assertError(
    t,
    await s.api('POST', '/v1/templates/tpl_nope/flows', { token: s.adminKey }),
    404,
    'NOT_FOUND',
  );
  await assertUnchanged(t, s, before, 'refused bodies');
  t.equal(await uses(s), 0, 'no use recorded');
});

/** The server drops its cached credentials on the NOTIFY, which may trail the commit by a moment. */
async function pastDue(s: TestServer, value: boolean): Promise<void> {
  await afterAuthChange(s, async () => {
    await setWorkspace(s.sql, s.workspaceId, { pastDue: value });
    return { code: 0 };
  });
}

t.test('roles, scopes and the subscription gate refuse before anything is written', async (t) => {
  const s = await server(t);
  const before = await visible(s, []);
  const path = `/v1/templates/${RELEASE.id}/flows`;
  assertError(
    t,
    await s.api('POST', path, { token: await key(s, 'viewer') }),
    403,
    'FORBIDDEN',
    'viewer',
  );
  assertError(
    t,
    await s.api('POST', path, { token: await key(s, 'member', ['flows:read', 'flows:write']) }),
    403,
    'INSUFFICIENT_SCOPE',
    'no templates:read',
  );
  const noWrite = await s.api<Refusal>('POST', path, {
    token: await key(s, 'member', ['templates:read', 'flows:read']),
  });
  assertError(t, noWrite, 403, 'INSUFFICIENT_SCOPE', 'no flows:write');
  t.same(noWrite.body.error.details.missing, ['flows:write']);
  assertError(t, await s.api('POST', path), 401, 'UNAUTHORIZED');

  await pastDue(s, true);
  assertError(t, await s.api('POST', path, { token: s.adminKey }), 403, 'SUBSCRIPTION_PAST_DUE');
  assertError(
    t,
    await s.api('POST', path, { token: s.adminKey, body: { name: 'Late' } }),
    403,
    'SUBSCRIPTION_PAST_DUE',
  );
  t.equal(
    (await s.api('GET', '/v1/templates', { token: s.adminKey })).status,
    200,
    'reads still work while past due',
  );
  await assertUnchanged(t, s, before, 'refused callers');
  t.equal(await uses(s), 0, 'no use recorded');

  await pastDue(s, false);
  t.equal(
    (
      await s.api('POST', path, {
        token: await key(s, 'member', ['flows:write', 'templates:read']),
      })
    ).status,
    201,
    'a member with both scopes may',
  );
});

t.test('Idempotency-Key replays the first flow and counts one use', async (t) => {
  const s = await server(t);
  const headers = { 'idempotency-key': 'start-release-1' };
  const first = await s.api<Flow>('POST', `/v1/templates/${RELEASE.id}/flows`, {
    token: s.adminKey,
    body: { name: 'Once' },
    headers,
  });
  const again = await s.api<Flow>('POST', `/v1/templates/${RELEASE.id}/flows`, {
    token: s.adminKey,
    body: { name: 'Once' },
    headers,
  });
  t.equal(first.status, 201);
  t.equal(again.status, 201);
  t.equal(again.body.id, first.body.id);
  t.equal(again.headers.get('idempotent-replayed'), 'true');
  t.equal(await uses(s), 1);
  t.equal((await s.api<FlowList>('GET', '/v1/flows', { token: s.adminKey })).body.total, 1);
});

t.test('the OpenAPI document describes the template routes', async (t) => {
  const s = await server(t);
  const doc = (await s.api<JsonDocument>('GET', '/v1/openapi.json')).body;
  const start = doc.paths['/v1/templates/{templateId}/flows'].post;
  t.equal(start.requestBody.required, false, 'the body is optional');
  t.same(Object.keys(start.requestBody.content['application/json'].schema.properties).sort(), [
    'dueDate',
    'name',
  ]);
  t.ok(start.responses['201'] && start.responses['404'] && start.responses['403']);
  t.match(start.responses['403'].description, /SUBSCRIPTION_PAST_DUE/);
  t.same(start.security[0], { bearer: ['flows:write', 'templates:read'] });
  t.equal(start['x-min-role'], 'member');
  const list = doc.paths['/v1/templates'].get;
  t.same(
    list.parameters.map((p: { name: string }) => p.name),
    ['category'],
  );
  t.ok(doc.paths['/v1/templates/{templateId}'].get.responses['404']);
});

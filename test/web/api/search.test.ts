import t, { type Test } from 'tap';
import { createKey, createWorkspace } from '../../../src/services/auth/provision.ts';
import { syncCatalogue } from '../../../src/services/templates/templates.service.ts';
import { newFlow, startFlowServer } from '../../helpers/flows.ts';
import { assertError, type TestServer, item } from '../../helpers/server.ts';
import type { Flow, FlowList, JsonDocument, Refusal, SearchResults } from '../../helpers/wire.ts';

interface World {
  s: TestServer;
  app: string;
  launch: Flow;
  train: Flow;
  hiring: Flow;
  archived: Flow;
  otherKey: string;
  secret: Flow;
}

/** Three live flows, one archived, and another workspace with a flow of its own. */
async function world(t: Test): Promise<World> {
  const s = await startFlowServer(t);
  // Idempotent: harmless once app.ts syncs at start-up too.
  await syncCatalogue(s.sql);
  const launch = await newFlow(t, s, {
    name: 'Launch plan',
    description: 'Everything for the spring release of Atlas',
    tasks: [{ name: 'Book venue' }, { name: 'Press kit', after: [0] }, { name: 'Design review' }],
  });
  const train = await newFlow(t, s, {
    name: 'Release train',
    description: 'Monthly cadence for shipping',
    tasks: [{ name: 'Cut branch' }, { name: 'Smoke test', after: [0] }],
  });
  const hiring = await newFlow(t, s, {
    name: 'Hiring pipeline',
    description: 'Backend engineers for the payments team',
    tasks: [{ name: 'Phone screens' }],
  });
  const archived = await newFlow(t, s, {
    name: 'Zeppelin ride',
    description: 'Mothballed',
    tasks: [{ name: 'Inflate zeppelin' }],
  });
  t.equal((await s.api('DELETE', `/v1/flows/${archived.id}`, { token: s.adminKey })).status, 204);
  const other = await createWorkspace(s.sql, { name: 'Other' });
  const otherKey = (
    await createKey(s.sql, {
      workspaceId: other.id,
      role: 'admin',
      scopes: ['flows:read', 'flows:write', 'templates:read'],
    })
  ).key;
  const secret = await newFlow(
    t,
    s,
    {
      name: 'Launch secret weapon',
      description: 'Classified payments work',
      tasks: [{ name: 'Smoke signals' }],
    },
    otherKey,
  );
  return {
    s,
    app: s.app.services.config.appUrl,
    launch,
    train,
    hiring,
    archived,
    otherKey,
    secret,
  };
}

async function find(
  t: Test,
  w: World,
  query: string,
  token = w.s.adminKey,
): Promise<SearchResults> {
  const res = await w.s.api<SearchResults>('GET', `/v1/search?${query}`, { token });
  t.equal(res.status, 200, `search ${query}`);
  if (res.status !== 200) t.comment(res.text);
  return res.body;
}

const q = (text: string, extra = '') => `q=${encodeURIComponent(text)}${extra}`;

t.test('search finds flows by name and description, tasks by name, and templates', async (t) => {
  const w = await world(t);
  const flowResult = (flow: Flow) => ({
    id: flow.id,
    type: 'flow',
    title: flow.name,
    flowId: flow.id,
    url: `${w.app}/flows/${flow.id}`,
  });

  t.same(
    await find(t, w, q('pipeline')),
    { total: 1, items: [flowResult(w.hiring)] },
    'a flow by a word of its name',
  );
  t.same(
    await find(t, w, q('payments')),
    { total: 1, items: [flowResult(w.hiring)] },
    'a flow by a word of its description',
  );
  t.same(
    await find(t, w, q('cadence monthly')),
    { total: 1, items: [flowResult(w.train)] },
    'every word must match, in any order',
  );

  const smoke = item(w.train.tasks, 1);
  t.same(
    await find(t, w, q('smoke')),
    {
      total: 1,
      items: [
        {
          id: smoke.id,
          type: 'task',
          title: 'Smoke test',
          flowId: w.train.id,
          url: `${w.app}/flows/${w.train.id}/tasks/${smoke.id}`,
        },
      ],
    },
    'a task by its name, pointing into its flow',
  );

  t.same(
    await find(t, w, q('postmortem')),
    {
      total: 1,
      items: [
        {
          id: 'tpl_incident-postmortem',
          type: 'template',
          title: 'Incident postmortem',
          flowId: null,
          url: `${w.app}/templates/tpl_incident-postmortem`,
        },
      ],
    },
    'a template by its name',
  );
  const byDescription = await find(t, w, q('stakeholders'));
  t.same(
    byDescription.items.map((i) => i.id),
    [],
    "template task descriptions are not indexed, only the template's own text",
  );
  const retire = await find(t, w, q('retire customers'));
  t.same(
    retire.items.map((i) => i.id),
    ['tpl_api-deprecation'],
    'a template by its description',
  );
  const events = await find(t, w, q('events', '&type=template'));
  t.same(
    events.items.map((i) => i.id),
    ['tpl_conference'],
    'a template by its category',
  );
});

t.test('prefixes and typos find the expected items first', async (t) => {
  const w = await world(t);
  // The first result, or undefined when there is none.
  const first = async (query: string) => (await find(t, w, query)).items[0];

  t.equal((await first(q('laun')))?.id, w.launch.id, '"laun" finds "Launch plan" first');
  t.equal((await first(q('Launch plan')))?.id, w.launch.id, 'an exact title comes first');
  t.equal((await first(q('laun pl')))?.id, w.launch.id, 'prefixes of several words');
  t.equal((await first(q('lunch plan')))?.id, w.launch.id, 'a typo: "lunch plan"');
  t.equal(
    (await first(q('relase')))?.title.toLowerCase().includes('release'),
    true,
    'a typo: "relase" finds a Release first',
  );
  t.equal((await first(q('relase', '&type=flow')))?.id, w.train.id);
  t.equal((await first(q('relase', '&type=template')))?.id, 'tpl_software-release');
  t.equal(await first(q('smok tset')), undefined, 'a prefix and a typo in a short word: too far');
  t.equal((await first(q('smoke tset')))?.title, 'Smoke test', 'a word and a typo together');
  t.equal((await first(q('desing')))?.title, 'Design review');

  const launch = await find(t, w, q('launch'));
  const ids = launch.items.map((i) => i.id);
  t.equal(
    ids[0],
    w.launch.id,
    'the title starting with the word comes before titles merely containing it',
  );
  t.ok(
    ids.includes('tpl_product-launch') && ids.includes('tpl_mobile-app-launch'),
    'templates with the word follow',
  );
  t.notOk(ids.includes(w.secret.id), "another workspace's flow never appears");
  t.same(await find(t, w, q('launch')), launch, 'the same query ranks the same way every time');
});

t.test('type and size', async (t) => {
  const w = await world(t);
  const all = await find(t, w, q('launch'));
  t.ok(all.total >= 3);
  t.equal(all.items.length, all.total, 'under the default size everything comes back');
  const types = new Set(all.items.map((i) => i.type));
  t.ok(types.has('flow') && types.has('template'));

  const templates = await find(t, w, q('launch', '&type=template'));
  t.ok(templates.total >= 2);
  t.ok(templates.items.every((i) => i.type === 'template' && i.flowId === null));
  const flows = await find(t, w, q('launch', '&type=flow'));
  t.same(
    flows.items.map((i) => i.id),
    [w.launch.id],
  );
  const tasks = await find(t, w, q('review', '&type=task'));
  t.same(
    tasks.items.map((i) => i.id),
    [w.launch.tasks[2]?.id],
  );
  t.same(
    tasks.items.map((i) => i.type),
    ['task'],
  );
  t.equal(
    templates.total + flows.total + (await find(t, w, q('launch', '&type=task'))).total,
    all.total,
    'types partition the results',
  );

  const one = await find(t, w, q('launch', '&size=1'));
  t.same(
    one,
    { total: all.total, items: [all.items[0]] },
    'size caps items, total counts every match',
  );
  const two = await find(t, w, q('launch', '&size=2'));
  t.same(two.items, all.items.slice(0, 2));
  t.equal((await find(t, w, q('a', '&size=100'))).items.length <= 100, true);
});

t.test('default size is 20', async (t) => {
  const w = await world(t);
  await newFlow(t, w.s, {
    name: 'Many tasks',
    tasks: Array.from({ length: 30 }, (_, i) => ({ name: `Widget ${i}` })),
  });
  const res = await find(t, w, q('widget'));
  t.equal(res.total, 30);
  t.equal(res.items.length, 20);
  t.equal((await find(t, w, q('widget', '&size=100'))).items.length, 30);
});

t.test("only live flows of the caller's workspace", async (t) => {
  const w = await world(t);
  t.same(
    await find(t, w, q('zeppelin')),
    { total: 0, items: [] },
    'an archived flow and its tasks do not appear',
  );
  t.same(
    await find(t, w, q('secret')),
    { total: 0, items: [] },
    "another workspace's flow does not appear",
  );
  t.same(await find(t, w, q('signals')), { total: 0, items: [] }, 'nor its tasks');
  const own = await find(t, w, q('secret'), w.otherKey);
  t.same(
    own.items.map((i) => i.id),
    [w.secret.id],
    'the other workspace finds its own flow',
  );
  const payments = await find(t, w, q('payments', '&type=flow'), w.otherKey);
  t.same(
    payments.items.map((i) => i.id),
    [w.secret.id],
    "and not the Demo workspace's",
  );

  t.equal(
    (await w.s.api('POST', `/v1/flows/${w.archived.id}/restore`, { token: w.s.adminKey })).status,
    200,
  );
  const restored = await find(t, w, q('zeppelin'));
  t.same(
    restored.items.map((i) => i.type).sort(),
    ['flow', 'task'],
    'a restored flow is found again, with its tasks',
  );
  t.equal(
    (
      await w.s.api('PATCH', `/v1/flows/${w.archived.id}`, {
        token: w.s.adminKey,
        body: { name: 'Airship ride' },
      })
    ).status,
    200,
  );
  t.same(
    (await find(t, w, q('airship'))).items.map((i) => i.id),
    [w.archived.id],
    'a renamed flow is found by its new name',
  );
  t.same((await find(t, w, q('zeppelin', '&type=flow'))).items, [], 'and no longer by its old one');
});

t.test('templates in results need templates:read', async (t) => {
  const w = await world(t);
  const { key } = await createKey(w.s.sql, {
    workspaceId: w.s.workspaceId,
    role: 'viewer',
    scopes: ['flows:read'],
  });
  const res = await find(t, w, q('launch'), key);
  t.ok(res.items.length > 0);
  t.ok(
    res.items.every((i) => i.type !== 'template'),
    'no templates without templates:read',
  );
  const refused = await w.s.api<Refusal>('GET', `/v1/search?${q('launch', '&type=template')}`, {
    token: key,
  });
  assertError(t, refused, 403, 'INSUFFICIENT_SCOPE');
  t.same(refused.body.error.details.missing, ['templates:read']);
  const { key: noFlows } = await createKey(w.s.sql, {
    workspaceId: w.s.workspaceId,
    role: 'admin',
    scopes: ['templates:read'],
  });
  assertError(
    t,
    await w.s.api('GET', `/v1/search?${q('launch')}`, { token: noFlows }),
    403,
    'INSUFFICIENT_SCOPE',
  );
  assertError(t, await w.s.api('GET', `/v1/search?${q('launch')}`), 401, 'UNAUTHORIZED');
});

t.test('bad queries are 400 VALIDATION_FAILED', async (t) => {
  const w = await world(t);
  const cases: [string, string][] = [
    ['', '/q'],
    ['type=flow', '/q'],
    ['q=', '/q'],
    ['q=%20%20%20', '/q'],
    ['q=%09%0A', '/q'],
    [q('x'.repeat(201)), '/q'],
    [`${q('launch')}&q=plan`, '/q'],
    [q('launch', '&type=flows'), '/type'],
    [q('launch', '&size=0'), '/size'],
    [q('launch', '&size=101'), '/size'],
    [q('launch', '&size=ten'), '/size'],
    [q('launch', '&size=1.5'), '/size'],
  ];
  for (const [query, pointer] of cases) {
    const res = await w.s.api<Refusal>('GET', `/v1/search?${query}`, { token: w.s.adminKey });
    assertError(t, res, 400, 'VALIDATION_FAILED', `?${query}`);
    t.ok(
      res.body?.error?.details?.errors?.some(
        (e: { in: string; pointer: string }) => e.in === 'query' && e.pointer === pointer,
      ),
      `points at ${pointer}`,
    );
  }
  t.equal((await find(t, w, q('x'.repeat(200)))).total, 0, '200 characters is allowed');
  t.equal(
    (await find(t, w, q('  launch  '))).items[0]?.id,
    w.launch.id,
    'surrounding spaces are ignored',
  );
});

t.test('special characters never cause a 500', async (t) => {
  const w = await world(t);
  const nasty = [
    '&',
    '|',
    '!',
    '(',
    ')',
    ':',
    '*',
    "'",
    '"',
    '\\',
    '&|!():*\'"\\',
    "launch'",
    "'launch",
    'launch:*',
    'launch:',
    ':*',
    '!launch',
    '(launch',
    'launch)',
    'launch & plan',
    'launch | release',
    'launch <-> plan',
    '<->',
    '<2>',
    "O'Brien",
    '"launch plan"',
    'launch\\',
    '%',
    '_',
    '%_%',
    'launch%',
    '-launch',
    'launch -plan',
    'a:b:c',
    '***',
    '::*',
    '\u0000',
    '😀',
    'ä',
    'Ärger über Öl',
    'データ',
    '\u200b',
    'launch\u0000plan',
    '$1',
    'null',
    "'; drop table flows; --",
    '\\x00',
    '1e309',
    '--',
  ];
  for (const text of nasty) {
    // A 200 list or a 400 refusal: the test reads each as what it got.
    const res = await w.s.api<SearchResults & Refusal>('GET', `/v1/search?${q(text)}`, {
      token: w.s.adminKey,
    });
    t.ok(
      res.status === 200 || (res.status === 400 && res.body?.error?.code === 'VALIDATION_FAILED'),
      `${JSON.stringify(text)} → ${res.status}`,
    );
    if (res.status === 200)
      t.ok(
        Number.isInteger(res.body.total) && Array.isArray(res.body.items),
        `${JSON.stringify(text)} answers a list`,
      );
  }
  t.equal(
    (await find(t, w, q('launch & plan'))).items[0]?.id,
    w.launch.id,
    'operators are separators, the words still match',
  );
  t.equal((await find(t, w, q("launch'plan"))).items[0]?.id, w.launch.id);
  t.same(
    await find(t, w, q('&|!():*')),
    { total: 0, items: [] },
    'nothing searchable: nothing found',
  );
  t.equal(
    (await w.s.api<FlowList>('GET', '/v1/flows', { token: w.s.adminKey })).body.total,
    3,
    'the flows are all still there',
  );
});

t.test('GET /v1/search: ETag, 304 and the OpenAPI document', async (t) => {
  const w = await world(t);
  const res = await w.s.api('GET', `/v1/search?${q('launch')}`, { token: w.s.adminKey });
  const etag = res.headers.get('etag')!;
  t.ok(etag);
  const again = await w.s.api('GET', `/v1/search?${q('launch')}`, {
    token: w.s.adminKey,
    headers: { 'if-none-match': etag },
  });
  t.equal(again.status, 304);
  const doc = (await w.s.api<JsonDocument>('GET', '/v1/openapi.json')).body;
  const op = doc.paths['/v1/search'].get;
  t.same(
    op.parameters.map((p: { name: string; required: boolean }) => [p.name, p.required]),
    [
      ['q', true],
      ['type', false],
      ['size', false],
    ],
  );
  t.ok(op.responses['400'] && op.responses['403'] && op.responses['200']);
  t.same(op.security[0], { bearer: ['flows:read'] });
});

/**
 * The public views through HTTP (CONTRACT §3, issue 7): publish gives eight working
 * addresses that carry no assignee, comment, file, note or description in any byte;
 * unpublish makes every one a 404 at the very next request, in this process and in a
 * second one on the same database; a republish never revives an old link.
 */
import { get, type IncomingHttpHeaders } from 'node:http';
import { gunzipSync } from 'node:zlib';
import t from 'tap';
import { startApp } from '../../../src/compose.ts';
import { loadConfig } from '../../../src/platform/config.ts';
import { startFlowServer, ok } from '../../helpers/flows.ts';
import { request, type ApiResponse, item } from '../../helpers/server.ts';
import { compile } from '../../../src/web/http/validator.ts';
import { PublicBrainstormSchema, PublicFlowSchema } from '../../../src/contract/public.schema.ts';
import { pathOf, publicPaths, seedPublished } from './helpers.ts';
import type {
  Flow,
  FlowSummary,
  JsonDocument,
  PublicBrainstorm,
  PublicFlow,
  Refusal,
} from '../../helpers/wire.ts';

const TYPES = [/^text\/html/, /^application\/json/, /^image\/svg\+xml/, /^text\/html/];

/** A GET whose body is not decoded (fetch would undo the gzip). */
function rawGet(
  url: string,
  acceptEncoding: string,
): Promise<{ headers: IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    get(url, { headers: { 'accept-encoding': acceptEncoding } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
    }).on('error', reject);
  });
}

/** Every byte a client receives: status line facts, headers and body. */
const everyByte = (res: ApiResponse) =>
  `${[...res.headers].map(([k, v]) => `${k}: ${v}`).join('\n')}\n${res.text}`;

t.test(
  'publish, eight public addresses, nothing private in any byte, unpublish seen by every process at once',
  async (t) => {
    const s = await startFlowServer(t);
    const seeded = await seedPublished(t, s);
    const paths = publicPaths(seeded.flowPath, seeded.boardPath);
    t.match(
      seeded.flowPath,
      /^\/p\/flows\/[A-Za-z0-9_-]{32}$/,
      'publicUrl under {public_url}/flows/ with a 32-character token (192 random bits)',
    );
    t.match(seeded.boardPath, /^\/p\/brainstorms\/[A-Za-z0-9_-]{32}$/);

    const second = await startApp(
      loadConfig({ LOG_LEVEL: 'silent' }, { port: 0, databaseUrl: s.databaseUrl }),
    );
    try {
      for (const base of [s.url, second.url]) {
        for (const [i, path] of paths.entries())
          for (const encoding of ['gzip', 'identity']) {
            const res = await request(base, 'GET', path, {
              headers: { 'accept-encoding': encoding },
            });
            t.equal(
              res.status,
              200,
              `${path} answers 200 (${base === s.url ? 'first' : 'second'} process, ${encoding})`,
            );
            t.match(res.headers.get('content-type'), TYPES[i % 4]!, `${path}: its content type`);
            t.equal(res.headers.get('referrer-policy'), 'no-referrer');
            t.equal(res.headers.get('cache-control'), 'no-cache', 'revalidates every time');
            t.ok(res.headers.get('etag'), 'with an ETag');
            for (const secret of seeded.secrets)
              t.notOk(everyByte(res).includes(secret), `${path}: no ${secret}`);
          }
      }
      const page = await s.api('GET', seeded.flowPath);
      for (const name of [
        'Launch plan',
        'Design the box',
        'Build the box',
        'Ship the box',
        'Due date',
        '2031-03-03',
        'Projected finish',
        'On track',
        '<svg',
        '8 h',
        '16 h',
        'no estimate',
        'critical path',
      ]) {
        t.ok(page.text.includes(name), `the page shows ${name}`);
      }
      const doc = (await s.api<PublicFlow>('GET', `${seeded.flowPath}.json`)).body;
      t.same(
        Object.keys(doc).sort(),
        ['dueDate', 'finishP80', 'name', 'onTrack', 'projectedFinish', 'tasks'],
        'the public JSON holds exactly its documented fields',
      );
      t.same(
        doc.tasks.map((task) => [
          task.name,
          task.status,
          task.estimateHours,
          task.critical,
          task.dependsOn.length,
        ]),
        [
          ['Design the box', 'ready', 8, true, 0],
          ['Build the box', 'blocked', 16, true, 1],
          ['Ship the box', 'blocked', null, true, 1],
        ],
      );
      t.same(Object.keys(item(doc.tasks)).sort(), [
        'critical',
        'dependsOn',
        'estimateHours',
        'estimateRange',
        'id',
        'name',
        'status',
      ]);
      const svg = await s.api('GET', `${seeded.flowPath}/diagram.svg`);
      for (const name of ['Design the box', 'Build the box', 'Ship the box'])
        t.ok(svg.text.includes(name), `the SVG names ${name}`);
      const board = await s.api('GET', seeded.boardPath);
      for (const text of ['Ideas board', 'Root idea', 'Child idea', '#growth'])
        t.ok(board.text.includes(text), `the brainstorm page shows ${text}`);
      t.same(
        (await s.api<PublicBrainstorm>('GET', `${seeded.boardPath}.json`)).body.ideas.map((i) => [
          i.title,
          i.tags,
        ]),
        [
          ['Root idea', ['growth']],
          ['Child idea', []],
        ],
      );

      const flowOff = await ok<FlowSummary>(t, s, 'POST', `/v1/flows/${seeded.flowId}/unpublish`);
      t.equal(flowOff.public, false);
      t.equal(flowOff.publicUrl, null);
      await ok(t, s, 'POST', `/v1/brainstorms/${seeded.boardId}/unpublish`);
      // The very next request, from either process: no waiting for a notification.
      for (const base of [second.url, s.url]) {
        for (const path of paths) {
          const res = await request<Refusal>(base, 'GET', path);
          t.equal(
            res.status,
            404,
            `${path} is 404 at once (${base === s.url ? 'first' : 'second'} process)`,
          );
          t.equal(res.headers.get('cache-control'), 'no-store', 'a 404 is never cached');
          if (path.endsWith('.json') || path.endsWith('.svg'))
            t.equal(res.body?.error?.code, 'NOT_FOUND', 'the JSON envelope');
          else t.match(res.headers.get('content-type'), /^text\/html/, 'an HTML page for browsers');
        }
      }

      // A republish mints a new token; the old link stays dead everywhere.
      const again = await ok<FlowSummary>(t, s, 'POST', `/v1/flows/${seeded.flowId}/publish`);
      t.equal(again.public, true);
      for (const field of [
        'id',
        'name',
        'archived',
        'public',
        'publicUrl',
        'taskCount',
        'doneCount',
        'readyCount',
        'createdAt',
        'updatedAt',
      ])
        t.ok(field in again, `FlowSummary has ${field}`);
      const fresh = pathOf(again.publicUrl);
      t.not(fresh, seeded.flowPath, 'a fresh token');
      const third = pathOf(
        (await ok<FlowSummary>(t, s, 'POST', `/v1/flows/${seeded.flowId}/publish`)).publicUrl,
      );
      t.not(third, fresh, 'publishing a published flow also mints a fresh token');
      for (const base of [s.url, second.url]) {
        for (const path of publicPaths(seeded.flowPath, null))
          t.equal((await request(base, 'GET', path)).status, 404, `old ${path} stays 404`);
        for (const path of publicPaths(fresh, null))
          t.equal((await request(base, 'GET', path)).status, 404, `replaced ${path} is 404`);
        for (const path of publicPaths(third, null))
          t.equal((await request(base, 'GET', path)).status, 200, `new ${path} answers`);
      }
    } finally {
      await second.close();
    }
  },
);

t.test('unknown, malformed and foreign tokens are 404, never 401 or 403', async (t) => {
  const s = await startFlowServer(t);
  const tokens = [
    'A'.repeat(32),
    'short',
    'B'.repeat(33),
    `${'C'.repeat(31)}!`,
    '%2e%2e',
    'x'.repeat(2000),
  ];
  for (const token of tokens) {
    for (const path of publicPaths(`/p/flows/${token}`, `/p/brainstorms/${token}`)) {
      const res = await s.api('GET', path, { headers: { authorization: 'Bearer nonsense' } });
      t.equal(res.status, 404, `${path.slice(0, 60)} → 404 even with a bad credential`);
    }
  }
  // A brainstorm's token never opens a flow, and the other way round.
  const seeded = await seedPublished(t, s);
  const boardToken = seeded.boardPath.split('/').pop()!;
  const flowToken = seeded.flowPath.split('/').pop()!;
  t.equal((await s.api('GET', `/p/flows/${boardToken}`)).status, 404);
  t.equal((await s.api('GET', `/p/brainstorms/${flowToken}`)).status, 404);
});

t.test('ETags revalidate, headers lock pages down, the embed alone may be framed', async (t) => {
  const s = await startFlowServer(t);
  const seeded = await seedPublished(t, s);
  for (const path of publicPaths(seeded.flowPath, seeded.boardPath)) {
    const first = await s.api('GET', path);
    const etag = first.headers.get('etag')!;
    const again = await s.api('GET', path, { headers: { 'if-none-match': etag } });
    t.equal(again.status, 304, `${path}: 304 for its own ETag`);
    t.equal(again.text, '', 'with no body');
    t.equal(again.headers.get('cache-control'), 'no-cache');
  }
  // Each encoding is its own representation: gzip (decoded here by hand) holds the same bytes.
  for (const path of publicPaths(seeded.flowPath, null)) {
    const plain = await rawGet(s.url + path, 'identity');
    const zipped = await rawGet(s.url + path, 'br;q=1, gzip;q=0.5');
    t.equal(
      plain.headers['content-encoding'],
      undefined,
      `${path}: identity when gzip is not offered`,
    );
    t.equal(zipped.headers['content-encoding'], 'gzip', `${path}: gzip when offered`);
    t.equal(
      zipped.headers.vary,
      path.endsWith('.json') ? 'Accept-Encoding, Accept' : 'Accept-Encoding',
      'JSON also varies by Accept (MessagePack)',
    );
    t.ok(
      zipped.body.length < plain.body.length,
      `smaller (${zipped.body.length} < ${plain.body.length})`,
    );
    t.same(gunzipSync(zipped.body), plain.body, 'the same bytes');
    t.not(zipped.headers.etag, plain.headers.etag, 'each encoding has its own ETag');
    t.equal(
      (await rawGet(s.url + path, 'gzip;q=0')).headers['content-encoding'],
      undefined,
      'q=0 refuses gzip',
    );
  }

  const before = (await s.api('GET', seeded.flowPath)).headers.get('etag')!;
  await ok(t, s, 'PATCH', `/v1/flows/${seeded.flowId}`, { name: 'Launch plan, renamed' });
  const after = await s.api('GET', seeded.flowPath, { headers: { 'if-none-match': before } });
  t.equal(after.status, 200, 'a change makes the old ETag stale');
  t.ok(after.text.includes('Launch plan, renamed'), 'and the page shows it at once');

  const page = await s.api('GET', seeded.flowPath);
  const csp = page.headers.get('content-security-policy')!;
  t.notMatch(csp, /unsafe-inline|unsafe-eval/, 'no inline script or style');
  t.match(csp, /default-src 'none'/);
  t.match(csp, /frame-ancestors 'none'/, 'the page cannot be framed');
  t.equal(page.headers.get('x-frame-options'), 'DENY');
  t.equal(page.headers.get('x-content-type-options'), 'nosniff');
  t.notMatch(page.text, /<script|<style|style="/, 'no inline script or style in the markup');
  t.match(page.text, /<main id="main"/, 'a main landmark');
  t.match(page.text, /href="#main"/, 'a skip link');
  t.match(
    page.text,
    /role="img" aria-label="[^"]*Design the box/,
    'the diagram has a text alternative',
  );

  for (const embedPath of publicPaths(seeded.flowPath, seeded.boardPath).filter((p) =>
    p.includes('/embed/'),
  )) {
    const embed = await s.api('GET', embedPath);
    const embedCsp = embed.headers.get('content-security-policy')!;
    t.match(embedCsp, /frame-ancestors \*/, 'the embed may be framed anywhere');
    t.equal(
      embedCsp.replace('frame-ancestors *', ''),
      csp.replace("frame-ancestors 'none'", ''),
      'and nothing else is loosened',
    );
    t.equal(embed.headers.get('x-frame-options'), null, 'no X-Frame-Options on the embed');
    t.notMatch(embed.text, /site-header|site-footer/, 'minimal chrome');
  }

  // The documents match the schemas the OpenAPI document publishes under the "Public" tag.
  const openapi = (await s.api<JsonDocument>('GET', '/v1/openapi.json')).body;
  for (const [path, schema] of [
    [seeded.flowPath, PublicFlowSchema],
    [seeded.boardPath, PublicBrainstormSchema],
  ] as const) {
    const documented = openapi.paths[`${path.replace(/[^/]+$/, '{token}')}.json`]?.get;
    t.same(documented?.tags, ['Public'], `${path}.json is documented under Public`);
    t.same(
      documented?.responses['200'].content['application/json'].schema,
      JSON.parse(JSON.stringify(schema)),
      'with its schema (as JSON: TypeBox marks are symbols)',
    );
    const served = (await s.api('GET', `${path}.json`)).body;
    t.doesNotThrow(() => compile(schema, 'body')(served), `${path}.json validates against it`);
  }
  t.notOk(openapi.paths['/assets/flowplan.css'], 'the stylesheet is not part of the API document');

  const css = await s.api('GET', '/assets/flowplan.css');
  t.equal(css.status, 200);
  t.match(css.headers.get('content-type'), /^text\/css/);
  t.match(css.text, /prefers-color-scheme: dark/, 'a dark scheme');
  t.match(css.text, /:focus-visible/, 'focus styles');
  t.equal(
    (
      await s.api('GET', '/assets/flowplan.css', {
        headers: { 'if-none-match': css.headers.get('etag')! },
      })
    ).status,
    304,
    'the stylesheet revalidates',
  );
  t.match(
    page.text,
    /<link rel="stylesheet" href="\/assets\/flowplan\.css\?v=[\w-]+">/,
    'linked with its version',
  );
});

t.test('user text is text in the page, the embed, the SVG and the JSON', async (t) => {
  const s = await startFlowServer(t);
  const evil = [
    '<script>alert(1)</script>',
    '</svg><img src=x onerror=alert(2)>',
    '"><img onerror=alert(3)>',
  ];
  const flow = (
    await s.api<Flow>('POST', '/v1/flows', {
      token: s.adminKey,
      body: {
        name: evil[0],
        tasks: evil.map((name, i) => ({ name, ...(i > 0 ? { after: [i - 1] } : {}) })),
      },
    })
  ).body;
  const path = pathOf(
    (await ok<FlowSummary>(t, s, 'POST', `/v1/flows/${flow.id}/publish`)).publicUrl,
  );
  for (const url of publicPaths(path, null)) {
    const res = await s.api<PublicFlow>('GET', url);
    t.equal(res.status, 200);
    if (url.endsWith('.json')) {
      t.same(
        res.body.tasks.map((task) => task.name),
        evil,
        'JSON keeps the names exactly',
      );
      continue;
    }
    t.notMatch(res.text, /<script>alert|<img/, `${url}: no markup from a name`);
    t.ok(
      res.text.includes('&lt;script&gt;alert(1)&lt;/script&gt;'),
      `${url}: the name shows as text`,
    );
  }
});

t.test('public views have a per-address budget of their own: 429 with Retry-After', async (t) => {
  const s = await startFlowServer(t, { addressRateLimitPerMinute: 1, addressRateLimitBurst: 3 });
  const seeded = await seedPublished(t, s);
  for (let i = 0; i < 3; i++)
    t.equal((await s.api('GET', seeded.flowPath)).status, 200, `request ${i + 1} of the burst`);
  const limited = await s.api('GET', seeded.flowPath);
  t.equal(limited.status, 429, 'past the burst: 429');
  t.ok(Number(limited.headers.get('retry-after')) >= 1, 'Retry-After says when to come back');
  t.match(limited.headers.get('content-type'), /^text\/html/, 'a page for the browser');
  t.match(limited.text, /Too many requests/);
  const unknown = await s.api('GET', '/p/flows/' + 'Z'.repeat(32));
  t.equal(unknown.status, 429, 'unknown tokens spend the same budget (no free guessing)');
  const json = await s.api<Refusal>('GET', `${seeded.flowPath}.json`);
  t.equal(json.body.error.code, 'RATE_LIMITED', 'the JSON address answers the envelope');
  t.equal(
    (await s.api('GET', `/v1/flows/${seeded.flowId}`, { token: s.adminKey })).status,
    200,
    'the API credential keeps its own budget',
  );
});

/**
 * A few hundred generated malformed requests (fast-check, fixed seed) over raw sockets and
 * fetch, against the echo route and every real route: odd methods and encodings, malformed
 * and oversize bodies, wrong content types, garbage credentials, unknown fields, wrong types,
 * random Idempotency-Keys; then the values an answer's headers are built from (the app's
 * `next` and `request`, signed in and with a correct password; OAuth's `state`; X-Request-Id,
 * cookies, an upload's Content-Type) beyond ASCII, with control characters and CR/LF, encoded
 * and raw, none of which may come back as a header of the client's making. Every answer is a
 * 2xx/3xx or a 4xx in the error envelope whose status matches its code (web pages: an HTML
 * error page); never a 5xx; the process keeps serving; refusals write nothing.
 */
import t from 'tap';
import fc from 'fast-check';
import { SCOPES } from '../../../src/services/auth/principal.ts';
import { createKey, createWorkspace } from '../../../src/services/auth/provision.ts';
import { revokeCredential } from '../../../src/storage/credentials.store.ts';
import { HTTP_STATUS } from '../../../src/web/http/error-status.ts';
import { appPrefix } from '../../../src/web/app-url.ts';
import { addTestRoutes } from '../../helpers/routes.ts';
import { rawRequest, type RawResponse } from '../../helpers/raw.ts';
import { item, startTestServer } from '../../helpers/server.ts';
import { Agent, csrfOf, pkce, REDIRECT, setUpPerson } from '../../services/auth/agent.ts';

const SEED = 20_260_521;
const RUNS = 400;
const MAX_BODY = 4 * 1024 * 1024;
/** Requests generated from values an answer's headers are built from. */
const BOUND_RUNS = 150;

interface Generated {
  method: string;
  /** uWS itself drops requests with methods it does not know (no answer, connection closed). */
  uwsMayDrop: boolean;
  /**
   * Holds raw bytes HTTP allows in no header or request line (a control character): uWS answers
   * with its own 400 page before any handler runs (node:http's parser refuses them too, and the
   * server answers that in the envelope).
   */
  uwsRefuses?: boolean;
  target: string;
  headers: [string, string | Buffer][];
  body: Buffer | null;
  chunked: boolean;
}

t.test('fuzz', async (t) => {
  const s = await startTestServer(t, { rateLimitPerMinute: 1_000_000, rateLimitBurst: 1_000_000 });
  const echo = await addTestRoutes(s);
  const viewer = (
    await createKey(s.sql, { workspaceId: s.workspaceId, role: 'viewer', scopes: [...SCOPES] })
  ).key;
  const { id: freeId } = await createWorkspace(s.sql, { name: 'Free', plan: 'free' });
  const free = (await createKey(s.sql, { workspaceId: freeId, role: 'admin', scopes: [...SCOPES] }))
    .key;
  const revoked = await createKey(s.sql, {
    workspaceId: s.workspaceId,
    role: 'admin',
    scopes: [...SCOPES],
  });
  await revokeCredential(s.sql, revoked.id);

  const templates = [...new Set(s.app.edge.router.routes.map((r) => r.path))];
  const writePaths = new Set(['/v1/test/echo', '/v1/test/echo-any', '/v1/test/admin']);

  // ---- generators -------------------------------------------------------------------
  const segment = fc.oneof(
    fc.constantFrom(
      'flw_x1',
      'tsk_x1',
      'itm_1',
      'usr_x',
      'x',
      '',
      '..',
      '.',
      '%2e%2e',
      '%00',
      '%zz',
      '%',
      '%2F',
      '%E0%A4%A',
      '%C0%AF',
      '%F0%9F%92%A9',
      'a%20b',
      ';x',
      '~',
      '*',
      "'",
      '"',
      '<x>',
      'x'.repeat(3000),
      '%25',
      'null',
      'undefined',
      '__proto__',
      'constructor',
    ),
    fc.stringMatching(/^[A-Za-z0-9._~!$&'()*+,;=:@%-]{0,40}$/),
  );
  const routes = s.app.edge.router.routes.map((r) => ({
    method: r.method as string,
    path: r.path,
  }));
  const echoRoutes = routes.filter((r) => r.path.startsWith('/v1/test/'));
  const fill = (template: string, value: string) => template.replace(/\{\w+\}/g, value);
  // Mostly a real route with its own method, so requests get past routing to the checks behind it.
  const endpoint = fc.oneof(
    {
      weight: 6,
      arbitrary: fc
        .tuple(fc.constantFrom(...routes), segment)
        .map(([r, value]) => ({ method: r.method, path: fill(r.path, value) })),
    },
    {
      weight: 6,
      arbitrary: fc
        .constantFrom(...echoRoutes)
        .map((r) => ({ method: r.method, path: fill(r.path, 'itm_1') })),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(
          fc.constantFrom(...templates),
          segment,
          fc.constantFrom('GET', 'POST', 'PATCH', 'DELETE', 'PUT', 'OPTIONS', 'HEAD'),
        )
        .map(([template, value, m]) => ({ method: m, path: fill(template, value) })),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.array(segment, { minLength: 0, maxLength: 5 }), fc.constantFrom('GET', 'POST'))
        .map(([parts, m]) => ({ method: m, path: `/${parts.join('/')}` })),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(
          '/v1/me/',
          '//v1/me',
          '/v1//me',
          '/v1/me/.',
          '/V1/ME',
          '/v1/me%2F',
          '/v1/oauth/token/',
        )
        .map((p) => ({ method: 'GET', path: p })),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(
          fc.constantFrom('PROPFIND', 'FOO', 'get', 'CONNECT', 'TRACE'),
          fc.constantFrom(...templates),
        )
        .map(([m, p]) => ({ method: m, path: fill(p, 'x') })),
    },
  );
  const query = fc.oneof(
    { weight: 5, arbitrary: fc.constant('') },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        '?size=abc',
        '?size=0',
        '?size=101',
        '?size=1&size=2',
        '?__proto__=1',
        '?constructor=x',
        '?%zz=1',
        '?a[b]=1',
        '?size=1e3',
        '?from=-1',
        '?archived=maybe',
        '?q=' + 'q'.repeat(5000),
        '?&&&',
        '?=',
        '?size',
        '?toString=1&hasOwnProperty=2',
      ),
    },
    { weight: 2, arbitrary: fc.stringMatching(/^[A-Za-z0-9=&%._~+-]{0,60}$/).map((q) => `?${q}`) },
  );
  const authorization = fc.oneof(
    { weight: 6, arbitrary: fc.constant(`Bearer ${s.adminKey}`) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(`Bearer ${viewer}`, `Bearer ${free}`, `Bearer ${revoked.key}`),
    },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        'Bearer',
        'Bearer ',
        'bearer fpk_nope',
        'Bearer fpa_nope',
        `Bearer ${s.adminKey} extra`,
        `Bearer ${s.adminKey}x`,
        'Basic Zm9vOmJhcg==',
        'Token x',
        'Bearer ' + 'A'.repeat(10_000),
        `Bearer ${s.adminKey.toUpperCase()}`,
        'Bearer fpk_\u00e9',
        'Bearer ===',
      ),
    },
    {
      weight: 1,
      arbitrary: fc
        .uint8Array({ minLength: 1, maxLength: 40 })
        .map((bytes) => Buffer.from(bytes.map((b) => (b < 0x20 || b === 0x7f ? 0x41 : b)))),
    },
  );
  const contentType = fc.constantFrom(
    'application/json',
    'application/json',
    'application/json',
    'application/json',
    'application/json; charset=utf-8',
    'text/plain',
    'application/x-www-form-urlencoded',
    'multipart/form-data; boundary=x',
    '',
    'application/json; charset=latin1',
    'application/problem+json',
    'json',
    '*/*',
    'APPLICATION/JSON;;;',
  );
  const jsonBody = fc
    .oneof(
      fc.record(
        {
          name: fc.string({ maxLength: 60 }),
          count: fc.oneof(fc.integer(), fc.double(), fc.constant(2 ** 40)),
        },
        { requiredKeys: [] },
      ),
      fc.record(
        {
          name: fc.oneof(fc.integer(), fc.boolean(), fc.constant(null), fc.array(fc.string())),
          extra: fc.jsonValue(),
        },
        { requiredKeys: [] },
      ),
      fc.dictionary(fc.string({ maxLength: 10 }), fc.jsonValue({ maxDepth: 3 }), { maxKeys: 5 }),
      fc.jsonValue({ maxDepth: 4 }),
      fc.constantFrom(
        { name: 'nul\u0000' },
        { name: '\ud800' },
        { name: 'ok', constructor: { prototype: 1 } },
        { name: 'x'.repeat(51) },
        { name: 'ok', count: 1e308 },
        { name: 'ok', count: -(2 ** 31) - 1 },
        { tasks: [{ name: 't', after: [0] }] },
      ),
    )
    .map((value) => Buffer.from(JSON.stringify(value) ?? 'null'));
  const badBody = fc.oneof(
    fc
      .constantFrom(
        '{',
        '{"name":',
        '{"name":"a",}',
        "{'name':'a'}",
        'nul',
        '[1,2',
        '{"a":1}{"b":2}',
        '\u00ef\u00bb\u00bf{"name":"bom"}',
        '"unterminated',
        '{"name":"a"' + ' '.repeat(1000),
        '['.repeat(5000),
        '{"name":"x","count":' + '['.repeat(3000) + ']'.repeat(3000) + '}',
        'grant_type=client_credentials&grant_type=x',
        '{"name":"ok","__proto__":{"admin":true}}',
        '{"name":"ok","name":5}',
      )
      .map((text) => Buffer.from(text, 'utf8')),
    fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes)),
    fc.string({ maxLength: 200 }).map((text) => Buffer.from(text, 'utf8')),
  );
  const body = fc.oneof(
    { weight: 3, arbitrary: fc.constant(null) },
    { weight: 5, arbitrary: jsonBody },
    {
      weight: 3,
      arbitrary: fc
        .record(
          {
            name: fc.string({ maxLength: 50 }),
            count: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
          },
          { requiredKeys: ['name'] },
        )
        .map((value) => Buffer.from(JSON.stringify(value))),
    },
    { weight: 4, arbitrary: badBody },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(MAX_BODY + 1, MAX_BODY + 100)
        .map((size) => Buffer.alloc(size, 0x7b)),
    },
  );
  const extraHeader = fc.tuple(
    fc.oneof(
      fc.constantFrom(
        'If-None-Match',
        'X-Request-Id',
        'Accept',
        'Content-Encoding',
        'Expect',
        'Constructor',
        'toString',
        'Vary',
        'Cookie',
        'Range',
      ),
      fc.stringMatching(/^X-[A-Za-z0-9-]{1,20}$/),
    ),
    fc.oneof(
      fc.stringMatching(/^[\x20-\x7e]{0,80}$/),
      fc.constantFrom('*', '"x", W/"y"', 'gzip', '100-continue', 'bytes=0-1', 'a'.repeat(2000)),
    ),
  );
  const idempotencyKey = fc.oneof(
    fc.stringMatching(/^[\x21-\x7e]{0,300}$/),
    fc.constantFrom('same-key', 'k'.repeat(255), 'k'.repeat(256)),
  );

  const generated: fc.Arbitrary<Generated> = fc
    .record({
      endpoint,
      query,
      authorization: fc.option(authorization, { freq: 5 }),
      contentType: fc.option(contentType, { freq: 5 }),
      idempotencyKey: fc.option(idempotencyKey, { freq: 2 }),
      extra: fc.array(extraHeader, { maxLength: 6 }),
      body,
      chunked: fc.boolean(),
    })
    .map((r) => {
      const headers: [string, string | Buffer][] = [];
      if (r.authorization !== null) headers.push(['Authorization', r.authorization]);
      if (r.contentType !== null && r.contentType !== '')
        headers.push(['Content-Type', r.contentType]);
      if (r.idempotencyKey !== null) headers.push(['Idempotency-Key', r.idempotencyKey]);
      headers.push(...r.extra);
      const methodOk = ['GET', 'POST', 'PATCH', 'DELETE', 'PUT', 'OPTIONS', 'HEAD'].includes(
        r.endpoint.method,
      );
      return {
        method: r.endpoint.method,
        uwsMayDrop: !methodOk,
        target: r.endpoint.path + r.query,
        headers,
        body: r.body,
        chunked: r.chunked && r.body !== null,
      };
    });

  const samples = fc.sample(generated, { seed: SEED, numRuns: RUNS });

  // ---- sending ----------------------------------------------------------------------
  const frame = (g: Generated): Buffer => {
    const head: Buffer[] = [
      Buffer.from(
        `${g.method} ${g.target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n`,
        'latin1',
      ),
    ];
    for (const [name, value] of g.headers)
      head.push(
        Buffer.from(`${name}: `, 'latin1'),
        Buffer.isBuffer(value) ? value : Buffer.from(value, 'latin1'),
        Buffer.from('\r\n'),
      );
    if (g.body === null) return Buffer.concat([...head, Buffer.from('\r\n')]);
    if (!g.chunked)
      return Buffer.concat([
        ...head,
        Buffer.from(`Content-Length: ${g.body.length}\r\n\r\n`),
        g.body,
      ]);
    const chunks: Buffer[] = [];
    for (let offset = 0; offset < g.body.length; offset += 64 * 1024) {
      const piece = g.body.subarray(offset, offset + 64 * 1024);
      chunks.push(Buffer.from(`${piece.length.toString(16)}\r\n`), piece, Buffer.from('\r\n'));
    }
    return Buffer.concat([
      ...head,
      Buffer.from('Transfer-Encoding: chunked\r\n\r\n'),
      ...chunks,
      Buffer.from('0\r\n\r\n'),
    ]);
  };

  const rowsBefore = await echo.rows();
  let echoWrites = 0;
  let answered = 0;
  let dropped = 0;
  let refusedByUws = 0;
  const statuses = new Map<number, number>();

  const appPath = appPrefix(s.app.services.config);
  /** Web pages (app, public views, unsubscribe) answer refusals as HTML pages (route.renderError). */
  const rendersPages = (g: Generated): boolean => {
    const [pathOnly] = g.target.split('?');
    let decoded = pathOnly!;
    try {
      decoded = decodeURIComponent(pathOnly!);
    } catch {
      // keep the raw path
    }
    return [pathOnly!, decoded].some((path) => {
      const match = s.app.edge.match(g.method, path);
      if (match.kind === 'found') return match.route.renderError !== undefined;
      // An address under the app that names nothing is refused as the app's pages are.
      return appPath !== '' && (path === appPath || path.startsWith(`${appPath}/`));
    });
  };

  const judge = (g: Generated, res: RawResponse, label: string): boolean => {
    if (res.status === null) {
      dropped += 1;
      return t.ok(g.uwsMayDrop, `${label}: ${res.ended} without an answer`);
    }
    if (g.uwsRefuses && s.app.transport === 'uws' && res.body.includes('uWebSockets')) {
      refusedByUws += 1;
      return t.equal(res.status, 400, `${label}: refused by uWS itself`);
    }
    answered += 1;
    statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
    let ok = t.ok(
      res.status < 500,
      `${label}: ${res.status} is not a server error`,
      // A 500's cause is in the server's log, never in the answer.
      res.status >= 500 ? { logged: s.logged.slice(-2) } : {},
    ) as boolean;
    if (
      res.status >= 400 &&
      g.method !== 'HEAD' &&
      rendersPages(g) &&
      /^text\/html/.test(res.headers['content-type'] ?? '')
    ) {
      ok = t.ok(res.body.length > 0, `${label}: an HTML error page`) && ok;
    } else if (res.status >= 400 && g.method !== 'HEAD') {
      let envelope: { error?: { code?: unknown; message?: unknown } } | undefined;
      try {
        envelope = JSON.parse(res.body);
      } catch {
        envelope = undefined;
      }
      const code = envelope?.error?.code;
      ok =
        t.ok(
          typeof code === 'string' && typeof envelope?.error?.message === 'string',
          `${label}: error envelope (${res.body.slice(0, 120)})`,
        ) && ok;
      ok =
        t.equal(
          HTTP_STATUS[code as keyof typeof HTTP_STATUS],
          res.status,
          `${label}: ${String(code)} matches status ${res.status}`,
        ) && ok;
      ok = t.match(res.headers['content-type'] ?? '', /^application\/json/, `${label}: JSON`) && ok;
    }
    if (res.status === 304) ok = t.equal(res.body, '', `${label}: 304 has no body`) && ok;
    const [pathOnly] = g.target.split('?');
    if (
      g.method === 'POST' &&
      writePaths.has(pathOnly!) &&
      res.status === 201 &&
      res.headers['idempotent-replayed'] !== 'true'
    )
      echoWrites += 1;
    return ok;
  };

  for (const [index, g] of samples.entries()) {
    const label = `#${index} ${g.method} ${g.target.slice(0, 80)}${g.body ? ` [${g.body.length}B${g.chunked ? ' chunked' : ''}]` : ''}`;
    const res = await rawRequest(s.app.port, frame(g), 30_000);
    if (!judge(g, res, label))
      t.comment(
        `failing request: ${JSON.stringify({ ...g, body: g.body?.subarray(0, 200).toString('latin1') })}`,
      );
  }

  // ---- values an answer's headers are built from (issue 51) ----------------------------
  // The app's `next` and `request` (its redirects' Location), OAuth's `state` (the client's),
  // X-Request-Id (echoed), a cookie, an upload's Content-Type (served back as one): text beyond
  // Latin-1 and ASCII, control characters, CR/LF, half a surrogate pair, bytes that are no
  // UTF-8; percent-encoded in a query or a form, raw in a header or the request line. The app's
  // are sent signed in (a session redirects at once) and with a correct password, as the links
  // that once took the process down. Judged as above, and no answer carries a header of the
  // client's making or a Location beyond visible ASCII.
  const plain: Generated = {
    method: 'GET',
    uwsMayDrop: false,
    target: '/',
    headers: [],
    body: null,
    chunked: false,
  };
  const person = await setUpPerson(s);
  const signedIn = new Agent(s.url);
  await signedIn.post(
    `${appPath}/signin`,
    { email: person.email, password: person.password },
    await signedIn.get(`${appPath}/signin`),
  );
  const session = signedIn.cookieHeader();
  const visitor = new Agent(s.url);
  const csrf = csrfOf((await visitor.get(`${appPath}/signin`)).text) ?? '';
  const visitorCookie = visitor.cookieHeader();
  t.ok(csrf, "a visitor's CSRF token, for the sign-in posts");
  const authorize = (state: string) =>
    `/v1/oauth/authorize?client_id=${person.clientId}&redirect_uri=${encodeURIComponent(REDIRECT)}&response_type=code&code_challenge=${pkce().challenge}&code_challenge_method=S256&state=${state}`;
  const pending = await rawRequest(s.app.port, frame({ ...plain, target: authorize('s') }));
  const handle = new URL(pending.headers.location ?? '', s.url).searchParams.get('request') ?? '';
  t.ok(handle, 'a pending authorize request, for `request` to name');

  const headerBound = fc.oneof(
    fc.constantFrom(
      `${appPath}/\u2215`,
      '\u2215',
      `${appPath}/caf\u00e9`,
      `${appPath}/\ud83d\udca9`,
      `${appPath}/\ud800`,
      `${appPath}/\r\nX-Injected: 1`,
      '\r\nX-Injected: 1',
      `${appPath}/\u0000`,
      `${appPath}/\u007f`,
      `${appPath}/\u0085`,
      `${appPath}/a b`,
      `${appPath}/\t`,
      `${appPath}/\u2028\u202e`,
      '//evil.example',
      `${appPath}\\evil`,
      `${appPath}/${'\u2215'.repeat(1500)}`,
      '',
    ),
    fc.string({ unit: 'binary', maxLength: 30 }).map((text) => `${appPath}/${text}`),
    fc.string({ unit: 'binary', maxLength: 30 }),
  );
  /** Every UTF-8 byte but the unreserved ones percent-encoded (half a surrogate pair: U+FFFD, as a browser sends it). */
  const percent = (text: string) =>
    [...Buffer.from(text, 'utf8')]
      .map((b) =>
        /[\w.~-]/.test(String.fromCharCode(b))
          ? String.fromCharCode(b)
          : `%${b.toString(16).padStart(2, '0')}`,
      )
      .join('');
  /** Raw: its UTF-8 bytes as they are, one latin1 character each (how frame() writes them). */
  const raw = (text: string) => Buffer.from(text, 'utf8').toString('latin1');
  /** Raw in a request target: what would end the request line (a space, CR/LF) or no parser takes (a control) percent-encoded. */
  const rawTarget = (text: string) =>
    raw(text).replace(
      /[\x00-\x20\x7f]/g,
      (c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`,
    );
  const encoded = fc.oneof(
    { weight: 4, arbitrary: headerBound.map(percent) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '%FF',
        '%ED%A0%80',
        '%C0%AF',
        '%E2%88',
        '%0D%0AX-Injected:%201',
        '%00',
        '%',
        '%zz',
        '+%2B+',
      ),
    },
  );
  const request = fc.option(fc.oneof(encoded, fc.constant(handle)), { freq: 3 });
  const withSession = fc.constantFrom(session, visitorCookie, '');
  const withQuery = (path: string, params: [string, string | null][]) =>
    `${path}?${params
      .filter(([, v]) => v !== null)
      .map(([k, v]) => `${k}=${v}`)
      .join('&')}`;
  const bound = fc.oneof(
    // GET /app/signin: with a session, straight to `next` (or to consent, for a live `request`).
    fc.record({ next: encoded, request, cookie: withSession }).map(({ next, request, cookie }) => ({
      ...plain,
      target: withQuery(`${appPath}/signin`, [
        ['next', next],
        ['request', request],
      ]),
      headers: cookie ? [['Cookie', cookie] as [string, string]] : [],
    })),
    // POST /app/signin with the correct password.
    fc.record({ next: encoded, request }).map(({ next, request }) => ({
      ...plain,
      method: 'POST',
      target: `${appPath}/signin`,
      headers: [
        ['Cookie', visitorCookie],
        ['Content-Type', 'application/x-www-form-urlencoded'],
      ] as [string, string][],
      body: Buffer.from(
        withQuery('', [
          ['csrf', csrf],
          ['email', percent(person.email)],
          ['password', percent(person.password)],
          ['next', next],
          ['request', request],
        ]).slice(1),
      ),
    })),
    fc.record({ request: encoded, cookie: withSession }).map(({ request, cookie }) => ({
      ...plain,
      target: withQuery(`${appPath}/consent`, [['request', request]]),
      headers: cookie ? [['Cookie', cookie] as [string, string]] : [],
    })),
    encoded.map((state) => ({ ...plain, target: authorize(state) })),
    // Raw bytes where a client may put them: the request line, X-Request-Id, a cookie.
    headerBound.map((next) => ({
      ...plain,
      uwsRefuses: true,
      target: `${appPath}/signin?next=${rawTarget(next)}`,
      headers: [['Cookie', session]] as [string, string][],
    })),
    fc
      .record({
        value: headerBound,
        name: fc.constantFrom('X-Request-Id', 'Cookie', 'Accept', 'If-None-Match'),
      })
      .map(({ value, name }) => ({
        ...plain,
        uwsRefuses: true,
        target: `${appPath}/signin?next=${encodeURIComponent(`${appPath}/flows`)}`,
        headers: [
          ['Cookie', session],
          [name, raw(value)],
        ] as [string, string][],
      })),
  );
  const judgeBound = (g: Generated, res: RawResponse, label: string) => {
    let ok = judge(g, res, label);
    ok = t.notOk(res.headers['x-injected'], `${label}: no header of the client's making`) && ok;
    if (res.headers.location !== undefined)
      ok =
        t.match(res.headers.location, /^[\x21-\x7e]+$/, `${label}: Location in visible ASCII`) &&
        ok;
    if (!ok)
      t.comment(`failing request: ${JSON.stringify({ ...g, body: g.body?.toString('latin1') })}`);
    return ok;
  };
  /** Redirects into the app, by method: a session's GET, a correct password's POST. */
  const redirects = { GET: 0, POST: 0 };
  for (const [index, g] of fc.sample(bound, { seed: SEED + 2, numRuns: BOUND_RUNS }).entries()) {
    const res = await rawRequest(s.app.port, frame(g), 30_000);
    if (res.status === 303 && res.headers.location?.startsWith(appPath))
      redirects[g.method as keyof typeof redirects] += 1;
    judgeBound(g, res, `bound #${index} ${g.method} ${g.target.slice(0, 80)}`);
  }
  t.comment(`redirects into the app: ${JSON.stringify(redirects)}`);
  t.ok(redirects.GET >= 10, 'signed in, many GETs went straight to their redirect');
  t.ok(redirects.POST >= 10, 'many posts with the correct password were signed in and redirected');
  // An upload's Content-Type, raw, is served back as the download's: ASCII, or octet-stream.
  const flow = await s.api<{ id: string; tasks: { id: string }[] }>('POST', '/v1/flows', {
    token: s.adminKey,
    body: { name: 'Uploads', tasks: [{ name: 'A' }] },
  });
  const attachments = `/v1/flows/${flow.body.id}/tasks/${item(flow.body.tasks).id}/attachments`;
  for (const [index, value] of fc.sample(headerBound, { seed: SEED + 3, numRuns: 20 }).entries()) {
    const upload: Generated = {
      ...plain,
      method: 'POST',
      uwsRefuses: true,
      target: `${attachments}?name=f.txt`,
      headers: [
        ['Authorization', `Bearer ${s.adminKey}`],
        ['Content-Type', raw(`text/plain; name="${value}"`)],
      ],
      body: Buffer.from('bytes'),
    };
    const res = await rawRequest(s.app.port, frame(upload), 30_000);
    judgeBound(upload, res, `upload #${index}`);
    if (res.status !== 201) continue;
    const id = (JSON.parse(res.body) as { id: string }).id;
    const download: Generated = {
      ...plain,
      target: `${attachments}/${id}/content`,
      headers: [['Authorization', `Bearer ${s.adminKey}`]],
    };
    const content = await rawRequest(s.app.port, frame(download), 30_000);
    judgeBound(download, content, `download #${index}`);
    t.match(
      content.headers['content-type'],
      /^[\x20-\x7e]+$/,
      `download #${index}: its type in ASCII`,
    );
  }

  // fetch for what it expresses natively: streamed (chunked) bodies of unknown length, aborted uploads.
  const fetchSamples = fc.sample(
    fc.record({
      path: fc.constantFrom('/v1/test/echo', '/v1/oauth/token', '/v1/me', '/v1/nope'),
      body: badBody,
      split: fc.integer({ min: 1, max: 8 }),
    }),
    { seed: SEED + 1, numRuns: 40 },
  );
  for (const [index, sample] of fetchSamples.entries()) {
    const parts = Array.from({ length: sample.split }, (_, i) =>
      sample.body.subarray(
        Math.floor((i * sample.body.length) / sample.split),
        Math.floor(((i + 1) * sample.body.length) / sample.split),
      ),
    );
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const part of parts) controller.enqueue(new Uint8Array(part));
        controller.close();
      },
    });
    const res = await fetch(s.url + sample.path, {
      method: 'POST',
      body: stream,
      duplex: 'half',
      headers: { authorization: `Bearer ${s.adminKey}`, 'content-type': 'application/json' },
    } as RequestInit);
    const text = await res.text();
    const headers = Object.fromEntries(res.headers);
    judge(
      {
        method: 'POST',
        uwsMayDrop: false,
        target: sample.path,
        headers: [],
        body: sample.body,
        chunked: true,
      },
      { status: res.status, headers, body: text, ended: 'closed' },
      `fetch #${index} POST ${sample.path}`,
    );
  }
  // An upload abandoned half-way must not take anything down.
  for (let i = 0; i < 5; i += 1) {
    const controller = new AbortController();
    const stream = new ReadableStream<Uint8Array>({
      pull(c) {
        c.enqueue(new Uint8Array(1024).fill(0x20));
        controller.abort();
      },
    });
    await fetch(`${s.url}/v1/test/echo`, {
      method: 'POST',
      body: stream,
      duplex: 'half',
      signal: controller.signal,
      headers: {
        authorization: `Bearer ${s.adminKey}`,
        'content-type': 'application/json',
        'content-length': '100000',
      },
    } as RequestInit)
      .then((res) => res.text())
      .catch(() => undefined);
  }

  t.comment(
    `answered ${answered}, dropped by uWS ${dropped}, refused by uWS itself ${refusedByUws}; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])))}`,
  );
  t.ok(answered >= RUNS * 0.8, 'most requests were answered');
  t.ok(
    [...statuses.keys()].some((status) => status < 300),
    'some generated requests were valid and served',
  );
  t.ok([...statuses.keys()].filter((status) => status >= 400).length >= 6, 'a spread of refusals');

  const health = await fetch(`${s.url}/healthz`);
  t.equal(health.status, 200, 'the process keeps serving');
  t.equal(
    (await fetch(`${s.url}/v1/me`, { headers: { authorization: `Bearer ${s.adminKey}` } })).status,
    200,
  );
  t.equal(
    await echo.rows(),
    rowsBefore + echoWrites,
    'only the accepted echo requests wrote a row',
  );
});

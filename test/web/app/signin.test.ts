/**
 * The web app's sign-in and consent over plain HTTP form posts: cookie attributes, security
 * headers, CSRF, the same answer for an unknown email and a wrong password (and the same
 * work), throttling per account and address and per address, session rotation and sign-out,
 * narrowing on consent, and the attacks the issue lists. (The throttle's races, lock-outs and
 * address buckets: test/security/signin-throttle.test.ts.)
 */
import t from 'tap';
import { createUser, createWorkspace } from '../../../src/services/auth/provision.ts';
import { appRoutes } from '../../../src/web/app/app.routes.ts';
import { cookieNames } from '../../../src/web/app/session.ts';
import { loadConfig } from '../../../src/platform/config.ts';
import { startTestServer } from '../../helpers/server.ts';
import {
  Agent,
  authorizePath,
  pkce,
  REDIRECT,
  setUpPerson,
  signInAndConsent,
} from '../../services/auth/agent.ts';
import { createPerson } from '../../helpers/people.ts';
import type { JsonDocument, Token } from '../../helpers/wire.ts';

t.test('cookie names and flags follow the app URL', async (t) => {
  t.match(cookieNames(loadConfig({ APP_URL: 'https://plan.example/app' })), {
    session: '__Host-fp_session',
    secure: true,
  });
  t.match(
    cookieNames(loadConfig({ BASE_URL: 'http://127.0.0.1:8080' })),
    { session: '__Host-fp_session', secure: true },
    'loopback is a secure context',
  );
  t.throws(
    () => loadConfig({ APP_URL: 'http://plan.lan/app' }),
    /APP_URL http:\/\/plan\.lan\/app is plain http .*APP_ALLOW_INSECURE=1/,
    'plain http on another host: refused at start, saying why',
  );
  t.match(
    cookieNames(loadConfig({ APP_URL: 'http://plan.lan/app', APP_ALLOW_INSECURE: '1' })),
    { session: 'fp_session', secure: false },
    'allowed: no __Host- without Secure',
  );
});

t.test('sign-in and consent', async (t) => {
  // The loopback peer is a trusted proxy hop, so a test can sign in "from" another address.
  const s = await startTestServer(t, {}, { TRUST_PROXY: '1' });
  const person = await setUpPerson(s, { role: 'admin' });
  const codes = async () =>
    (await s.sql<{ n: number }[]>`select count(*)::int as n from oauth_codes`)[0]!.n;
  const start = async (agent: Agent, extra: Record<string, string> = {}) => {
    const res = await agent.get(
      authorizePath({
        client_id: person.clientId,
        redirect_uri: REDIRECT,
        response_type: 'code',
        code_challenge: pkce().challenge,
        code_challenge_method: 'S256',
        state: 's',
        ...extra,
      }),
    );
    return new URL(res.location!, s.url).searchParams.get('request')!;
  };

  t.test(
    'the base URL leads a browser to the app; the OpenAPI document leaves it out',
    async (t) => {
      const agent = new Agent(s.url);
      const root = await agent.get('/');
      t.equal(root.status, 303);
      t.equal(root.location, '/app', 'to APP_URL, on the same origin as a path');
      t.equal(root.headers.get('cache-control'), 'no-store');
      t.equal(
        (await agent.get(root.location!)).location,
        '/app/signin',
        'where a visitor is asked to sign in',
      );
      const openapi = await s.api<JsonDocument>('GET', '/v1/openapi.json');
      t.notOk(openapi.body.paths['/'], 'not part of the API');
      // The route itself, under other APP_URLs: absolute on another origin; none when the app is at the root (it answers `/`).
      const rootOf = (env: Record<string, string>) =>
        appRoutes({ ...s.app.services, config: loadConfig(env) }).filter((r) => r.path === '/');
      const [elsewhere] = rootOf({ APP_URL: 'https://plan.example/app' });
      t.equal(
        (await elsewhere!.handler({} as never)).headers?.Location,
        'https://plan.example/app',
      );
      const atRoot = rootOf({
        BASE_URL: 'http://127.0.0.1:8080',
        APP_URL: 'http://127.0.0.1:8080',
      });
      t.same(
        atRoot.map((r) => r.operationId),
        ['appHome'],
        'an app at the root: `/` is its home page',
      );
    },
  );

  t.test('the sign-in page: headers, cookie, accessible form', async (t) => {
    const agent = new Agent(s.url);
    const request = await start(agent);
    const page = await agent.get(`/app/signin?request=${request}`);
    t.equal(page.status, 200);
    const csp = page.headers.get('content-security-policy')!;
    t.match(csp, /frame-ancestors 'none'/);
    t.notMatch(csp, /unsafe-inline/);
    t.equal(page.headers.get('x-content-type-options'), 'nosniff');
    t.equal(page.headers.get('cache-control'), 'no-store');
    const csrfCookie = page.headers.getSetCookie().find((c) => c.startsWith('__Host-fp_csrf='))!;
    t.match(csrfCookie, /; Path=\//);
    t.match(csrfCookie, /HttpOnly/);
    t.match(csrfCookie, /SameSite=Lax/);
    t.match(csrfCookie, /Secure/);
    t.match(page.text, /<label for="email">Email<\/label>/);
    t.match(page.text, /<label for="password">Password<\/label>/);
    t.match(page.text, /Flowplan CLI asks to use your flowplan account/);
  });

  t.test(
    'unknown email and wrong password: same answer, same work; throttled per account',
    async (t) => {
      const agent = new Agent(s.url);
      const page = await agent.get('/app/signin');
      const attempt = async (email: string, password: string) => {
        const started = performance.now();
        const res = await agent.post('/app/signin', { email, password }, page);
        return { res, ms: performance.now() - started };
      };
      // Hashed at the floor, as every real account is (test people have cheap hashes).
      const floor = { email: `floor.${Date.now()}@example.com`, password: 'hashed at the floor' };
      await createUser(s.sql, {
        email: floor.email,
        name: 'Flo',
        password: floor.password,
        workspaceId: s.workspaceId,
        role: 'member',
      });
      const wrong = await attempt(floor.email, 'wrong password');
      const unknown = await attempt('nobody@example.com', 'wrong password');
      t.equal(wrong.res.status, 401);
      t.equal(unknown.res.status, 401);
      t.equal(
        wrong.res.text.replace(floor.email, 'X'),
        unknown.res.text.replace('nobody@example.com', 'X'),
        'the same page, word for word',
      );
      t.match(wrong.res.text, /role="alert"/);
      t.match(wrong.res.text, /aria-describedby="signin-error"/, 'the error is tied to the fields');
      // The fastest of two each: a pause of a loaded machine lengthens one sample, not both.
      const wrongMs = Math.min(wrong.ms, (await attempt(floor.email, 'wrong again')).ms);
      const unknownMs = Math.min(
        unknown.ms,
        (await attempt('nobody@example.com', 'wrong again')).ms,
      );
      t.ok(
        unknownMs > wrongMs * 0.4,
        `an unknown email costs a hash too (${unknownMs.toFixed(0)} ms vs ${wrongMs.toFixed(0)} ms)`,
      );
      t.notOk(
        wrong.res.headers.getSetCookie().some((c) => c.startsWith('__Host-fp_session=')),
        'no session',
      );

      for (let i = 0; i < 5; i++) await attempt(person.email, `wrong ${i}`);
      const locked = await attempt(person.email, person.password);
      t.equal(
        locked.res.status,
        429,
        'five failures lock the account from this address, even with the right password',
      );
      t.match(locked.res.text, /Try again in 15 minutes/);
      t.equal(locked.res.headers.get('retry-after'), '900');
      const elsewhere = new Agent(s.url);
      const elsewherePage = await elsewhere.get('/app/signin');
      const fromElsewhere = await elsewhere.post(
        '/app/signin',
        { email: person.email, password: person.password },
        elsewherePage,
        { 'x-forwarded-for': '198.51.100.7' },
      );
      t.equal(
        fromElsewhere.status,
        303,
        'but not for everyone: the person still signs in from another address',
      );
      const otherPerson = await setUpPerson(s, { role: 'member' });
      const other = new Agent(s.url);
      const otherPage = await other.get('/app/signin');
      t.equal(
        (
          await other.post(
            '/app/signin',
            { email: otherPerson.email, password: otherPerson.password },
            otherPage,
          )
        ).status,
        303,
        'other accounts are unaffected',
      );
      await s.sql`delete from signin_attempts`;
    },
  );

  t.test('oversized and malformed forms', async (t) => {
    const agent = new Agent(s.url);
    const page = await agent.get('/app/signin');
    const huge = await agent.post(
      '/app/signin',
      { email: person.email, password: 'x'.repeat(1024 * 1024) },
      page,
    );
    t.equal(huge.status, 413, 'a 1 MB password is refused before anything reads it');
    const long = await agent.post(
      '/app/signin',
      { email: person.email, password: 'x'.repeat(2000) },
      page,
    );
    t.equal(long.status, 400);
    t.match(long.text, /longer than 1024/);
    const json = await agent.request(
      'POST',
      '/app/signin',
      JSON.stringify({ email: person.email }),
      { 'content-type': 'application/json' },
    );
    t.equal(json.status, 415);
    const noCsrf = await agent.request(
      'POST',
      '/app/signin',
      `email=${encodeURIComponent(person.email)}&password=${encodeURIComponent(person.password)}`,
    );
    t.equal(noCsrf.status, 403, 'no CSRF token');
    t.notOk(noCsrf.headers.getSetCookie().some((c) => c.startsWith('__Host-fp_session=')));
    t.equal((await agent.request('POST', '/app/signin', '%%%&&&==')).status, 403, 'garbage');
    const unknownRequest = await agent.post(
      '/app/signin',
      { email: person.email, password: person.password, request: 'req_x' },
      page,
    );
    t.equal(unknownRequest.status, 404, 'an unknown request handle');
    t.equal(unknownRequest.location, null);
  });

  t.test('session rotation on sign-in; a session replayed after sign-out is dead', async (t) => {
    const agent = new Agent(s.url);
    const signIn = async () => {
      const page = await agent.get('/app/signin?x=1');
      return agent.post('/app/signin', { email: person.email, password: person.password }, page);
    };
    const first = await signIn();
    t.equal(first.status, 303);
    t.equal(first.location, '/app', 'to the home page');
    const session1 = agent.jar.get('__Host-fp_session')!;
    t.match(
      first.headers.getSetCookie().find((c) => c.startsWith('__Host-fp_session='))!,
      /^__Host-fp_session=[\w-]+; Max-Age=\d+; Path=\/; HttpOnly; Secure; SameSite=Lax$/,
    );
    t.equal((await agent.get('/app/access')).status, 200);
    const again = await agent.post(
      '/app/signin',
      { email: person.email, password: person.password },
      await agent.get('/app/workspaces'),
    );
    t.equal(again.status, 303);
    const session2 = agent.jar.get('__Host-fp_session')!;
    t.not(session2, session1, 'a new session id on every sign-in');
    const stale = new Agent(s.url);
    stale.jar.set('__Host-fp_session', session1);
    t.equal((await stale.get('/app/access')).status, 303, 'the previous session ended');

    const access = await agent.get('/app/access');
    const out = await agent.post('/app/signout', {}, access);
    t.equal(out.status, 303);
    t.equal(out.location, '/app/signin?signedout=1');
    t.notOk(agent.jar.has('__Host-fp_session'), 'the cookie is cleared');
    const replay = new Agent(s.url);
    replay.jar.set('__Host-fp_session', session2);
    const replayed = await replay.get('/app/access');
    t.equal(replayed.status, 303, 'a replayed cookie after sign-out is not signed in');
    t.equal(replayed.location, '/app/signin');
  });

  t.test('consent: narrowing, deny, CSRF, a workspace not the person’s', async (t) => {
    const agent = new Agent(s.url);
    const { verifier, challenge } = pkce();
    const narrowed = await signInAndConsent(agent, {
      ...person,
      challenge,
      approveScopes: ['flows:read'],
    });
    const exchanged = await s.api<Token>('POST', '/v1/oauth/token', {
      raw: new URLSearchParams({
        grant_type: 'authorization_code',
        client_id: person.clientId,
        code: narrowed.searchParams.get('code')!,
        code_verifier: verifier,
        redirect_uri: REDIRECT,
      }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    t.equal(exchanged.body.scope, 'flows:read', 'only what the person ticked');

    const request = await start(agent);
    const consent = await agent.get(`/app/consent?request=${request}`);
    t.equal(consent.status, 200);
    t.match(
      consent.headers.get('content-security-policy'),
      /frame-ancestors 'none'/,
      'no clickjacking',
    );
    const before = await codes();
    const forged = new Agent(s.url);
    const forgedPage = await forged.get('/app/signin');
    const csrfAttack = await agent.post('/app/consent', {
      csrf: /name="csrf" value="([^"]+)"/.exec(forgedPage.text)![1]!,
      request,
      workspace: s.workspaceId,
      scope: 'flows:read',
      decision: 'approve',
    });
    t.equal(csrfAttack.status, 403, "another browser's token");
    t.equal(
      (
        await agent.post('/app/consent', {
          request,
          workspace: s.workspaceId,
          scope: 'flows:read',
          decision: 'approve',
          csrf: '',
        })
      ).status,
      403,
      'no token',
    );
    const { id: foreign } = await createWorkspace(s.sql, { name: 'Foreign' });
    const wrongWorkspace = await agent.post(
      '/app/consent',
      { request, workspace: foreign, scope: 'flows:read', decision: 'approve' },
      consent,
    );
    t.equal(wrongWorkspace.status, 403, 'a workspace the person does not belong to');
    const nothing = await agent.post(
      '/app/consent',
      { request, workspace: s.workspaceId, scope: 'team:write', decision: 'approve' },
      consent,
    );
    t.equal(nothing.status, 400, 'approving nothing that was asked for');
    t.equal(await codes(), before, 'no code was issued');

    const denied = await agent.post(
      '/app/consent',
      { request, workspace: s.workspaceId, decision: 'deny' },
      consent,
    );
    t.equal(denied.status, 303);
    const location = new URL(denied.location!);
    t.equal(location.searchParams.get('error'), 'access_denied');
    t.equal(location.searchParams.get('state'), 's');
    t.equal(location.searchParams.get('iss'), s.app.services.config.baseUrl);
    t.equal(
      (await agent.get(`/app/consent?request=${request}`)).status,
      404,
      'the request is consumed',
    );
  });

  t.test('a person in several workspaces picks one on the consent screen', async (t) => {
    const { id: second } = await createWorkspace(s.sql, { name: 'Second <b>space</b>' });
    await createPerson(s.sql, { email: person.email, workspaceId: second, role: 'member' });
    const agent = new Agent(s.url);
    const { verifier, challenge } = pkce();
    const callback = await signInAndConsent(agent, { ...person, challenge, workspace: second });
    const res = await s.api<Token>('POST', '/v1/oauth/token', {
      raw: new URLSearchParams({
        grant_type: 'authorization_code',
        client_id: person.clientId,
        code: callback.searchParams.get('code')!,
        code_verifier: verifier,
        redirect_uri: REDIRECT,
      }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    const me = await s.api('GET', '/v1/me', { token: res.body.access_token });
    t.match(me.body, { workspaceId: second, role: 'member' });
    const picker = await agent.get('/app/workspaces');
    t.match(picker.text, /Second &lt;b&gt;space&lt;\/b&gt;/, 'names are escaped');
    t.match(picker.text, /<input type="radio" id="ws-/);
  });

  t.test('throttled per client address across accounts', async (t) => {
    const agent = new Agent(s.url);
    const page = await agent.get('/app/signin');
    for (let i = 0; i < 20; i++)
      await agent.post('/app/signin', { email: `guess${i}@example.com`, password: 'nope' }, page);
    const blocked = await agent.post(
      '/app/signin',
      { email: person.email, password: person.password },
      page,
    );
    t.equal(blocked.status, 429);
    t.match(blocked.text, /Try again in \d+ minutes?/);
    await s.sql`delete from signin_attempts`;
  });
});

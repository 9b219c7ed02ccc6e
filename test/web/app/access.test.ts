/**
 * The app's API access page over form posts: an admin lists keys and OAuth clients, creates a
 * key whose secret is shown once, rotates it (the old key answers CREDENTIAL_REVOKED), deletes
 * keys and clients (every token they issued answers CREDENTIAL_REVOKED). Members cannot;
 * another workspace's credentials are 404. First-party clients are listed read-only
 * (test/security/first-party-clients.test.ts).
 */
import t from 'tap';
import { createClient, createKey, createWorkspace } from '../../../src/services/auth/provision.ts';
import { assertError, startTestServer } from '../../helpers/server.ts';
import { Agent, setUpPerson, type PageResponse } from '../../services/auth/agent.ts';
import type { Context, Token } from '../../helpers/wire.ts';

const keyOf = (page: PageResponse) =>
  /id="new-key" type="text" readonly value="(fpk_[\w-]+)"/.exec(page.text)?.[1];

t.test('API access', async (t) => {
  const s = await startTestServer(t);
  const admin = await setUpPerson(s, { role: 'owner' });
  const agent = new Agent(s.url);
  const signin = await agent.get('/app/signin');
  t.equal(
    (await agent.post('/app/signin', { email: admin.email, password: admin.password }, signin))
      .status,
    303,
  );

  t.test('lists keys and clients of the workspace', async (t) => {
    const page = await agent.get('/app/access');
    t.equal(page.status, 200);
    t.match(page.text, /API access: Demo/);
    t.match(page.text, /Sign-in apps of this installation/);
    t.match(
      page.text,
      new RegExp(`Flowplan CLI <code>${admin.clientId}</code>`),
      'the first-party client, read-only',
    );
    t.notMatch(
      page.text,
      new RegExp(`/app/access/credentials/${admin.clientId}/delete`),
      'which only the operator removes',
    );
    const [demoKey] = await s.sql<
      { id: string }[]
    >`select id from credentials where kind = 'key' order by created_at limit 1`;
    t.match(page.text, new RegExp(demoKey!.id), 'the Demo key');
    t.match(
      page.text,
      /<script src="\/app\/copy.js" defer><\/script>/,
      'the copy button script is a file, not inline',
    );
    t.notMatch(page.text, /<script>/);
    const script = await agent.get('/app/copy.js');
    t.equal(script.status, 200);
    t.match(script.headers.get('content-type'), /javascript/);
  });

  t.test('create a key: shown once, with the role and scopes chosen', async (t) => {
    const page = await agent.get('/app/access');
    const posted = await agent.post(
      '/app/access/keys',
      { name: 'Reporting', role: 'viewer', scope: ['flows:read', 'team:read'] },
      page,
    );
    t.equal(posted.status, 303, 'POST, then redirect…');
    t.equal(posted.location, '/app/access');
    t.notMatch(
      posted.text + JSON.stringify([...posted.headers]),
      /fpk_/,
      'the redirect itself carries no key in the clear',
    );
    const created = await agent.get(posted.location!);
    t.equal(created.status, 200, '…then GET: the page shows the new key');
    const key = keyOf(created)!;
    t.match(key, /^fpk_/);
    t.match(created.text, /shown only once/);
    t.match(
      created.text,
      /data-copy="new-key" hidden>Copy<\/button>/,
      'the copy button appears only with JavaScript',
    );
    const me = await s.api<Context>('GET', '/v1/me', { token: key });
    t.match(me.body, { role: 'viewer', credentialName: 'Reporting' });
    t.strictSame(me.body.scopes, ['flows:read', 'team:read'], 'exactly the scopes ticked');
    const later = await agent.get('/app/access');
    t.equal(later.status, 200);
    t.notOk(later.text.includes(key), 'a reload shows it no more');
    t.match(later.text, /Reporting/);
    const [reporting] = await s.sql<
      { n: number }[]
    >`select count(*)::int as n from credentials where name = 'Reporting'`;
    t.equal(reporting!.n, 1, 'and creates no second key');

    // The sealed flash opens only with the session it was made for.
    const again = await agent.post(
      '/app/access/keys',
      { name: 'Sealed', role: 'viewer', scope: 'flows:read' },
      later,
    );
    const flash = [...agent.jar].find(([name]) => name.endsWith('fp_flash'))!;
    const thief = new Agent(s.url);
    thief.jar.set(flash[0], flash[1]);
    t.equal(
      (await thief.get(again.location!)).status,
      303,
      'another browser with the flash cookie alone is sent to sign-in',
    );
    const other = await setUpPerson(s, { role: 'owner' });
    const otherAgent = new Agent(s.url);
    await otherAgent.post(
      '/app/signin',
      { email: other.email, password: other.password },
      await otherAgent.get('/app/signin'),
    );
    otherAgent.jar.set(flash[0], flash[1]);
    t.notMatch(
      (await otherAgent.get('/app/access')).text,
      /id="new-key"/,
      "another admin's session cannot open it",
    );
    t.match(keyOf(await agent.get('/app/access')), /^fpk_/, 'its own session can, once');

    const none = await agent.post('/app/access/keys', { name: 'Nothing', role: 'member' }, later);
    t.equal(none.status, 400, 'no scope chosen');
    t.match(none.text, /at least one scope/);
    const badRole = await agent.post(
      '/app/access/keys',
      { name: 'Boss', role: 'owner', scope: 'flows:read' },
      later,
    );
    t.equal(badRole.status, 400);
    const forged = await agent.post('/app/access/keys', {
      name: 'Forged',
      role: 'admin',
      scope: 'flows:read',
      csrf: 'x'.repeat(43),
    });
    t.equal(forged.status, 403, 'CSRF');
    // Issue 51, item 5: a key's name shows in the operator's `flowplan key list` and wherever the
    // key acts; an escape sequence or a bidirectional override in it is refused, saying why.
    for (const [name, words] of [
      [
        'Esc\u001B[2K\rforged',
        /The key&#39;s name must not contain control characters \(U\+0000–U\+001F, U\+007F–U\+009F\)/,
      ],
      ['Csi\u009B31m', /The key&#39;s name must not contain control characters/],
      [
        'Rlo\u202Eevil',
        /The key&#39;s name must not contain bidirectional controls \(U\+061C, U\+200E, U\+200F/,
      ],
    ] as const) {
      const refused = await agent.post(
        '/app/access/keys',
        { name, role: 'viewer', scope: 'flows:read' },
        later,
      );
      t.equal(refused.status, 400, `${JSON.stringify(name)}: refused`);
      t.match(refused.text, words, 'the page says why');
      t.match(
        refused.text,
        /<form method="post" action="\/app\/access\/keys"/,
        'with the form again',
      );
    }
    const [count] = await s.sql<
      { n: number }[]
    >`select count(*)::int as n from credentials where name in ('Nothing', 'Boss', 'Forged') or name ~ '^(Esc|Csi|Rlo)'`;
    t.equal(count!.n, 0, 'no refused form created a key');
  });

  t.test('rotate: a new key; the old one is revoked', async (t) => {
    const { id, key } = await createKey(s.sql, {
      workspaceId: s.workspaceId,
      role: 'member',
      scopes: ['flows:read'],
      name: 'Rotate me',
    });
    t.equal((await s.api('GET', '/v1/me', { token: key })).status, 200);
    const page = await agent.get('/app/access');
    const posted = await agent.post(`/app/access/keys/${id}/rotate`, {}, page);
    t.equal(posted.status, 303);
    const rotated = await agent.get(posted.location!);
    t.match(rotated.text, /Your replacement key \(the old one is revoked\)/);
    const fresh = keyOf(rotated)!;
    t.notOk((await agent.get('/app/access')).text.includes(fresh), 'shown once');
    t.not(fresh, key);
    assertError(
      t,
      await s.api('GET', '/v1/me', { token: key }),
      401,
      'CREDENTIAL_REVOKED',
      'the old key',
    );
    const replacement = (await s.api<Context>('GET', '/v1/me', { token: fresh })).body;
    t.match(replacement, { credentialName: 'Rotate me', role: 'member' });
    t.strictSame(replacement.scopes, ['flows:read'], "the old key's scopes, no more");
  });

  t.test('delete: the key, or a client and every token it issued', async (t) => {
    const { id, key } = await createKey(s.sql, {
      workspaceId: s.workspaceId,
      role: 'member',
      scopes: ['flows:read'],
      name: 'Delete me',
    });
    const client = await createClient(s.sql, {
      workspaceId: s.workspaceId,
      role: 'member',
      scopes: ['flows:read'],
      name: 'Robot',
    });
    const issued = await s.api<Token>('POST', '/v1/oauth/token', {
      raw: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: client.clientId,
        client_secret: client.clientSecret!,
      }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    t.equal(
      (await s.api('GET', '/v1/me', { token: issued.body.access_token })).status,
      200,
      'cached as valid',
    );
    const page = await agent.get('/app/access');
    t.match(
      page.text,
      new RegExp(
        `<form method="get" action="/app/access/credentials/${id}/delete"><button type="submit" class="danger" aria-label="Delete Delete me">`,
      ),
      'Delete leads to a confirmation',
    );
    const unconfirmed = await agent.post(`/app/access/credentials/${id}/delete`, {}, page);
    t.equal(unconfirmed.status, 303, 'a post without the confirmation deletes nothing…');
    t.equal(
      unconfirmed.location,
      `/app/access/credentials/${id}/delete`,
      '…and shows the confirmation page',
    );
    t.equal((await s.api('GET', '/v1/me', { token: key })).status, 200, 'the key still works');
    for (const [credential, said] of [
      [id, /Deleted the API key Delete me \(key_[\w-]+\): it is refused from now on/],
      [
        client.clientId,
        /Deleted the OAuth client Robot \(cli_[\w-]+\): it and every token it issued are refused/,
      ],
    ] as const) {
      const confirm = await agent.get(`/app/access/credentials/${credential}/delete`);
      t.equal(confirm.status, 200);
      t.match(
        confirm.text,
        /<h1>Delete the (API key|OAuth client) “(Delete me|Robot)”\?<\/h1>/,
        'names what goes',
      );
      t.match(confirm.text, /401 CREDENTIAL_REVOKED/, 'and what stops working');
      t.notMatch(confirm.text, /only admin API key/, 'no last-admin warning for a member key');
      const deleted = await agent.post(
        `/app/access/credentials/${credential}/delete`,
        { confirm: 'yes' },
        confirm,
      );
      t.equal(deleted.status, 303);
      t.equal(deleted.location, '/app/access');
      const told = await agent.get(deleted.location!);
      t.match(told.text, said, 'the page says what happened');
      t.notMatch((await agent.get('/app/access')).text, said, 'once');
    }
    assertError(
      t,
      await s.api('GET', '/v1/me', { token: key }),
      401,
      'CREDENTIAL_REVOKED',
      'the key',
    );
    assertError(
      t,
      await s.api('GET', '/v1/me', { token: issued.body.access_token }),
      401,
      'CREDENTIAL_REVOKED',
      "the client's token",
    );
    const after = await agent.get('/app/access');
    t.notMatch(after.text, /Delete me|Robot/, 'gone from the list');

    const { id: elsewhere } = await createWorkspace(s.sql, { name: 'Elsewhere' });
    const foreign = await createKey(s.sql, {
      workspaceId: elsewhere,
      role: 'admin',
      scopes: ['flows:read'],
    });
    const refused = await agent.post(
      `/app/access/credentials/${foreign.id}/delete`,
      { confirm: 'yes' },
      after,
    );
    t.equal(refused.status, 404, "another workspace's key");
    t.equal(
      (await agent.get(`/app/access/credentials/${foreign.id}/delete`)).status,
      404,
      'nor its confirmation page',
    );
    t.equal((await s.api('GET', '/v1/me', { token: foreign.key })).status, 200, 'untouched');
  });

  t.test('members see the page but cannot manage access', async (t) => {
    const member = await setUpPerson(s, { role: 'member' });
    const other = new Agent(s.url);
    await other.post(
      '/app/signin',
      { email: member.email, password: member.password },
      await other.get('/app/signin'),
    );
    const page = await other.get('/app/access');
    t.equal(page.status, 403);
    t.match(page.text, /Only admins manage API keys/);
    t.match(page.text, /href="\/app">Back to your home page</, 'and a way back home');
    const create = await other.post(
      '/app/access/keys',
      { name: 'Sneaky', role: 'admin', scope: 'flows:read' },
      page,
    );
    t.equal(create.status, 403);
    t.match(create.headers.get('content-type'), /text\/html/);
  });

  t.test('signed out: every page leads to sign-in', async (t) => {
    const stranger = new Agent(s.url);
    for (const path of ['/app', '/app/access', '/app/workspaces']) {
      const res = await stranger.get(path);
      t.equal(res.status, 303, path);
      t.equal(res.location, '/app/signin');
    }
  });

  // Last: it deletes the Demo admin key the other tests use.
  t.test('the only admin key: a strong warning, and a second confirmation', async (t) => {
    const [demo] = await s.sql<
      { id: string }[]
    >`select id from credentials where kind = 'key' and role = 'admin' and revoked_at is null and workspace_id = ${s.workspaceId}`;
    const confirm = await agent.get(`/app/access/credentials/${demo!.id}/delete`);
    t.match(confirm.text, /This is the only admin API key of Demo\./, 'a strong warning');
    t.match(
      confirm.text,
      /<input type="checkbox" id="last-admin-key" name="last-admin-key" value="understood" required/,
    );
    const once = await agent.post(
      `/app/access/credentials/${demo!.id}/delete`,
      { confirm: 'yes' },
      confirm,
    );
    t.equal(once.status, 400, 'confirmed without the box: refused');
    t.match(once.text, /role="alert"[^]*tick the box/);
    t.equal(
      (await s.api('GET', '/v1/me', { token: s.adminKey })).status,
      200,
      'the key still works',
    );
    const twice = await agent.post(
      `/app/access/credentials/${demo!.id}/delete`,
      { confirm: 'yes', 'last-admin-key': 'understood' },
      once,
    );
    t.equal(twice.status, 303);
    assertError(
      t,
      await s.api('GET', '/v1/me', { token: s.adminKey }),
      401,
      'CREDENTIAL_REVOKED',
      'deleted when meant twice',
    );
  });
});

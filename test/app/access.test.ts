/**
 * The app's API access page over form posts: an admin lists keys and OAuth clients, creates a
 * key whose secret is shown once, rotates it (the old key answers CREDENTIAL_REVOKED), deletes
 * keys and clients (every token they issued answers CREDENTIAL_REVOKED). Members cannot;
 * another workspace's credentials are 404. First-party clients are listed read-only
 * (test/security/first-party-clients.test.ts).
 */
import t from 'tap';
import { createClient, createKey, createWorkspace } from '../../src/services/auth/provision.ts';
import { assertError, startTestServer } from '../helpers/server.ts';
import { Agent, setUpPerson, type PageResponse } from '../auth/agent.ts';

const keyOf = (page: PageResponse) => /id="new-key" type="text" readonly value="(fpk_[\w-]+)"/.exec(page.text)?.[1];

t.test('API access', async (t) => {
  const s = await startTestServer(t);
  const admin = await setUpPerson(s, { role: 'owner' });
  const agent = new Agent(s.url);
  const signin = await agent.get('/app/signin');
  t.equal((await agent.post('/app/signin', { email: admin.email, password: admin.password }, signin)).status, 303);

  t.test('lists keys and clients of the workspace', async (t) => {
    const page = await agent.get('/app/access');
    t.equal(page.status, 200);
    t.match(page.text, /API access: Demo/);
    t.match(page.text, /Sign-in apps of this installation/);
    t.match(page.text, new RegExp(`Flowplan CLI <code>${admin.clientId}</code>`), 'the first-party client, read-only');
    t.notMatch(page.text, new RegExp(`/app/access/credentials/${admin.clientId}/delete`), 'which only the operator removes');
    const [demoKey] = await s.sql<{ id: string }[]>`select id from credentials where kind = 'key' order by created_at limit 1`;
    t.match(page.text, new RegExp(demoKey!.id), 'the Demo key');
    t.match(page.text, /<script src="\/app\/copy.js" defer><\/script>/, 'the copy button script is a file, not inline');
    t.notMatch(page.text, /<script>/);
    const script = await agent.get('/app/copy.js');
    t.equal(script.status, 200);
    t.match(script.headers.get('content-type'), /javascript/);
  });

  t.test('create a key: shown once, with the role and scopes chosen', async (t) => {
    const page = await agent.get('/app/access');
    const created = await agent.post('/app/access/keys', { name: 'Reporting', role: 'viewer', scope: ['flows:read', 'team:read'] }, page);
    t.equal(created.status, 201);
    const key = keyOf(created)!;
    t.match(key, /^fpk_/);
    t.match(created.text, /shown only once/);
    t.match(created.text, /data-copy="new-key" hidden>Copy<\/button>/, 'the copy button appears only with JavaScript');
    const me = await s.api('GET', '/v1/me', { token: key });
    t.match(me.body, { role: 'viewer', scopes: ['flows:read', 'team:read'], credentialName: 'Reporting' });
    const later = await agent.get('/app/access');
    t.notOk(later.text.includes(key), 'never shown again');
    t.match(later.text, /Reporting/);

    const none = await agent.post('/app/access/keys', { name: 'Nothing', role: 'member' }, later);
    t.equal(none.status, 400, 'no scope chosen');
    t.match(none.text, /at least one scope/);
    const badRole = await agent.post('/app/access/keys', { name: 'Boss', role: 'owner', scope: 'flows:read' }, later);
    t.equal(badRole.status, 400);
    const forged = await agent.post('/app/access/keys', { name: 'Forged', role: 'admin', scope: 'flows:read', csrf: 'x'.repeat(43) });
    t.equal(forged.status, 403, 'CSRF');
    const [count] = await s.sql<{ n: number }[]>`select count(*)::int as n from credentials where name in ('Nothing', 'Boss', 'Forged')`;
    t.equal(count!.n, 0, 'no refused form created a key');
  });

  t.test('rotate: a new key; the old one is revoked', async (t) => {
    const { id, key } = await createKey(s.sql, { workspaceId: s.workspaceId, role: 'member', scopes: ['flows:read'], name: 'Rotate me' });
    t.equal((await s.api('GET', '/v1/me', { token: key })).status, 200);
    const page = await agent.get('/app/access');
    const rotated = await agent.post(`/app/access/keys/${id}/rotate`, {}, page);
    t.equal(rotated.status, 200);
    const fresh = keyOf(rotated)!;
    t.not(fresh, key);
    assertError(t, await s.api('GET', '/v1/me', { token: key }), 401, 'CREDENTIAL_REVOKED', 'the old key');
    t.match((await s.api('GET', '/v1/me', { token: fresh })).body, { credentialName: 'Rotate me', role: 'member', scopes: ['flows:read'] });
  });

  t.test('delete: the key, or a client and every token it issued', async (t) => {
    const { id, key } = await createKey(s.sql, { workspaceId: s.workspaceId, role: 'member', scopes: ['flows:read'], name: 'Delete me' });
    const client = await createClient(s.sql, { workspaceId: s.workspaceId, role: 'member', scopes: ['flows:read'], name: 'Robot' });
    const issued = await s.api('POST', '/v1/oauth/token', {
      raw: new URLSearchParams({ grant_type: 'client_credentials', client_id: client.clientId, client_secret: client.clientSecret! }).toString(),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    t.equal((await s.api('GET', '/v1/me', { token: issued.body.access_token })).status, 200, 'cached as valid');
    const page = await agent.get('/app/access');
    for (const credential of [id, client.clientId]) {
      const deleted = await agent.post(`/app/access/credentials/${credential}/delete`, {}, page);
      t.equal(deleted.status, 303);
      t.equal(deleted.location, '/app/access');
    }
    assertError(t, await s.api('GET', '/v1/me', { token: key }), 401, 'CREDENTIAL_REVOKED', 'the key');
    assertError(t, await s.api('GET', '/v1/me', { token: issued.body.access_token }), 401, 'CREDENTIAL_REVOKED', "the client's token");
    const after = await agent.get('/app/access');
    t.notMatch(after.text, /Delete me|Robot/, 'gone from the list');

    const { id: elsewhere } = await createWorkspace(s.sql, { name: 'Elsewhere' });
    const foreign = await createKey(s.sql, { workspaceId: elsewhere, role: 'admin', scopes: ['flows:read'] });
    const refused = await agent.post(`/app/access/credentials/${foreign.id}/delete`, {}, after);
    t.equal(refused.status, 404, "another workspace's key");
    t.equal((await s.api('GET', '/v1/me', { token: foreign.key })).status, 200, 'untouched');
  });

  t.test('members see the page but cannot manage access', async (t) => {
    const member = await setUpPerson(s, { role: 'member' });
    const other = new Agent(s.url);
    await other.post('/app/signin', { email: member.email, password: member.password }, await other.get('/app/signin'));
    const page = await other.get('/app/access');
    t.equal(page.status, 403);
    t.match(page.text, /Only admins manage API keys/);
    t.match(page.text, /href="\/app">Back to your home page</, 'and a way back home');
    const create = await other.post('/app/access/keys', { name: 'Sneaky', role: 'admin', scope: 'flows:read' }, page);
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
});

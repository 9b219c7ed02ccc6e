/**
 * Issue 17, item 4: a first-party client signs in people of every workspace, so it belongs to
 * the installation. The admin of the workspace that registered it sees it read-only on the API
 * access page (no delete control; a forged delete is refused and changes nothing) and can end
 * their own workspace's sign-ins through it, nothing more; the operator removes it with
 * `flowplan client delete`.
 */
import t from 'tap';
import { createWorkspace } from '../../src/services/auth/provision.ts';
import { assertError, cli, startTestServer, type TestServer } from '../helpers/server.ts';
import { createPerson } from '../helpers/people.ts';
import { Agent, authorizePath, pkce, REDIRECT } from '../services/auth/agent.ts';
import { PASSWORD, registerClient, signIn, tokenEndpoint } from './oauth-people.ts';

const me = (s: TestServer, token: string) => s.api('GET', '/v1/me', { token });

t.test('first-party clients belong to the installation', async (t) => {
  const s = await startTestServer(t);
  const { id: a } = await createWorkspace(s.sql, { name: 'Workspace A' });
  const { id: b } = await createWorkspace(s.sql, { name: 'Workspace B' });
  const person = async (email: string, memberships: [string, 'owner' | 'admin' | 'member'][]) => {
    for (const [workspaceId, role] of memberships)
      await createPerson(s.sql, {
        email,
        name: email.split('@')[0]!,
        password: PASSWORD,
        workspaceId,
        role,
      });
    return email;
  };
  const alice = await person('alice@a.example', [[a, 'admin']]);
  const ann = await person('ann@a.example', [[a, 'member']]);
  const bob = await person('bob@b.example', [[b, 'member']]);
  const carl = await person('carl@both.example', [
    [a, 'member'],
    [b, 'member'],
  ]);
  const dana = await person('dana@both.example', [
    [a, 'member'],
    [b, 'member'],
  ]);
  // Workspace A's operator registered the sign-in app; people of B sign in through it too.
  const clientId = await registerClient(t, s, 'admin', a, 'Flowplan desktop');

  const annA = await signIn(t, s, clientId, ann, a);
  const bobB = await signIn(t, s, clientId, bob, b);
  const carlA = await signIn(t, s, clientId, carl, a);
  const carlB = await signIn(t, s, clientId, carl, b);
  for (const token of [annA, bobB, carlA, carlB])
    t.equal((await me(s, token.access)).status, 200, 'signed in');
  // Dana signed in to A, then moved her sign-in to B (org_id): her live pair sits in B, and
  // would take her back to A (issue 51, item 5).
  const danaSignin = await signIn(t, s, clientId, dana, a);
  const moved = await tokenEndpoint(s, {
    grant_type: 'refresh_token',
    refresh_token: danaSignin.refresh,
    client_id: clientId,
    org_id: b,
  });
  t.equal(moved.status, 200, 'moved to B');
  const danaB = { access: moved.body.access_token, refresh: moved.body.refresh_token };
  t.match((await me(s, danaB.access)).body, { workspaceId: b });

  const admin = new Agent(s.url);
  t.equal(
    (
      await admin.post(
        '/app/signin',
        { email: alice, password: PASSWORD },
        await admin.get('/app/signin'),
      )
    ).status,
    303,
  );

  t.test("A's admin sees the client read-only and cannot delete it", async (t) => {
    const page = await admin.get('/app/access');
    t.equal(page.status, 200);
    t.match(page.text, /API access: Workspace A/);
    t.match(page.text, new RegExp(`Flowplan desktop <code>${clientId}</code>`), 'listed');
    t.notMatch(
      page.text,
      new RegExp(`/app/access/credentials/${clientId}/delete`),
      'no delete control',
    );
    t.notMatch(page.text, /aria-label="Delete Flowplan desktop"/);
    t.match(
      page.text,
      new RegExp(`action="/app/access/clients/${clientId}/end-signins"`),
      'an end-sign-ins control',
    );

    const forged = await admin.post(`/app/access/credentials/${clientId}/delete`, {}, page);
    t.equal(forged.status, 403, 'a forged delete is refused');
    const [row] = await s.sql<
      { revokedAt: Date | null }[]
    >`select revoked_at from credentials where id = ${clientId}`;
    t.equal(row!.revokedAt, null, 'the client is not revoked');
    t.equal((await me(s, bobB.access)).status, 200, "Bob's token in B keeps working");
    t.equal((await me(s, annA.access)).status, 200, "and so do A's own");
    const authorize = await new Agent(s.url).get(
      authorizePath({
        client_id: clientId,
        redirect_uri: REDIRECT,
        response_type: 'code',
        code_challenge: pkce().challenge,
        code_challenge_method: 'S256',
      }),
    );
    t.equal(authorize.status, 302, 'people can still sign in through it');
  });

  t.test("A's admin ends A's sign-ins through it, and only those", async (t) => {
    const page = await admin.get('/app/access');
    const ended = await admin.post(`/app/access/clients/${clientId}/end-signins`, {}, page);
    t.equal(ended.status, 200, ended.text.slice(0, 300));
    t.match(
      ended.text,
      /role="status"[^>]*>Ended the sign-ins through Flowplan desktop in this workspace \(3 people signed out\)/,
    );

    assertError(t, await me(s, annA.access), 401, 'CREDENTIAL_REVOKED', "Ann's token in A");
    assertError(t, await me(s, carlA.access), 401, 'CREDENTIAL_REVOKED', "Carl's token in A");
    const annRefresh = await tokenEndpoint(s, {
      grant_type: 'refresh_token',
      refresh_token: annA.refresh,
      client_id: clientId,
    });
    t.equal(annRefresh.status, 400);
    t.equal(annRefresh.body.error.code, 'invalid_grant', "Ann's refresh token in A");

    // Dana's sign-in acted in A: it ends whole, though its live pair sat in B.
    const back = await tokenEndpoint(s, {
      grant_type: 'refresh_token',
      refresh_token: danaB.refresh,
      client_id: clientId,
      org_id: a,
    });
    t.equal(back.status, 400);
    t.equal(
      back.body.error?.code,
      'invalid_grant',
      "Dana's refresh token cannot bring her back to A",
    );
    const stay = await tokenEndpoint(s, {
      grant_type: 'refresh_token',
      refresh_token: danaB.refresh,
      client_id: clientId,
    });
    t.equal(stay.body.error?.code, 'invalid_grant', 'nor keep her in B: the family is ended');
    assertError(t, await me(s, danaB.access), 401, 'CREDENTIAL_REVOKED', "Dana's token in B");
    const [family] = await s.sql<{ revoked: boolean }[]>`select f.revoked_at is not null as revoked
      from token_families f join users u on u.id = f.user_id where u.email = ${dana}`;
    t.equal(family!.revoked, true, 'her token family is revoked');

    t.match((await me(s, bobB.access)).body, { workspaceId: b }, "Bob's token in B keeps working");
    t.match(
      (await me(s, carlB.access)).body,
      { workspaceId: b },
      "Carl's token in B keeps working",
    );
    const bobRefresh = await tokenEndpoint(s, {
      grant_type: 'refresh_token',
      refresh_token: bobB.refresh,
      client_id: clientId,
    });
    t.equal(bobRefresh.status, 200, "Bob's refresh token in B too");
    bobB.access = bobRefresh.body.access_token;

    const again = await signIn(t, s, clientId, ann, a);
    t.equal((await me(s, again.access)).status, 200, 'Ann can sign in again');
  });

  t.test("B's admin cannot delete it either", async (t) => {
    const bea = await person('bea@b.example', [[b, 'owner']]);
    const agent = new Agent(s.url);
    t.equal(
      (
        await agent.post(
          '/app/signin',
          { email: bea, password: PASSWORD },
          await agent.get('/app/signin'),
        )
      ).status,
      303,
    );
    const page = await agent.get('/app/access');
    t.match(page.text, new RegExp(clientId), "listed on B's page too, not only A's");
    t.notMatch(page.text, new RegExp(`/app/access/credentials/${clientId}/delete`));
    t.equal((await agent.post(`/app/access/credentials/${clientId}/delete`, {}, page)).status, 403);
    t.equal((await me(s, bobB.access)).status, 200);
  });

  t.test('the operator removes it: every sign-in through it ends', async (t) => {
    const removed = await cli(s.databaseUrl, ['client', 'delete', '--id', clientId, '--json']);
    t.equal(removed.code, 0, removed.stderr);
    t.same(JSON.parse(removed.stdout), { id: clientId, deleted: true });
    assertError(t, await me(s, bobB.access), 401, 'CREDENTIAL_REVOKED', "Bob's token in B");
    assertError(t, await me(s, carlB.access), 401, 'CREDENTIAL_REVOKED', "Carl's token in B");
    const page = await admin.get('/app/access');
    t.notMatch(page.text, new RegExp(clientId), 'gone from the page');
    const twice = await cli(s.databaseUrl, ['client', 'delete', '--id', clientId]);
    t.not(twice.code, 0, 'deleting it again fails');
    t.match(twice.stderr, /Client \S+ not found/);
  });
});

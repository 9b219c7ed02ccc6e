/**
 * Issue 17, item 10: a person token acts with the lesser of the person's role and the role of
 * the client they signed in through. A client the operator registered as viewer never hands
 * out a token that writes, whoever signs in; an admin client does not lift a member.
 * Everything through the public interface: the operator CLI registers the clients, the app's
 * pages sign the person in, the token endpoint issues and refreshes, the API answers.
 */
import t from 'tap';
import { createWorkspace } from '../../src/services/auth/provision.ts';
import { assertError, item, startTestServer } from '../helpers/server.ts';
import { createPerson } from '../helpers/people.ts';
import { PASSWORD, registerClient, signIn, tokenEndpoint } from './oauth-people.ts';
import type { Flow } from '../helpers/wire.ts';

t.test("a client's role caps the person tokens it issues", async (t) => {
  const s = await startTestServer(t);
  const viewerClient = await registerClient(t, s, 'viewer', s.workspaceId);
  const adminClient = await registerClient(t, s, 'admin', s.workspaceId);

  t.test('viewer client, admin person: reads, and every write is 403 FORBIDDEN', async (t) => {
    const email = 'ada.admin@example.com';
    await createPerson(s.sql, {
      email,
      name: 'Ada',
      password: PASSWORD,
      workspaceId: s.workspaceId,
      role: 'admin',
    });
    const { access, refresh } = await signIn(t, s, viewerClient, email);

    const me = await s.api('GET', '/v1/me', { token: access });
    t.equal(me.status, 200);
    t.match(
      me.body,
      { role: 'viewer', credentialId: viewerClient },
      'the token says what it may do',
    );
    t.equal((await s.api('GET', '/v1/flows', { token: access })).status, 200, 'it reads');
    const flows = await s.sql<{ n: number }[]>`select count(*)::int as n from flows`;
    assertError(
      t,
      await s.api('POST', '/v1/flows', {
        token: access,
        body: { name: 'Not through a viewer client' },
      }),
      403,
      'FORBIDDEN',
      'a write',
    );
    assertError(
      t,
      await s.api('POST', '/v1/team/invites', {
        token: access,
        body: { email: 'friend@example.com' },
      }),
      403,
      'FORBIDDEN',
      'an admin call',
    );
    t.same(
      await s.sql<{ n: number }[]>`select count(*)::int as n from flows`,
      flows,
      'nothing was written',
    );

    // A refresh issues the next token through the same client: capped just the same.
    const refreshed = await tokenEndpoint(s, {
      grant_type: 'refresh_token',
      refresh_token: refresh,
      client_id: viewerClient,
    });
    t.equal(refreshed.status, 200, refreshed.text);
    t.match((await s.api('GET', '/v1/me', { token: refreshed.body.access_token })).body, {
      role: 'viewer',
    });
    assertError(
      t,
      await s.api('POST', '/v1/flows', {
        token: refreshed.body.access_token,
        body: { name: 'Nor after a refresh' },
      }),
      403,
      'FORBIDDEN',
    );
  });

  t.test('admin client, member person: acts as member', async (t) => {
    const email = 'max.member@example.com';
    await createPerson(s.sql, {
      email,
      name: 'Max',
      password: PASSWORD,
      workspaceId: s.workspaceId,
      role: 'member',
    });
    const { access } = await signIn(t, s, adminClient, email);
    t.match((await s.api('GET', '/v1/me', { token: access })).body, { role: 'member' });
    t.equal(
      (await s.api('POST', '/v1/flows', { token: access, body: { name: 'A member may' } })).status,
      201,
      'a member write',
    );
    assertError(
      t,
      await s.api('POST', '/v1/team/invites', {
        token: access,
        body: { email: 'friend@example.com' },
      }),
      403,
      'FORBIDDEN',
      'not an admin call',
    );
  });

  t.test(
    'a guest with a commenter share comments only through a client that may write',
    async (t) => {
      const { id: home } = await createWorkspace(s.sql, { name: 'Guest home' });
      const email = 'gia.guest@example.com';
      await createPerson(s.sql, {
        email,
        name: 'Gia',
        password: PASSWORD,
        workspaceId: home,
        role: 'owner',
      });
      const flow = await s.api<Flow>('POST', '/v1/flows', {
        token: s.adminKey,
        body: { name: 'Shared', tasks: [{ name: 'Review' }] },
      });
      t.equal(flow.status, 201, flow.text);
      const taskId = item(flow.body.tasks).id as string;
      const shared = await s.api('POST', `/v1/flows/${flow.body.id}/shares`, {
        token: s.adminKey,
        body: { email, role: 'commenter' },
      });
      t.equal(shared.status, 201, shared.text);
      const comment = (token: string) =>
        s.api('POST', `/v1/flows/${flow.body.id}/tasks/${taskId}/comments`, {
          token,
          body: { body: 'Looks good' },
        });

      const throughViewer = await signIn(t, s, viewerClient, email, home);
      t.equal(
        (await s.api('GET', `/v1/flows/${flow.body.id}`, { token: throughViewer.access })).status,
        200,
        'the guest reads',
      );
      assertError(
        t,
        await comment(throughViewer.access),
        403,
        'FORBIDDEN',
        'but not a comment through a viewer client',
      );
      const throughAdmin = await signIn(t, s, adminClient, email, home);
      t.equal(
        (await comment(throughAdmin.access)).status,
        201,
        'through an admin client the share lets them comment',
      );
    },
  );
});

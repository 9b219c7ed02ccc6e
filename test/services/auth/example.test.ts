/**
 * The README's example (examples/oauth-pkce.ts, oauth4webapi as the client) end to end
 * against a real server: discovery, authorize, sign-in and consent through the app's forms,
 * the loopback callback, code exchange, /v1/me, rotation and reuse detection.
 */
import { createServer } from 'node:net';
import t from 'tap';
import { signIn } from '../../../examples/oauth-pkce.ts';
import { startTestServer } from '../../helpers/server.ts';
import { Agent, setUpPerson } from './agent.ts';
import type { Refusal } from '../../helpers/wire.ts';

/** The issuer must be the server's real address (`iss` is compared): pick a free port first. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

t.test('examples/oauth-pkce.ts signs a person in with oauth4webapi', async (t) => {
  const port = await freePort();
  const s = await startTestServer(t, { port }, { PORT: String(port) });
  t.equal(s.app.services.config.baseUrl, s.url);
  const person = await setUpPerson(s, { role: 'admin' });
  const agent = new Agent(s.url);

  const result = await signIn({
    issuer: s.url,
    clientId: person.clientId,
    scope: 'flows:read team:read',
    // The person's part, as their browser would do it: sign in, allow, follow the redirect home.
    openBrowser: async (url) => {
      const start = await agent.get(url.toString());
      const signinPage = await agent.get(start.location!);
      const request = new URL(start.location!, s.url).searchParams.get('request')!;
      const signedIn = await agent.post(
        '/app/signin',
        { email: person.email, password: person.password, request },
        signinPage,
      );
      const consent = await agent.get(signedIn.location!);
      const scopes = [...consent.text.matchAll(/name="scope" value="([^"]+)"/g)].map((m) => m[1]!);
      t.same(
        scopes,
        ['flows:read', 'team:read'],
        'the consent screen lists what the app asked for',
      );
      const decided = await agent.post(
        '/app/consent',
        { request, workspace: s.workspaceId, scope: scopes, decision: 'approve' },
        consent,
      );
      t.match(
        decided.location,
        /^http:\/\/127\.0\.0\.1:\d+\/callback\?code=/,
        'back to the loopback port the app listens on',
      );
      await fetch(decided.location!);
    },
  });

  t.match(result.me, { userId: person.userId, workspaceId: s.workspaceId, role: 'admin' });
  t.strictSame(result.me.scopes, ['flows:read', 'team:read'], 'exactly the scopes asked for');
  t.strictSame(
    result.me.orgs,
    [{ id: s.workspaceId, name: 'Demo', role: 'admin', plan: 'pro' }],
    'one workspace, Demo',
  );
  t.same(
    result.reuse,
    { status: 400, code: 'invalid_grant' },
    'reuse of the rotated refresh token',
  );
  const after = await s.api<Refusal>('GET', '/v1/me', { token: result.accessToken });
  t.equal(after.status, 401, 'the reuse revoked the newest access token too');
  t.equal(after.body.error.code, 'CREDENTIAL_REVOKED');
});

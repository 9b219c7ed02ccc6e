/**
 * `flowplan user set-password`: the new password signs in through the web app and the old one
 * no longer does; the person's web-app sessions, refresh tokens and person tokens end at once;
 * the hash is the same scrypt as every other password's.
 */
import t from 'tap';
import { verifyPassword } from '../../src/services/auth/secrets.ts';
import { Agent, pkce, REDIRECT, setUpPerson, signInAndConsent } from '../services/auth/agent.ts';
import { assertError, cli, startTestServer, type TestServer } from '../helpers/server.ts';
import { databaseLine } from './output.ts';
import type { Token } from '../helpers/wire.ts';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
// Person grants: their answers always hold a refresh token.
const token = (s: TestServer, fields: Record<string, string>) =>
  s.api<Required<Token>>('POST', '/v1/oauth/token', {
    raw: new URLSearchParams(fields).toString(),
    headers: FORM,
  });

async function signIn(
  s: TestServer,
  email: string,
  password: string,
): Promise<{ status: number; agent: Agent }> {
  const agent = new Agent(s.url);
  const page = await agent.get('/app/signin');
  return { status: (await agent.post('/app/signin', { email, password }, page)).status, agent };
}

t.test('user set-password', async (t) => {
  const s = await startTestServer(t);
  const person = await setUpPerson(s, { role: 'member' });
  const next = 'a brand new passphrase';

  // Signed in twice before the change: the web app, and an app holding a refresh token.
  const web = await signIn(s, person.email, person.password);
  t.equal(web.status, 303, 'signed in with the old password');
  t.equal((await web.agent.get('/app')).status, 200);
  const { verifier, challenge } = pkce();
  const callback = await signInAndConsent(new Agent(s.url), { ...person, challenge });
  const tokens = await token(s, {
    grant_type: 'authorization_code',
    client_id: person.clientId,
    code: callback.searchParams.get('code')!,
    code_verifier: verifier,
    redirect_uri: REDIRECT,
  });
  t.equal(tokens.status, 200);
  t.equal((await s.api('GET', '/v1/me', { token: tokens.body.access_token })).status, 200);

  const [changed, nobody] = await Promise.all([
    cli(s.databaseUrl, [
      'user',
      'set-password',
      '--email',
      person.email.toUpperCase(),
      '--password',
      next,
      '--json',
    ]),
    cli(s.databaseUrl, ['user', 'set-password', '--id', 'usr_nope', '--password', next]),
  ]);
  t.equal(changed.code, 0, changed.stderr);
  t.equal(changed.stderr, databaseLine(s.databaseUrl));
  t.same(
    JSON.parse(changed.stdout),
    { id: person.userId, sessionsEnded: 2, signinsEnded: 1 },
    'both web-app sessions (the sign-in form and the consent flow) and the one app sign-in ended',
  );
  t.notMatch(changed.stdout + changed.stderr, next, 'the password is not printed');
  t.equal(nobody.code, 1);
  t.match(nobody.stderr, /Account usr_nope not found/);

  const [row] = await s.sql<
    { passwordHash: string }[]
  >`select password_hash from users where id = ${person.userId}`;
  t.match(
    row!.passwordHash,
    /^scrypt\$131072\$8\$1\$/,
    'hashed with the scrypt of src/services/auth/secrets.ts, at its floor',
  );
  t.ok(await verifyPassword(next, row!.passwordHash));

  t.equal(
    (await web.agent.get('/app/access')).status,
    303,
    'the web-app session ended: back to sign-in',
  );
  assertError(
    t,
    await s.api('GET', '/v1/me', { token: tokens.body.access_token }),
    401,
    'CREDENTIAL_REVOKED',
    'the person token ended',
  );
  assertError(
    t,
    await token(s, {
      grant_type: 'refresh_token',
      refresh_token: tokens.body.refresh_token,
      client_id: person.clientId,
    }),
    400,
    'invalid_grant',
    'the refresh token ended',
  );

  t.equal(
    (await signIn(s, person.email, person.password)).status,
    401,
    'the old password no longer signs in',
  );
  const again = await signIn(s, person.email, next);
  t.equal(again.status, 303, 'the new one does');
  t.equal((await again.agent.get('/app')).status, 200);
});

/**
 * Invitations end to end: creating one through the API mails a single-use link (a real SMTP
 * server on loopback receives it); the link leads to sign-up, or sign-in for an existing
 * account; accepting joins the workspace with the invite's role. Used, expired, revoked and
 * replaced links say so.
 */
import t from 'tap';
import { startSmtp, type TestSmtp } from '../../helpers/smtp.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { Agent } from '../../services/auth/agent.ts';
import { createPerson } from '../../helpers/people.ts';
import {
  emailHtmlProblems,
  htmlLinks,
  plainTextAsSent,
  textLinks,
} from '../../helpers/mail-checks.ts';
import { sha256 } from '../../../src/services/auth/secrets.ts';
import type { InviteList, MemberList } from '../../helpers/wire.ts';

async function invite(
  s: TestServer,
  smtp: TestSmtp,
  email: string,
  role = 'member',
): Promise<{ status: number; token: string; link: string }> {
  const before = smtp.messages.filter((m) => m.to.includes(email)).length;
  const res = await s.api('POST', '/v1/team/invites', { token: s.adminKey, body: { email, role } });
  const [mail] = (await smtp.waitFor((m) => m.to.includes(email), { count: before + 1 })).slice(-1);
  const link = /https?:\/\/\S+\/invite\?token=[\w-]+/.exec(mail!.parsed.text!)![0];
  return { status: res.status, token: new URL(link).searchParams.get('token')!, link };
}

t.test('invitations', async (t) => {
  const smtp = await startSmtp(t);
  const s = await startTestServer(t, { smtpUrl: smtp.url });
  const members = async () =>
    (await s.api<MemberList>('GET', '/v1/team/members', { token: s.adminKey })).body.items as {
      email: string;
      role: string;
    }[];

  t.test(
    'the email reads well in any client: the link whole on its own line in the raw text part, exact everywhere',
    async (t) => {
      await invite(s, smtp, 'whole-link@example.com');
      const [mail] = smtp.messages.filter((m) => m.to.includes('whole-link@example.com'));
      const wire = plainTextAsSent(mail!);
      const [link] = textLinks(wire);
      const token = new URL(link!).searchParams.get('token')!;
      const [row] = await s.sql<
        { tokenHash: string }[]
      >`select token_hash from invites where email = 'whole-link@example.com'`;
      t.equal(
        sha256(token),
        row!.tokenHash,
        'the link found in the raw text part carries the issued token whole',
      );
      const expected = `${s.app.services.config.appUrl}/invite?token=${token}`;
      t.ok(wire.split('\n').includes(expected), 'the link is a line of its own as sent');
      t.same(textLinks(wire), [expected]);
      t.same(
        textLinks(mail!.parsed.text!),
        [expected],
        'the parsed plain text has exactly that link',
      );
      t.same(
        htmlLinks(mail!.parsed.html as string),
        [expected, expected],
        'the button and the spelled-out address',
      );
      t.same(
        emailHtmlProblems(mail!.parsed.html as string),
        [],
        'inline styles, table layout, no external assets',
      );
    },
  );

  t.test('the email carries a single-use link; sign-up joins with the invited role', async (t) => {
    const sent = await invite(s, smtp, 'newcomer@example.com', 'viewer');
    t.equal(sent.status, 201);
    const [mail] = smtp.messages.filter((m) => m.to.includes('newcomer@example.com'));
    t.match(mail!.parsed.subject, /invited to Demo/);
    t.ok(
      sent.link.startsWith(`${s.app.services.config.appUrl}/invite?token=inv_`),
      'a link into the app',
    );
    t.match(mail!.parsed.html, /<a href="[^"]+\/invite\?token=inv_/);
    // The link is whole in the plain-text part as it travels, not only once a client has
    // decoded it: quoted-printable would cut it with a soft line break at 76 characters.
    const plain = /Content-Type: text\/plain[^]*?\r?\n\r?\n([^]*?)\r?\n--/.exec(mail!.raw);
    t.match(
      mail!.raw,
      /Content-Type: text\/plain; charset=utf-8\r?\nContent-Transfer-Encoding: base64/i,
      'the text part is base64',
    );
    const decoded = Buffer.from(plain![1]!.replace(/\s+/g, ''), 'base64').toString('utf8');
    t.ok(
      decoded.split(/\s+/).includes(sent.link),
      'the exact link, on a line of its own, in the text as sent',
    );
    t.equal(
      /<a href="([^"]+\/invite\?token=[^"]+)"/.exec(mail!.parsed.html as string)![1],
      sent.link,
      'the HTML links to the same address',
    );
    const [row] = await s.sql<
      { tokenHash: string }[]
    >`select token_hash from invites where email = 'newcomer@example.com'`;
    t.not(row!.tokenHash, sent.token, 'stored as a hash only');

    const agent = new Agent(s.url);
    const page = await agent.get(`/app/invite?token=${sent.token}`);
    t.equal(page.status, 200);
    t.match(page.text, /Join Demo/);
    t.match(page.text, /<label for="name">Your name<\/label>/);
    const short = await agent.post(
      '/app/invite',
      { token: sent.token, mode: 'signup', name: 'Nia', password: 'short' },
      page,
    );
    t.equal(short.status, 400);
    t.match(
      short.text,
      /aria-describedby="password-hint invite-error"/,
      'the error is tied to the password field',
    );
    const joined = await agent.post(
      '/app/invite',
      { token: sent.token, mode: 'signup', name: 'Nia New', password: 'a long enough password' },
      page,
    );
    t.equal(joined.status, 303, joined.text);
    t.equal(joined.location, '/app', 'to the home page');
    t.ok(agent.jar.has('__Host-fp_session'), 'signed in');
    t.match(
      (await members()).find((m) => m.email === 'newcomer@example.com'),
      { role: 'viewer' },
    );
    const invites = await s.api<InviteList>('GET', '/v1/team/invites', { token: s.adminKey });
    t.match(
      invites.body.items.find((i: { email: string }) => i.email === 'newcomer@example.com'),
      { status: 'accepted' },
    );
    const home = await agent.get('/app/access');
    t.match(
      home.text,
      /Only admins manage API keys/,
      'a viewer lands on a page that says what they can do',
    );

    const reused = await new Agent(s.url).get(`/app/invite?token=${sent.token}`);
    t.equal(reused.status, 410);
    t.match(reused.text, /already used/);
    const again = await agent.post(
      '/app/invite',
      { token: sent.token, mode: 'signup', name: 'Nia Again', password: 'a long enough password' },
      page,
    );
    t.equal(again.status, 403, 'a second sign-up through a used link');
  });

  t.test('an existing account signs in to accept', async (t) => {
    await createPerson(s.sql, {
      email: 'known@example.com',
      name: 'Kim Known',
      password: 'kims own password',
    });
    const sent = await invite(s, smtp, 'known@example.com', 'admin');
    const agent = new Agent(s.url);
    const page = await agent.get(`/app/invite?token=${sent.token}`);
    t.match(page.text, /You have an account: sign in to accept/);
    t.notMatch(page.text, /Your name/);
    const wrong = await agent.post(
      '/app/invite',
      { token: sent.token, mode: 'signin', password: 'not it' },
      page,
    );
    t.equal(wrong.status, 401);
    const signup = await agent.post(
      '/app/invite',
      { token: sent.token, mode: 'signup', name: 'Imposter', password: 'a long enough password' },
      page,
    );
    t.equal(signup.status, 400, 'no second account for an existing email');
    const ok = await agent.post(
      '/app/invite',
      { token: sent.token, mode: 'signin', password: 'kims own password' },
      page,
    );
    t.equal(ok.status, 303);
    t.match(
      (await members()).find((m) => m.email === 'known@example.com'),
      { role: 'admin' },
    );
  });

  t.test('expired, revoked, replaced and unknown links say so', async (t) => {
    const expired = await invite(s, smtp, 'late@example.com');
    await s.sql`update invites set expires_at = now() - interval '1 minute' where email = 'late@example.com'`;
    const late = await new Agent(s.url).get(`/app/invite?token=${expired.token}`);
    t.equal(late.status, 410);
    t.match(late.text, /expired/);

    const revoked = await invite(s, smtp, 'withdrawn@example.com');
    const [row] = await s.sql<
      { id: string }[]
    >`select id from invites where email = 'withdrawn@example.com'`;
    t.equal(
      (await s.api('DELETE', `/v1/team/invites/${row!.id}`, { token: s.adminKey })).status,
      200,
    );
    const gone = await new Agent(s.url).get(`/app/invite?token=${revoked.token}`);
    t.equal(gone.status, 410);
    t.match(gone.text, /withdrawn/);

    const first = await invite(s, smtp, 'twice@example.com');
    const second = await invite(s, smtp, 'twice@example.com');
    t.equal(second.status, 200, 'the pending invite is answered again');
    t.not(second.token, first.token, 'with a fresh link');
    t.equal(
      (await new Agent(s.url).get(`/app/invite?token=${first.token}`)).status,
      404,
      'the earlier link stopped working',
    );
    t.equal((await new Agent(s.url).get(`/app/invite?token=${second.token}`)).status, 200);

    for (const token of ['inv_nothing', '', '<script>']) {
      const res = await new Agent(s.url).get(`/app/invite?token=${encodeURIComponent(token)}`);
      t.equal(res.status, 404, JSON.stringify(token));
      t.match(res.text, /not valid/);
    }
  });

  t.test('a mail server that refuses does not undo the invite', async (t) => {
    smtp.mode = 'reject';
    const res = await s.api('POST', '/v1/team/invites', {
      token: s.adminKey,
      body: { email: 'bounce@example.com' },
    });
    smtp.mode = 'accept';
    t.equal(res.status, 201);
  });

  t.test(
    'names hold no control or bidirectional character: a new name is refused, a stored one mailed on one line in reading order (issue 51, item 5)',
    async (t) => {
      const sent = await invite(s, smtp, 'override@example.com');
      const agent = new Agent(s.url);
      const page = await agent.get(`/app/invite?token=${sent.token}`);
      for (const name of ['Ada\u202Eevil', 'Ada\u009B2J']) {
        const refused = await agent.post(
          '/app/invite',
          { token: sent.token, mode: 'signup', name, password: 'a long enough password' },
          page,
        );
        t.equal(refused.status, 400, JSON.stringify(name));
        t.match(refused.text, /Your name must not contain (bidirectional|control)/, 'says why');
        t.match(refused.text, /id="name"[^>]*aria-describedby="invite-error" aria-invalid="true"/);
      }
      const [none] = await s.sql<
        { n: number }[]
      >`select count(*)::int as n from users where email = 'override@example.com'`;
      t.equal(none!.n, 0, 'no account made');

      // A workspace name stored before names were held to one line, with an override and a line separator.
      const [{ name: before } = { name: '' }] = await s.sql<
        { name: string }[]
      >`select name from workspaces where id = ${s.workspaceId}`;
      await s.sql`update workspaces set name = ${'Ac\u202Eme\u2028Labs'} where id = ${s.workspaceId}`;
      t.teardown(() => s.sql`update workspaces set name = ${before} where id = ${s.workspaceId}`);
      await invite(s, smtp, 'subject@example.com');
      const [mail] = smtp.messages.filter((m) => m.to.includes('subject@example.com'));
      t.equal(mail!.parsed.subject, 'You are invited to Acme Labs on flowplan');
      t.match(mail!.parsed.html, '<title>You are invited to Acme Labs on flowplan</title>');
    },
  );
});

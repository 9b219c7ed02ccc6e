/**
 * Sign-in and consent in a real Chromium: the authorize redirect, the forms driven by the
 * keyboard in tab order, the redirect back to a loopback client with the code, no CSP
 * violations (nothing inline), and the API access page's copy button. Screenshots go to
 * test-artifacts/.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { artifact, openBrowser } from '../../helpers/browser.ts';
import { startSmtp } from '../../helpers/smtp.ts';
import { startTestServer, item } from '../../helpers/server.ts';
import { authorizePath, pkce, setUpPerson } from '../../services/auth/agent.ts';
import type { Flow, MemberList, Preferences, Token } from '../../helpers/wire.ts';

t.test('sign-in and consent in Chromium', async (t) => {
  const browser = await openBrowser(t);
  if (!browser) return;
  const smtp = await startSmtp(t);
  const s = await startTestServer(t, { smtpUrl: smtp.url });
  const person = await setUpPerson(s, { role: 'admin' });

  // The native app's loopback listener.
  let received!: (url: URL) => void;
  const callback = new Promise<URL>((resolve) => (received = resolve));
  const listener = createServer((req, res) => {
    received(new URL(req.url!, 'http://127.0.0.1'));
    res.writeHead(200, { 'content-type': 'text/plain' }).end('signed in');
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => listener.close(() => resolve())));
  const redirectUri = `http://127.0.0.1:${(listener.address() as AddressInfo).port}/callback`;

  const context = await browser.newContext({ viewport: { width: 900, height: 900 } });
  const page = await context.newPage();
  const violations: string[] = [];
  page.on('console', (message) => {
    if (/Content Security Policy|Refused to/i.test(message.text())) violations.push(message.text());
  });

  const { verifier, challenge } = pkce();
  await page.goto(
    s.url +
      authorizePath({
        client_id: person.clientId,
        redirect_uri: redirectUri,
        response_type: 'code',
        code_challenge: challenge,
        code_challenge_method: 'S256',
        state: 'browser-state',
        scope: 'flows:read flows:write team:read',
      }),
  );
  t.equal(new URL(page.url()).pathname, '/app/signin');
  t.equal(await page.title(), 'Sign in · flowplan');
  await page.screenshot({ path: artifact('app-signin.png'), fullPage: true });

  // Keyboard only: email, Tab to password, Tab to the button, Enter.
  await page.focus('#email');
  await page.keyboard.type(person.email);
  await page.keyboard.press('Tab');
  // A string expression: the test is type-checked without the DOM library.
  const focused = () =>
    page.evaluate('document.activeElement.id || document.activeElement.textContent');
  t.equal(await focused(), 'password', 'Tab moves from email to password');
  await page.keyboard.type(person.password);
  await page.keyboard.press('Tab');
  t.equal(await focused(), 'Sign in', 'then to the Sign in button');
  await Promise.all([page.waitForURL(/\/app\/consent/), page.keyboard.press('Enter')]);

  const cookies = await context.cookies();
  const session = cookies.find((c) => c.name === '__Host-fp_session');
  t.ok(session, 'the browser kept the __Host- session cookie');
  t.equal(session?.httpOnly, true);
  t.equal(session?.sameSite, 'Lax');
  t.equal(session?.path, '/');

  t.equal(await page.textContent('h1'), 'Allow Flowplan CLI to use your account?');
  const boxes = await Promise.all(
    (await page.$$('input[name="scope"]')).map((box) => box.getAttribute('value')),
  );
  t.same(boxes, ['flows:read', 'flows:write', 'team:read'], 'exactly what the app asked for');
  await page.screenshot({ path: artifact('app-consent.png'), fullPage: true });
  // Untick flows:write with the keyboard, then allow.
  await page.focus('#scope-flows\\:write');
  await page.keyboard.press('Space');
  t.equal(await page.isChecked('#scope-flows\\:write'), false);
  await page.focus('button[value="approve"]');
  await page.keyboard.press('Enter');

  const back = await callback;
  t.equal(back.searchParams.get('state'), 'browser-state');
  const exchanged = await s.api<Token>('POST', '/v1/oauth/token', {
    raw: new URLSearchParams({
      grant_type: 'authorization_code',
      client_id: person.clientId,
      code: back.searchParams.get('code')!,
      code_verifier: verifier,
      redirect_uri: redirectUri,
    }).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  t.equal(exchanged.status, 200, exchanged.text);
  t.equal(exchanged.body.scope, 'flows:read team:read', 'only what was left ticked');

  // The API access page: a new key and its copy button (JavaScript from a file, so CSP allows it).
  // The redirect to the callback must finish first, or the next navigation interrupts it.
  await page.waitForURL((url) => url.pathname === '/callback');
  await page.goto(`${s.url}/app/access`);
  await page.fill('#key-name', 'From the browser');
  await page.check('#new-scope-flows\\:read');
  await page.click('text=Create key');
  await page.waitForSelector('#new-key');
  const key = await page.inputValue('#new-key');
  t.match(key, /^fpk_/);
  t.equal(
    await page.isVisible('button[data-copy="new-key"]'),
    true,
    'the copy button shows once the script runs',
  );
  await page.screenshot({ path: artifact('app-access.png'), fullPage: true });
  t.equal((await s.api('GET', '/v1/me', { token: key })).status, 200);

  // An invitation accepted in a fresh browser: the emailed link, the sign-up form, the workspace.
  await s.api('POST', '/v1/team/invites', {
    token: s.adminKey,
    body: { email: 'browser.invitee@example.com', role: 'member' },
  });
  const [mail] = await smtp.waitFor((m) => m.to.includes('browser.invitee@example.com'));
  const link = /https?:\/\/\S+\/invite\?token=[\w-]+/.exec(mail!.parsed.text!)![0];
  const invitee = await browser.newContext();
  const invitePage = await invitee.newPage();
  await invitePage.goto(`${s.url}/app/invite?token=${new URL(link).searchParams.get('token')}`);
  t.equal(await invitePage.textContent('h1'), 'Join Demo');
  await invitePage.fill('#name', 'Ivy Invitee');
  await invitePage.fill('#password', 'short');
  // The browser's own check (minlength) stops this first; submit past it to see the server's answer.
  await invitePage.$eval('form.stack', (form) => form.setAttribute('novalidate', ''));
  await Promise.all([
    invitePage.waitForLoadState(),
    invitePage.click('text=Create account and join'),
  ]);
  t.equal(
    await invitePage.getAttribute('#password', 'aria-describedby'),
    'password-hint invite-error',
    'the error is tied to the field',
  );
  await invitePage.screenshot({ path: artifact('app-invite-error.png'), fullPage: true });
  await invitePage.fill('#name', 'Ivy Invitee');
  await invitePage.fill('#password', 'a long enough password');
  await Promise.all([
    invitePage.waitForURL((url) => url.pathname === '/app'),
    invitePage.click('text=Create account and join'),
  ]);
  // A new member lands on a home page of their own: a welcome, what to do next, and Sign out.
  t.equal(await invitePage.textContent('h1'), 'Welcome, Ivy Invitee');
  t.match(await invitePage.textContent('main'), /You are a member of Demo/);
  t.match(await invitePage.textContent('main'), /Nothing is assigned to you/);
  t.equal(await invitePage.isVisible('button:has-text("Sign out")'), true, 'Sign out on the page');
  t.equal(
    await invitePage.isVisible('nav a:has-text("API access")'),
    false,
    'no API access link for a member',
  );
  const joined = await s.api<MemberList>('GET', '/v1/team/members', { token: s.adminKey });
  const ivy = item(
    joined.body.items.filter((m: { email: string }) => m.email === 'browser.invitee@example.com'),
  );
  t.match(ivy, { role: 'member', name: 'Ivy Invitee' });
  // Work assigned to her shows on the home page, each task linking to itself on its flow's page.
  const flow = (
    await s.api<Flow>('POST', '/v1/flows', {
      token: s.adminKey,
      body: {
        name: 'Office move',
        tasks: [
          { name: 'Pack the archive', assigneeId: ivy.id },
          { name: 'Book movers', assigneeId: ivy.id, after: [0] },
        ],
      },
    })
  ).body;
  await invitePage.reload();
  t.match(await invitePage.textContent('tbody tr td'), /^Pack the archive/, 'her ready task');
  t.notMatch(await invitePage.textContent('tbody'), /Book movers/, 'not the blocked one');
  const pack = flow.tasks.find((task) => task.name === 'Pack the archive');
  t.equal(
    await invitePage.getAttribute('tbody a', 'href'),
    `/app/flows/${flow.id}#task-${pack?.id ?? ''}`,
    "linked to the task on its flow's page",
  );
  await invitePage.screenshot({ path: artifact('app-home.png'), fullPage: true });
  // The notification settings page, from the home page: every setting, saved with the form.
  await Promise.all([
    invitePage.waitForURL(/\/app\/notifications/),
    invitePage.click('nav a:has-text("Notification settings")'),
  ]);
  t.equal(await invitePage.isChecked('#email'), true, 'the master switch, on by default');
  await invitePage.uncheck('#assigned');
  await invitePage.selectOption('#timezone', 'Europe/Berlin');
  await invitePage.selectOption('#digestHour', '7');
  await invitePage.check(`#mute-${flow.id}`);
  await Promise.all([invitePage.waitForLoadState(), invitePage.click('text=Save settings')]);
  t.equal(await invitePage.textContent('[role="status"]'), 'Saved.');
  t.equal(await invitePage.isChecked('#assigned'), false);
  await invitePage.screenshot({ path: artifact('app-settings.png'), fullPage: true });
  const preferences = await s.api('GET', `/v1/notifications/preferences?memberId=${ivy.id}`, {
    token: s.adminKey,
  });
  t.match(
    preferences.body,
    {
      email: true,
      events: { assigned: false, unlocked: true, digest: true },
      timezone: 'Europe/Berlin',
      digestHour: 7,
    },
    'as the API reads them',
  );
  const muted = await s.api<Preferences>(
    'GET',
    `/v1/notifications/preferences?memberId=${ivy.id}&flowId=${flow.id}`,
    { token: s.adminKey },
  );
  t.equal(muted.body.muted, true, 'the flow is muted');
  await invitee.close();

  // Tables keep their words whole, even on a phone: a one-word cell is one line; ids wrap only inside code.
  await page.setViewportSize({ width: 360, height: 740 });
  await page.goto(`${s.url}/app/access`);
  const split = await page.evaluate(`[...document.querySelectorAll('th, td')].filter((cell) => {
    const text = cell.textContent.trim();
    if (!text || /\\s/.test(text) || cell.querySelector('.visually-hidden')) return false;
    const range = document.createRange();
    range.selectNodeContents(cell);
    return new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size > 1;
  }).map((cell) => cell.textContent.trim())`);
  t.same(split, [], 'no one-word cell broken across lines at 360 px');
  t.equal(
    await page.evaluate('getComputedStyle(document.querySelector("td")).overflowWrap'),
    'break-word',
  );
  t.equal(
    await page.evaluate('getComputedStyle(document.querySelector("code")).overflowWrap'),
    'anywhere',
  );
  await page.screenshot({ path: artifact('app-access-narrow.png'), fullPage: true });

  t.same(violations, [], 'no Content-Security-Policy violations');
  await context.close();
});

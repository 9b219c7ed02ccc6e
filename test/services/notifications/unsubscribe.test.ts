/**
 * One-click unsubscribe (RFC 8058) from a real email's List-Unsubscribe link: GET only asks,
 * POST unsubscribes from that kind (a batch link: assigned and unlocked; a digest link: the
 * digest), events queued before are suppressed; in Chromium, the button does it.
 */
import t from 'tap';
import { idsByName, member, newFlow, ok } from '../../helpers/flows.ts';
import { openBrowser } from '../../helpers/browser.ts';
import { startSmtp } from '../../helpers/smtp.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import type { NotificationDeliveryList } from '../../helpers/wire.ts';

async function emailOf(s: TestServer, id: string): Promise<string> {
  const [row] = await s.sql`select email from users where id = ${id}`;
  return row!.email as string;
}

const prefs = async (s: TestServer, id: string) =>
  (await s.api('GET', `/v1/notifications/preferences?memberId=${id}`, { token: s.adminKey })).body;

t.test('unsubscribe links', async (t) => {
  const smtp = await startSmtp(t);
  // Jobs driven by hand (drain, then send), so "queued before the unsubscribe" is exact.
  const s = await startTestServer(t, {
    jobWorkers: false,
    smtpUrl: smtp.url,
    notifyQuietSeconds: 0,
    rateLimitPerMinute: 1_000_000,
    rateLimitBurst: 1_000_000,
  });
  const sendBatch = async (memberId: string) => {
    await s.app.services.jobs.drainOutbox();
    await s.app.services.notifications.batches.sendDue({ workspaceId: s.workspaceId, memberId });
  };
  const ada = await member(s, 'Ada');
  const flow = await newFlow(t, s, {
    name: 'Plan',
    tasks: [{ name: 'First' }, { name: 'Second' }, { name: 'Third' }],
  });
  const ids = idsByName(flow);
  await ok(t, s, 'POST', `/v1/flows/${flow.id}/tasks/${ids.First}/assign`, { assigneeId: ada });
  await sendBatch(ada);
  const adaAddress = await emailOf(s, ada);
  const [mail] = await smtp.waitFor((m) => m.to.includes(adaAddress));
  const link = /^<(.+)>$/.exec(mail!.header('list-unsubscribe')!)![1]!;
  const path = new URL(link).pathname;
  t.match(path, /^\/unsubscribe\/[A-Za-z0-9_-]{32}$/);

  t.test('GET only asks', async (t) => {
    const res = await fetch(s.url + path);
    t.equal(res.status, 200);
    t.match(res.headers.get('content-type'), /^text\/html/);
    t.match(res.headers.get('content-security-policy'), /frame-ancestors 'none'/);
    const body = await res.text();
    t.match(body, /<form method="post"><button type="submit">Unsubscribe<\/button><\/form>/);
    t.match(body, /assigned to you/);
    t.notMatch(body, await emailOf(s, ada), 'the full address is not shown');
    t.match(
      await prefs(s, ada),
      { email: true, events: { assigned: true, unlocked: true, digest: true } },
      'nothing changed: email on, every kind on',
    );
  });

  t.test(
    'events queued before the one-click POST are suppressed; the POST turns off assigned and unlocked only',
    async (t) => {
      await ok(t, s, 'POST', `/v1/flows/${flow.id}/tasks/${ids.Second}/assign`, {
        assigneeId: ada,
      });
      await s.app.services.jobs.drainOutbox();
      const res = await fetch(s.url + path, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'List-Unsubscribe=One-Click',
      });
      t.equal(res.status, 200);
      t.match(await res.text(), /You are unsubscribed/);
      t.match(await prefs(s, ada), {
        email: true,
        events: { assigned: false, unlocked: false, digest: true },
      });
      const again = await fetch(s.url + path, { method: 'POST' });
      t.equal(again.status, 200, 'repeating it is harmless');
      await sendBatch(ada);
      const rows = (
        await s.api<NotificationDeliveryList>(
          'GET',
          `/v1/notifications/deliveries?memberId=${ada}`,
          { token: s.adminKey },
        )
      ).body.items;
      t.strictSame(
        rows.map(({ status, suppressed, itemCount }: Record<string, unknown>) => ({
          status,
          suppressed,
          itemCount,
        })),
        [
          { status: 'skipped', suppressed: 1, itemCount: 0 },
          { status: 'sent', suppressed: 0, itemCount: 1 },
        ],
        'the two deliveries: the queued one skipped, the first one sent',
      );
      t.equal(smtp.messages.length, 1, 'no second email');
    },
  );

  t.test('a digest link turns off the digest only', async (t) => {
    const bob = await member(s, 'Bob');
    await ok(t, s, 'POST', `/v1/flows/${flow.id}/tasks/${ids.Third}/assign`, { assigneeId: bob });
    await s.app.services.notifications.digests.sendDigest(
      { workspaceId: s.workspaceId, memberId: bob, localDate: '2026-12-01' },
      new Date(),
    );
    const address = await emailOf(s, bob);
    const [digest] = await smtp.waitFor(
      (m) => m.to.includes(address) && m.parsed.subject!.startsWith('Your day'),
    );
    const digestPath = new URL(/^<(.+)>$/.exec(digest!.header('list-unsubscribe')!)![1]!).pathname;
    t.not(digestPath, path, 'per person and kind');
    t.equal((await fetch(s.url + digestPath, { method: 'POST' })).status, 200);
    t.match(await prefs(s, bob), {
      email: true,
      events: { assigned: true, unlocked: true, digest: false },
    });
  });

  t.test('unknown or malformed links: a 404 page, nothing changes', async (t) => {
    for (const p of [
      '/unsubscribe/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
      '/unsubscribe/bad%20token',
      '/unsubscribe/x',
    ]) {
      for (const method of ['GET', 'POST']) {
        const res = await fetch(s.url + p, { method });
        t.equal(res.status, 404, `${method} ${p}`);
        t.match(res.headers.get('content-type'), /^text\/html/);
      }
    }
  });

  t.test('in Chromium: the page asks, the button unsubscribes', async (t) => {
    const browser = await openBrowser(t);
    if (!browser) return;
    const cy = await member(s, 'Cy');
    await ok(t, s, 'POST', `/v1/flows/${flow.id}/tasks/${ids.First}/assign`, { assigneeId: cy });
    await sendBatch(cy);
    const address = await emailOf(s, cy);
    const [m] = await smtp.waitFor((x) => x.to.includes(address));
    const url = s.url + new URL(/^<(.+)>$/.exec(m!.header('list-unsubscribe')!)![1]!).pathname;
    const pageView = await browser.newPage();
    const violations: string[] = [];
    pageView.on(
      'console',
      (msg) =>
        /Content Security Policy|Refused to/i.test(msg.text()) && violations.push(msg.text()),
    );
    const styles: number[] = [];
    pageView.on(
      'response',
      (r) => r.url().includes('/assets/flowplan.css') && styles.push(r.status()),
    );
    await pageView.goto(url);
    t.equal(await pageView.locator('h1').textContent(), 'Unsubscribe?');
    t.match(
      await prefs(s, cy),
      { email: true, events: { assigned: true, unlocked: true, digest: true } },
      'opening the page changed nothing: email on, every kind on',
    );
    await pageView.getByRole('button', { name: 'Unsubscribe' }).click();
    await pageView.waitForSelector('text=You are unsubscribed');
    t.match(await prefs(s, cy), { events: { assigned: false, unlocked: false } });
    t.same(violations, [], 'no CSP violations');
    t.ok(
      styles.length > 0 && styles.every((status) => status === 200 || status === 304),
      'the stylesheet loads',
    );
  });
});

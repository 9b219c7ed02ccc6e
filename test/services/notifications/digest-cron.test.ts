/**
 * The digest through its schedule, end to end: nothing here calls the tick. pg-boss's
 * timekeeper finds the once-a-minute schedule due, turns it into a tick job, the tick queues
 * the member's digest, and the digest arrives by SMTP with its delivery row. (A bug once kept
 * every schedule from firing while the tick itself passed its tests.)
 */
import t from 'tap';
import { member, newFlow } from '../../helpers/flows.ts';
import { startSmtp } from '../../helpers/smtp.ts';
import { startTestServer, until } from '../../helpers/server.ts';
import type { NotificationDeliveryList } from '../../helpers/wire.ts';

t.test('the schedule sends a due digest on its own', async (t) => {
  const smtp = await startSmtp(t);
  const s = await startTestServer(t, {
    smtpUrl: smtp.url,
    cronCheckSeconds: 1,
    rateLimitPerMinute: 1_000_000,
    rateLimitBurst: 1_000_000,
  });
  const ada = await member(s, 'Ada');
  await newFlow(t, s, {
    name: 'Week',
    tasks: [{ name: 'Write the brief', assigneeId: ada, estimateHours: 3 }],
  });
  // A member since long before today's digest hour, which began an hour ago in her zone. In the
  // first hour of a UTC day that hour would be yesterday's (its digest is not sent late), so
  // then her zone is two hours ahead of UTC.
  await s.sql`update memberships set created_at = '2020-01-01' where user_id = ${ada}`;
  const utcHour = new Date().getUTCHours();
  const [timezone, aheadHours] = utcHour === 0 ? ['Etc/GMT-2', 2] : ['UTC', 0];
  const digestHour = utcHour + aheadHours - 1;
  const patched = await s.api('PATCH', `/v1/notifications/preferences?memberId=${ada}`, {
    token: s.adminKey,
    body: { timezone, digestHour },
  });
  t.equal(patched.status, 200, patched.text);

  const [row] = await s.sql`select email from users where id = ${ada}`;
  // This minute's tick may have run before the change above (it is due from the server's start):
  // then the next one, up to a minute away on a loaded machine plus its latency, sends it.
  const [mail] = await smtp.waitFor((m) => m.to.includes(row!.email as string), {
    timeoutMs: 150_000,
  });
  t.match(mail!.parsed.subject, /^Your day in flowplan: 1 ready/);
  // The row turns `sent` once the SMTP server has acknowledged the message.
  const deliveries = await until(
    async () =>
      (
        await s.api<NotificationDeliveryList>(
          'GET',
          `/v1/notifications/deliveries?memberId=${ada}`,
          { token: s.adminKey },
        )
      ).body.items,
    (items: { status: string }[]) => items[0]?.status !== 'claimed',
  );
  t.strictSame(
    deliveries.map(({ kind, status, itemCount, digestDate }: Record<string, unknown>) => ({
      kind,
      status,
      itemCount,
      digestDate,
    })),
    [
      {
        kind: 'digest',
        status: 'sent',
        itemCount: 1,
        digestDate: new Date(Date.now() + aheadHours * 3_600_000).toISOString().slice(0, 10),
      },
    ],
    'one digest, sent',
  );
  t.equal(deliveries.length, 1, 'one digest for the day');
});

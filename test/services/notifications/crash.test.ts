/**
 * A process killed between claiming a delivery and finishing the SMTP send: the claim stays,
 * nothing is sent twice — not by re-running the job, not by maintenance, which marks the
 * interrupted claim failed instead of resending it.
 */
import t from 'tap';
import { startApp } from '../../../src/compose.ts';
import { loadConfig } from '../../../src/platform/config.ts';
import { member, newFlow, ok } from '../../helpers/flows.ts';
import { startSmtp } from '../../helpers/smtp.ts';
import { startTestServer, until, item } from '../../helpers/server.ts';
import { startChildServer } from '../jobs/child.ts';
import type { NotificationDeliveryList } from '../../helpers/wire.ts';

t.test('killed mid-send: never sent twice', async (t) => {
  const smtp = await startSmtp(t);
  smtp.mode = 'stall';
  // This server takes the HTTP requests and runs no jobs; the child process does the sending.
  const s = await startTestServer(t, { jobWorkers: false, smtpUrl: smtp.url });
  const child = await startChildServer(t, s.databaseUrl, {
    SMTP_URL: smtp.url,
    NOTIFY_QUIET_SECONDS: '0',
  });
  const ada = await member(s, 'Ada');
  const flow = await newFlow(t, s, { name: 'Crash', tasks: [{ name: 'Only' }] });
  await ok(t, s, 'POST', `/v1/flows/${flow.id}/tasks/${item(flow.tasks).id}/assign`, {
    assigneeId: ada,
  });

  await until(async () => smtp.stalled > 0, Boolean);
  const [claimed] =
    await s.sql`select id, status from notification_deliveries where member_id = ${ada}`;
  t.equal(claimed?.status, 'claimed', 'claimed (committed) before the send began');
  await child.kill();

  // Another process takes over, with a working SMTP server.
  smtp.mode = 'accept';
  const next = await startApp(
    loadConfig(
      { LOG_LEVEL: 'silent' },
      { port: 0, databaseUrl: s.databaseUrl, smtpUrl: smtp.url, notifyQuietSeconds: 0 },
    ),
  );
  t.teardown(() => next.close());
  // pg-boss would re-run the killed job once it expires: run it now, as it would.
  await next.services.notifications.batches.sendDue({ workspaceId: s.workspaceId, memberId: ada });
  await next.services.notifications.maintain(0);
  const rows = (
    await s.api<NotificationDeliveryList>('GET', `/v1/notifications/deliveries?memberId=${ada}`, {
      token: s.adminKey,
    })
  ).body.items;
  t.matchOnlyStrict(
    rows.map(({ id, status, reason, attempt }: Record<string, unknown>) => ({
      id,
      status,
      reason,
      attempt,
    })),
    [{ id: claimed!.id, status: 'failed', reason: /interrupted/, attempt: 1 }],
    'one delivery: the interrupted one, failed',
  );
  t.equal(rows.length, 1, 'no second attempt');
  const [retries] = await s.sql<
    { n: number }[]
  >`select count(*)::int as n from pgboss.job where name = 'notify-retry'`;
  t.equal(retries!.n, 0, 'no retry was scheduled');
  t.equal(smtp.messages.length, 0, 'nothing was sent, and nothing twice');
  t.equal(
    (
      await s.api<NotificationDeliveryList>('GET', `/v1/notifications/deliveries?memberId=${ada}`, {
        token: s.adminKey,
      })
    ).body.items.length,
    1,
  );
});

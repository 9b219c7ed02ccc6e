/**
 * With no SMTP_URL, a batch email lands in the local maildir (`<data dir>/mail/new/`) and the
 * delivery records transport `outbox` as sent: what a newcomer sees after `npm start`.
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { member, newFlow, ok } from '../../helpers/flows.ts';
import { startTestServer, item } from '../../helpers/server.ts';
import type { NotificationDeliveryList } from '../../helpers/wire.ts';

t.test(
  'no SMTP_URL: the email is a file in the maildir, recorded as sent by the outbox transport',
  async (t) => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'flowplan-maildir-'));
    t.teardown(() => rm(dataDir, { recursive: true, force: true }));
    const s = await startTestServer(t, {
      jobWorkers: false,
      notifyQuietSeconds: 0,
      dataDir,
      smtpUrl: undefined,
    });
    const ada = await member(s, 'Ada');
    const flow = await newFlow(t, s, { name: 'Local', tasks: [{ name: 'Try it' }] });
    await ok(t, s, 'POST', `/v1/flows/${flow.id}/tasks/${item(flow.tasks).id}/assign`, {
      assigneeId: ada,
    });
    await s.app.services.jobs.drainOutbox();
    await s.app.services.notifications.batches.sendDue({
      workspaceId: s.workspaceId,
      memberId: ada,
    });
    const rows = (
      await s.api<NotificationDeliveryList>('GET', `/v1/notifications/deliveries?memberId=${ada}`, {
        token: s.adminKey,
      })
    ).body.items;
    t.strictSame(
      rows.map(({ kind, status, transport, itemCount }: Record<string, unknown>) => ({
        kind,
        status,
        transport,
        itemCount,
      })),
      [{ kind: 'batch', status: 'sent', transport: 'outbox', itemCount: 1 }],
      'one delivery, written to the outbox',
    );
    const files = await readdir(path.join(dataDir, 'mail', 'new'));
    t.equal(files.length, 1);
    const raw = await readFile(path.join(dataDir, 'mail', 'new', files[0]!), 'utf8');
    t.match(raw, /^Subject: Assigned to you: Try it$/m);
    t.match(raw, /^List-Unsubscribe-Post: List-Unsubscribe=One-Click$/m);
    t.match(raw, new RegExp(`^Message-ID: ${rows[0]?.messageId?.replace(/[.]/g, '\\.')}$`, 'mi'));
  },
);

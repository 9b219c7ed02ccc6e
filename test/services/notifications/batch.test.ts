/**
 * Batch emails against a real SMTP server on loopback: assignments and unblocked work are
 * grouped per person after the quiet period; what the person switched off, muted or
 * unsubscribed from by send time is dropped and counted; assigned-then-unassigned is never
 * mailed; the ceiling holds for a busy person; a refused send is retried as a new attempt.
 */
import t from 'tap';
import type { Test } from 'tap';
import { idsByName, member, newFlow, ok } from '../../helpers/flows.ts';
import { personToken } from '../../helpers/people.ts';
import { startSmtp, type ReceivedMail } from '../../helpers/smtp.ts';
import {
  emailHtmlProblems,
  htmlLinks,
  plainTextAsSent,
  textLinks,
} from '../../helpers/mail-checks.ts';
import { item, startTestServer, until, type TestServer } from '../../helpers/server.ts';
import type { NotificationDelivery, NotificationDeliveryList } from '../../helpers/wire.ts';

async function emailOf(s: TestServer, id: string): Promise<string> {
  const [row] = await s.sql`select email from users where id = ${id}`;
  return row!.email as string;
}

async function deliveries(s: TestServer, memberId: string): Promise<NotificationDelivery[]> {
  return (
    await s.api<NotificationDeliveryList>(
      'GET',
      `/v1/notifications/deliveries?memberId=${memberId}`,
      { token: s.adminKey },
    )
  ).body.items;
}

const assign = (
  t: Test,
  s: TestServer,
  flowId: string,
  taskId: string,
  assigneeId: string | null,
  token = s.adminKey,
) => ok(t, s, 'POST', `/v1/flows/${flowId}/tasks/${taskId}/assign`, { assigneeId }, 200, token);

t.test('batch emails', async (t) => {
  const smtp = await startSmtp(t);
  const s = await startTestServer(
    t,
    {
      smtpUrl: smtp.url,
      notifyQuietSeconds: 1,
      notifyMaxWaitSeconds: 3,
      notifyRetryBaseSeconds: 1,
      rateLimitPerMinute: 1_000_000,
      rateLimitBurst: 1_000_000,
    },
    { BASE_URL: 'https://plan.example.com' },
  );
  const mailTo = async (address: string, count = 1, timeoutMs = 30_000) =>
    smtp.waitFor((m) => m.to.includes(address), { count, timeoutMs });
  // A second server driven by hand (no workers; drain and send called by the test), so the
  // order of events, preference changes and the send is exact rather than a race with a timer.
  const hand = await startTestServer(
    t,
    {
      jobWorkers: false,
      smtpUrl: smtp.url,
      notifyQuietSeconds: 0,
      rateLimitPerMinute: 1_000_000,
      rateLimitBurst: 1_000_000,
    },
    { BASE_URL: 'https://plan.example.com' },
  );
  const { jobs, notifications } = hand.app.services;
  const sendBatch = async (memberId: string) => {
    await jobs.drainOutbox();
    await notifications.batches.sendDue({ workspaceId: hand.workspaceId, memberId });
  };

  t.test(
    'assignments and unblocked work arrive as one email with both alternatives and one-click unsubscribe',
    async (t) => {
      const ada = await member(hand, 'Ada <Lovelace>');
      const address = await emailOf(hand, ada);
      const flow = await newFlow(t, hand, {
        name: 'Launch & <b>party</b>',
        tasks: [{ name: 'Design' }, { name: 'Build <script>', after: [0] }, { name: 'Ship' }],
      });
      const ids = idsByName(flow);
      await assign(t, hand, flow.id, ids['Build <script>']!, ada);
      await assign(t, hand, flow.id, ids.Ship!, ada);
      await ok(t, hand, 'POST', `/v1/flows/${flow.id}/tasks/${ids.Design}/start`);
      await ok(t, hand, 'POST', `/v1/flows/${flow.id}/tasks/${ids.Design}/complete`);
      await sendBatch(ada);
      const [mail] = await mailTo(address);
      const m = mail!;
      t.equal(m.parsed.subject, '2 tasks assigned to you, 1 task ready to start');
      t.match(
        m.parsed.text,
        /Assigned to you:\n {2}- Build <script> \(Launch & <b>party<\/b>\)\n {4}\S+\n {2}- Ship/,
      );
      t.match(m.parsed.text, /ready to start:\n {2}- Build <script>/);
      t.match(
        m.parsed.html,
        /<strong>Build &lt;script&gt;<\/strong><\/a> in Launch &amp; &lt;b&gt;party&lt;\/b&gt;/,
      );
      t.notMatch(m.parsed.html, /<script>|<b>party/, 'user text never becomes markup');
      t.match(m.parsed.html, /Hello Ada &lt;Lovelace&gt;/);
      t.equal(m.parsed.from?.value[0]?.address, 'notifications@plan.example.com');
      t.match(
        m.header('list-unsubscribe'),
        /^<https:\/\/plan\.example\.com\/unsubscribe\/[A-Za-z0-9_-]{32}>$/,
      );
      t.equal(m.header('list-unsubscribe-post'), 'List-Unsubscribe=One-Click');
      // The footer links to the app's settings page (no API call named) and keeps the unsubscribe link.
      const unsubscribe = /^<(.+)>$/.exec(m.header('list-unsubscribe')!)![1]!;
      const settings = `https://plan.example.com/app/notifications?workspace=${hand.workspaceId}`;
      // Each task links to itself on its flow's page in the app, in the order listed.
      const onPage = (name: string) =>
        `https://plan.example.com/app/flows/${flow.id}#task-${ids[name]}`;
      const links = [
        onPage('Build <script>'),
        onPage('Ship'),
        onPage('Build <script>'),
        settings,
        unsubscribe,
      ];
      t.same(
        textLinks(plainTextAsSent(m)),
        links,
        'each link whole on a line of the raw text part',
      );
      t.same(textLinks(m.parsed.text!), links);
      t.same(htmlLinks(m.parsed.html as string), links);
      t.notMatch(m.parsed.text, /PATCH|\/v1\//, 'no API call named');
      t.same(
        emailHtmlProblems(m.parsed.html as string),
        [],
        'inline styles, table layout, no external assets',
      );
      const rows = await until(
        () => deliveries(hand, ada),
        (r) => r[0]?.status === 'sent',
      );
      t.equal(rows.length, 1, 'one email for three events');
      t.hasStrict(rows[0], {
        kind: 'batch',
        status: 'sent',
        itemCount: 3,
        suppressed: 0,
        transport: 'smtp',
        attempt: 1,
        subject: m.parsed.subject,
      });
      t.strictSame(item(rows).flowIds, [flow.id], 'the one flow the events came from');
      t.equal(
        item(rows).messageId,
        m.parsed.messageId,
        'the delivery names the Message-ID that arrived',
      );
    },
  );

  t.test(
    'assigned then unassigned within the window is not mailed; nor is your own assignment',
    async (t) => {
      const bob = await member(hand, 'Bob');
      const address = await emailOf(hand, bob);
      const flow = await newFlow(t, hand, {
        name: 'Window',
        tasks: [{ name: 'Fleeting' }, { name: 'Passing' }, { name: 'Mine' }, { name: 'Kept' }],
      });
      const ids = idsByName(flow);
      await assign(t, hand, flow.id, ids.Fleeting!, bob);
      await jobs.drainOutbox(); // queued in one drain, unassigned in the next
      await assign(t, hand, flow.id, ids.Fleeting!, null);
      await assign(t, hand, flow.id, ids.Passing!, bob);
      await assign(t, hand, flow.id, ids.Passing!, null); // both within one drain
      await assign(t, hand, flow.id, ids.Mine!, bob, await personToken(hand, bob));
      await assign(t, hand, flow.id, ids.Kept!, bob);
      await sendBatch(bob);
      const [mail] = await mailTo(address);
      t.equal(mail!.parsed.subject, 'Assigned to you: Kept');
      t.notMatch(mail!.parsed.text, /Fleeting|Passing|Mine/);
      t.strictSame(
        (
          await until(
            () => deliveries(hand, bob),
            (r) => r[0]?.status === 'sent',
          )
        ).map(({ status, itemCount }) => ({ status, itemCount })),
        [{ status: 'sent', itemCount: 1 }],
        'one delivery, of the one kept assignment',
      );
    },
  );

  t.test(
    'switched off, muted or unsubscribed by send time: dropped and counted in suppressed',
    async (t) => {
      const cy = await member(hand, 'Cy');
      const gus = await member(hand, 'Gus');
      const a = await newFlow(t, hand, { name: 'Loud', tasks: [{ name: 'L1' }, { name: 'L2' }] });
      const b = await newFlow(t, hand, { name: 'Quiet', tasks: [{ name: 'Q1' }] });
      await assign(t, hand, a.id, idsByName(a).L1!, cy);
      await assign(t, hand, a.id, idsByName(a).L2!, cy);
      await assign(t, hand, a.id, idsByName(a).L1!, gus);
      await assign(t, hand, b.id, idsByName(b).Q1!, gus);
      await jobs.drainOutbox();
      // Queued; now Cy switches email off and Gus mutes one flow, before the batch goes.
      await ok(t, hand, 'PATCH', `/v1/notifications/preferences?memberId=${cy}`, { email: false });
      await ok(t, hand, 'PATCH', `/v1/notifications/preferences?memberId=${gus}&flowId=${a.id}`, {
        muted: true,
      });
      await notifications.batches.sendDue({ workspaceId: hand.workspaceId, memberId: cy });
      await notifications.batches.sendDue({ workspaceId: hand.workspaceId, memberId: gus });
      t.strictSame(
        (await deliveries(hand, cy)).map(({ kind, status, itemCount, suppressed }) => ({
          kind,
          status,
          itemCount,
          suppressed,
        })),
        [{ kind: 'batch', status: 'skipped', itemCount: 0, suppressed: 1 }],
        'L1 went to Gus: only L2 was queued for Cy',
      );
      t.strictSame(
        (await deliveries(hand, gus)).map(({ status, itemCount, suppressed, flowIds }) => ({
          status,
          itemCount,
          suppressed,
          flowIds,
        })),
        [{ status: 'sent', itemCount: 1, suppressed: 1, flowIds: [b.id] }],
        'one delivery to Gus: Q1 sent, the muted L1 suppressed',
      );
      const cyAddress = await emailOf(hand, cy);
      t.notOk(
        smtp.messages.some((x) => x.to.includes(cyAddress)),
        'nothing reached Cy',
      );
      const [mail] = await mailTo(await emailOf(hand, gus));
      t.equal(mail!.parsed.subject, 'Assigned to you: Q1');

      // Muted before the events: the same, with workers running.
      const dee = await member(s, 'Dee');
      const c = await newFlow(t, s, { name: 'Loud too', tasks: [{ name: 'C1' }] });
      const d = await newFlow(t, s, { name: 'Quiet too', tasks: [{ name: 'D1' }] });
      await ok(t, s, 'PATCH', `/v1/notifications/preferences?memberId=${dee}&flowId=${d.id}`, {
        muted: true,
      });
      await assign(t, s, d.id, idsByName(d).D1!, dee);
      await assign(t, s, c.id, idsByName(c).C1!, dee);
      const [deeMail] = await mailTo(await emailOf(s, dee));
      t.equal(deeMail!.parsed.subject, 'Assigned to you: C1');
      t.strictSame(
        (
          await until(
            () => deliveries(s, dee),
            (r) => r[0]?.status === 'sent',
          )
        ).map(({ status, itemCount, suppressed, flowIds }) => ({
          status,
          itemCount,
          suppressed,
          flowIds,
        })),
        [{ status: 'sent', itemCount: 1, suppressed: 1, flowIds: [c.id] }],
        'one delivery to Dee: C1 sent, the muted D1 suppressed',
      );
    },
  );

  t.test('a busy person still gets mail: the ceiling caps the wait', async (t) => {
    const eve = await member(s, 'Eve');
    const flow = await newFlow(t, s, {
      name: 'Busy',
      tasks: Array.from({ length: 12 }, (_, i) => ({ name: `B${i}` })),
    });
    let firstMailAt = 0;
    const address = await emailOf(s, eve);
    void mailTo(address).then(() => (firstMailAt = Date.now()));
    // A new event every 0.5 s keeps the 1 s quiet period from ever passing; the 3 s ceiling sends anyway.
    for (const task of flow.tasks) {
      await assign(t, s, flow.id, task.id, eve);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const lastEventAt = Date.now();
    await mailTo(address);
    t.ok(
      firstMailAt > 0 && firstMailAt < lastEventAt,
      'the first mail arrived while events kept coming',
    );
    // The item lines only: the footer's opaque unsubscribe link may hold "B" and a digit too.
    const mentionedIn = () =>
      smtp.messages
        .filter((m) => m.to.includes(address))
        .flatMap((m: ReceivedMail) =>
          [...m.parsed.text!.matchAll(/^ {2}- (B\d+) \(Busy\)$/gm)].map((match) => match[1]!),
        );
    const mentioned = await until(
      async () => mentionedIn(),
      (list) => list.length >= 12,
    );
    t.ok(smtp.messages.filter((m) => m.to.includes(address)).length >= 2, 'more than one batch');
    t.same(new Set(mentioned).size, 12, 'every assignment mailed once across the batches');
    t.equal(mentioned.length, 12);
  });

  t.test(
    'a refused send is failed, then retried as a new attempt with the same message',
    async (t) => {
      const fay = await member(s, 'Fay');
      const flow = await newFlow(t, s, { name: 'Retry', tasks: [{ name: 'R' }] });
      smtp.mode = 'reject';
      await assign(t, s, flow.id, item(flow.tasks).id, fay);
      const failed = await until(
        () => deliveries(s, fay),
        (r) => r[0]?.status === 'failed',
      );
      smtp.mode = 'accept';
      t.match(failed[0], { status: 'failed', attempt: 1, reason: /554|rejected/ });
      const [mail] = await mailTo(await emailOf(s, fay));
      const rows = await until(
        () => deliveries(s, fay),
        (r) => r[0]?.status === 'sent',
      );
      t.strictSame(
        rows.map(({ status, attempt, retryOf }) => ({ status, attempt, retryOf })),
        [
          { status: 'sent', attempt: 2, retryOf: item(failed).id },
          { status: 'failed', attempt: 1, retryOf: null },
        ],
        'the two attempts, newest first',
      );
      t.equal(mail!.parsed.messageId, failed[0]?.messageId, 'the retry is the same message');
    },
  );

  t.test(
    'a retry job names the workspace; one queued before it did (by an earlier version) still runs',
    async (t) => {
      const gus = await member(hand, 'Gus');
      const flow = await newFlow(t, hand, { name: 'Old job', tasks: [{ name: 'O' }] });
      await assign(t, hand, flow.id, item(flow.tasks).id, gus);
      smtp.mode = 'reject';
      t.teardown(() => {
        smtp.mode = 'accept';
      });
      await sendBatch(gus);
      const failed = item(
        await until(
          () => deliveries(hand, gus),
          (r) => r[0]?.status === 'failed',
        ),
      );
      const queued = await hand.sql<{ data: unknown }[]>`select data from pgboss.job
        where name = 'notify-retry' and data->>'deliveryId' = ${failed.id}`;
      t.strictSame(
        queued.map((job) => job.data),
        [{ deliveryId: failed.id, workspaceId: hand.workspaceId }],
        'the job carries the delivery and its workspace',
      );
      smtp.mode = 'accept';
      // The job data an earlier version queued: the delivery's id alone (this server runs no
      // workers, so the job queued above stays queued and the handler is called as pg-boss would).
      await notifications.deliveries.retry({ deliveryId: failed.id });
      const [mail] = await mailTo(await emailOf(hand, gus));
      const rows = await deliveries(hand, gus);
      t.strictSame(
        rows.map(({ status, attempt, retryOf }) => ({ status, attempt, retryOf })),
        [
          { status: 'sent', attempt: 2, retryOf: failed.id },
          { status: 'failed', attempt: 1, retryOf: null },
        ],
        'retried as a new attempt, found by its id alone',
      );
      t.equal(mail?.parsed.messageId, failed.messageId, 'the same message');
      await notifications.deliveries.retry({
        deliveryId: failed.id,
        workspaceId: hand.workspaceId,
      });
      t.equal((await deliveries(hand, gus)).length, 2, 'a second run of the job adds nothing');
    },
  );
});

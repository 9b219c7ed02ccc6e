/**
 * The digest: GET /v1/notifications/digest (every section, counts before the caps, item
 * fields, shared flows from another workspace), and the scheduled send at digestHour in the
 * member's zone on both sides of a DST change (an injected clock, no sleeping), spread over
 * the hour, never empty, at most once per local day.
 */
import t from 'tap';
import { createKey, createWorkspace } from '../../../src/services/auth/provision.ts';
import { SCOPES } from '../../../src/services/auth/principal.ts';
import { spreadSeconds } from '../../../src/services/notifications/digest.job.ts';
import { idsByName, member, newFlow, ok } from '../../helpers/flows.ts';
import { startSmtp } from '../../helpers/smtp.ts';
import {
  emailHtmlProblems,
  htmlLinks,
  plainTextAsSent,
  textLinks,
} from '../../helpers/mail-checks.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { createPerson } from '../../helpers/people.ts';
import type { Digest, Flow, NotificationDeliveryList } from '../../helpers/wire.ts';

const CAP = 10;

async function emailOf(s: TestServer, id: string): Promise<string> {
  const [row] = await s.sql`select email from users where id = ${id}`;
  return row!.email as string;
}

t.test('digest', async (t) => {
  const smtp = await startSmtp(t);
  // The schedule is driven by the test's clock: no job workers here.
  const s = await startTestServer(t, {
    jobWorkers: false,
    smtpUrl: smtp.url,
    rateLimitPerMinute: 1_000_000,
    rateLimitBurst: 1_000_000,
  });
  const { digests } = s.app.services.notifications;
  const ada = await member(s, 'Ada');
  const bob = await member(s, 'Bob');
  // The schedule only considers people who were members before the digest hour began.
  const joinedLongAgo = (id: string) =>
    s.sql`update memberships set created_at = '2020-01-01' where user_id = ${id}`;

  t.test('the builder: every section, counts before the caps, shared flows included', async (t) => {
    const flow = await newFlow(t, s, {
      name: 'Late',
      dueDate: '2020-01-01',
      tasks: [
        { name: 'Mine ready', assigneeId: ada, estimateHours: 6 },
        { name: 'Mine started', assigneeId: ada },
        { name: 'Bob first', assigneeId: bob },
        { name: 'Mine waiting', assigneeId: ada, after: [2] },
        { name: 'Nobody', estimateHours: 3 },
        { name: 'Finished' },
      ],
    });
    const ids = idsByName(flow);
    await ok(t, s, 'POST', `/v1/flows/${flow.id}/tasks/${ids['Mine started']}/start`);
    await ok(t, s, 'POST', `/v1/flows/${flow.id}/tasks/${ids.Finished}/start`);
    await ok(t, s, 'POST', `/v1/flows/${flow.id}/tasks/${ids.Finished}/complete`);
    const many = await newFlow(t, s, {
      name: 'Many',
      tasks: Array.from({ length: 12 }, (_, i) => ({ name: `M${i}`, assigneeId: ada })),
    });

    // A flow of another workspace, shared with Ada's address.
    const other = await createWorkspace(s.sql, { name: 'Partner' });
    const { key } = await createKey(s.sql, {
      workspaceId: other.id,
      role: 'admin',
      scopes: [...SCOPES],
    });
    const shared = (
      await s.api<Flow>('POST', '/v1/flows', {
        token: key,
        body: { name: 'Partner plan', tasks: [{ name: 'Their open task', estimateHours: 2 }] },
      })
    ).body;
    t.equal(
      (
        await s.api('POST', `/v1/flows/${shared.id}/shares`, {
          token: key,
          body: { email: await emailOf(s, ada) },
        })
      ).status,
      201,
    );
    const hidden = (
      await s.api<Flow>('POST', '/v1/flows', {
        token: key,
        body: { name: 'Not shared', tasks: [{ name: 'Secret' }] },
      })
    ).body;

    const res = await s.api<Digest>('GET', `/v1/notifications/digest?memberId=${ada}`, {
      token: s.adminKey,
    });
    t.equal(res.status, 200, res.text);
    const d = res.body;
    t.equal(d.memberId, ada);
    t.equal(d.wouldSend, true);
    t.strictSame(d.counts, {
      ready: 13,
      inProgress: 1,
      blocked: 1,
      available: 2,
      completed: 1,
      atRisk: 1,
    });
    t.equal(d.ready.length, CAP, 'capped; counts has the total');
    t.ok(
      d.ready.every((i) => i.questId === many.id || i.nodeId === ids['Mine ready']),
      'only her ready work',
    );
    t.strictSame(Object.keys(d.inProgress[0] ?? {}).sort(), [
      'criticalPath',
      'hours',
      'nodeId',
      'nodeTitle',
      'questId',
      'questName',
    ]);
    t.matchOnlyStrict(
      d.inProgress,
      [
        {
          questId: flow.id,
          questName: 'Late',
          nodeId: ids['Mine started'],
          nodeTitle: 'Mine started',
          hours: null,
          criticalPath: Boolean,
        },
      ],
      'one task in progress',
    );
    // The cap keeps Many's twelve, none estimated (this read once fell back to a made-up row
    // when Late's estimated task was not among them, and so checked nothing).
    t.strictSame(
      d.ready.map((i) => i.hours),
      Array(CAP).fill(null),
      'the ready tasks shown carry no estimate',
    );
    t.strictSame(
      d.blocked.map(({ nodeId, nodeTitle, questName }: Record<string, unknown>) => ({
        nodeId,
        nodeTitle,
        questName,
      })),
      [{ nodeId: ids['Mine waiting'], nodeTitle: 'Mine waiting', questName: 'Late' }],
      'one blocked task',
    );
    t.same(
      d.available.map((i) => i.nodeTitle).sort(),
      ['Nobody', 'Their open task'],
      'unassigned ready work, shared flow included',
    );
    t.match(
      d.available.find((i) => i.nodeTitle === 'Their open task'),
      { questId: shared.id, questName: 'Partner plan', hours: 2, criticalPath: true },
    );
    t.matchOnlyStrict(
      d.completed.map(({ nodeId, nodeTitle, questId, completedAt }: Record<string, unknown>) => ({
        nodeId,
        nodeTitle,
        questId,
        completedAt,
      })),
      [{ nodeId: ids.Finished, nodeTitle: 'Finished', questId: flow.id, completedAt: String }],
      'one completed task',
    );
    t.matchOnlyStrict(
      d.atRisk.map(({ questId, questName, projectedFinish }: Record<string, unknown>) => ({
        questId,
        questName,
        projectedFinish,
      })),
      [{ questId: flow.id, questName: 'Late', projectedFinish: /^\d{4}-\d\d-\d\d$/ }],
      'one flow at risk',
    );
    t.notMatch(JSON.stringify(d), hidden.id, 'flows not shared with her stay out');

    const bobs = (
      await s.api<Digest>('GET', `/v1/notifications/digest?memberId=${bob}`, { token: s.adminKey })
    ).body;
    t.hasStrict(
      bobs.counts,
      { ready: 1, available: 1, blocked: 0 },
      "the shared flow is Ada's, not Bob's",
    );
    t.equal(
      (await s.api('GET', `/v1/notifications/digest?memberId=usr_nobody`, { token: s.adminKey }))
        .status,
      404,
    );
  });

  t.test("at digestHour in the member's zone, on both sides of a DST change", async (t) => {
    const cases = [
      // Europe/Berlin leaves summer time on 2026-10-25: 08:00 local is 06:00Z before, 07:00Z after.
      {
        zone: 'Europe/Berlin',
        hour: 8,
        days: [
          ['2026-10-24', '06:00'],
          ['2026-10-26', '07:00'],
        ],
      },
      // America/New_York leaves it on 2026-11-01: 08:00 local is 12:00Z before, 13:00Z after.
      {
        zone: 'America/New_York',
        hour: 8,
        days: [
          ['2026-10-31', '12:00'],
          ['2026-11-02', '13:00'],
        ],
      },
      // Spring forward in Berlin (2026-03-29): 02:00 local does not exist; the digest goes at 03:00 CEST (01:00Z).
      // Every spread offset has passed when the clock jumps, so it goes at once.
      { zone: 'Europe/Berlin', hour: 2, days: [['2026-03-29', '01:00']], gap: true },
    ] as const;
    for (const { zone, hour, days, ...rest } of cases) {
      const person = await member(s, `In ${zone}`);
      await joinedLongAgo(person);
      await ok(t, s, 'PATCH', `/v1/notifications/preferences?memberId=${person}`, {
        timezone: zone,
        digestHour: hour,
      });
      const offset = spreadSeconds(s.workspaceId, person);
      for (const [day, utc] of days) {
        const hourStart = Date.parse(`${day}T${utc}:00Z`);
        const due = new Date(hourStart + ('gap' in rest ? 0 : offset * 1000));
        const picked = async (at: Date) =>
          (await digests.tick(at)).filter((j) => j.memberId === person);
        t.same(
          await picked(new Date(due.getTime() - 60_000)),
          [],
          `${zone} ${day}: not a minute before its time`,
        );
        const jobs = await picked(new Date(due.getTime() + 1000));
        t.same(
          jobs.map((j) => j.localDate),
          [day],
          `${zone} ${day}: due at ${due.toISOString()} (local ${hour}:00 + ${offset} s)`,
        );
        await digests.sendDigest(jobs[0]!, new Date());
        t.same(
          await picked(new Date(due.getTime() + 3_600_000)),
          [],
          `${zone} ${day}: once per local day`,
        );
      }
    }
  });

  t.test(
    'someone who joins after the hour waits for the next day; past the catch-up window a day is skipped',
    async (t) => {
      const late = await member(s, 'Late joiner');
      await s.sql`update memberships set created_at = '2026-12-02T09:30:00Z' where user_id = ${late}`;
      const picked = async (at: string) =>
        (await digests.tick(new Date(at))).filter((j) => j.memberId === late);
      t.same(
        await picked('2026-12-02T09:59:59Z'),
        [],
        'joined at 09:30 UTC, after the 08:00 digest hour: not today',
      );
      t.same(
        (await picked('2026-12-03T09:59:59Z')).map((j) => j.localDate),
        ['2026-12-03'],
        'the next morning it is',
      );
      t.same(
        await picked('2026-12-03T11:00:01Z'),
        [],
        'three hours after the digest hour the day is over',
      );
    },
  );

  t.test('spread over the hour', async (t) => {
    const zoneMembers = await Promise.all(
      Array.from({ length: 16 }, (_, i) => member(s, `Spread ${i}`)),
    );
    for (const id of zoneMembers) {
      await joinedLongAgo(id);
      await ok(t, s, 'PATCH', `/v1/notifications/preferences?memberId=${id}`, {
        timezone: 'Asia/Tokyo',
        digestHour: 9,
      });
    }
    const halfPast = new Date('2026-12-01T00:30:00Z'); // 09:30 in Tokyo
    const due = (await digests.tick(halfPast)).filter((j) => zoneMembers.includes(j.memberId));
    t.ok(
      due.length > 0 && due.length < zoneMembers.length,
      `${due.length} of ${zoneMembers.length} due half-way through the hour`,
    );
    t.equal(
      (await digests.tick(new Date('2026-12-01T01:00:00Z'))).filter((j) =>
        zoneMembers.includes(j.memberId),
      ).length,
      zoneMembers.length,
      'all by the end of it',
    );
  });

  t.test('sent with its unsubscribe link; never twice a day; never empty', async (t) => {
    const before = smtp.messages.length;
    const rows = (
      await s.api<NotificationDeliveryList>('GET', `/v1/notifications/deliveries?memberId=${ada}`, {
        token: s.adminKey,
      })
    ).body.items;
    t.same(rows, [], 'Ada has had no digest yet');
    const job = { workspaceId: s.workspaceId, memberId: ada, localDate: '2026-12-01' };
    await digests.sendDigest(job, new Date());
    await digests.sendDigest(job, new Date());
    const address = await emailOf(s, ada);
    const [mail] = await smtp.waitFor((m) => m.to.includes(address));
    t.equal(smtp.messages.length - before, 1, 'one digest for the day, however often the job runs');
    t.equal(smtp.messages.filter((m) => m.to.includes(address)).length, 1);
    t.match(
      mail!.parsed.subject,
      /^Your day in flowplan: 13 ready, 1 in progress, 1 flow at risk$/,
    );
    t.match(mail!.parsed.text, /Ready for you \(13\):[\s\S]*… and 3 more/);
    t.match(mail!.parsed.html, /Flows at risk \(1\)/);
    t.match(mail!.header('list-unsubscribe'), /\/unsubscribe\/[A-Za-z0-9_-]+>$/);
    t.equal(mail!.header('list-unsubscribe-post'), 'List-Unsubscribe=One-Click');
    const unsubscribe = /^<(.+)>$/.exec(mail!.header('list-unsubscribe')!)![1]!;
    const settings = `${s.app.services.config.appUrl}/notifications?workspace=${s.workspaceId}`;
    const links = textLinks(plainTextAsSent(mail!));
    t.same(
      links.slice(-2),
      [settings, unsubscribe],
      'the footer links to the settings page, each link whole in the raw text part',
    );
    const onPage = new RegExp(
      `^${s.app.services.config.appUrl.replace(/[.?]/g, '\\$&')}/flows/flw_[\\w-]+#task-tsk_[\\w-]+$`,
    );
    const tasks = links.slice(0, -2);
    t.ok(tasks.length >= 11, 'the ten ready tasks shown and the one in progress link…');
    t.same(
      tasks.filter((link) => !onPage.test(link)),
      [],
      "…each to itself on its flow's page in the app",
    );
    t.same(textLinks(mail!.parsed.text!), links);
    t.same(htmlLinks(mail!.parsed.html as string), links);
    t.notMatch(mail!.parsed.text, /PATCH|\/v1\//, 'no API call named');
    t.same(
      emailHtmlProblems(mail!.parsed.html as string),
      [],
      'inline styles, table layout, no external assets',
    );
    const after = (
      await s.api<NotificationDeliveryList>('GET', `/v1/notifications/deliveries?memberId=${ada}`, {
        token: s.adminKey,
      })
    ).body.items;
    t.matchOnlyStrict(
      after.map(({ kind, status, digestDate, itemCount, attempt }: Record<string, unknown>) => ({
        kind,
        status,
        digestDate,
        itemCount,
        attempt,
      })),
      [{ kind: 'digest', status: 'sent', digestDate: '2026-12-01', itemCount: Number, attempt: 1 }],
      'one digest, sent',
    );
    t.equal(after.length, 1);

    // A member of a workspace with no flows: nothing worth mailing.
    const empty = await createWorkspace(s.sql, { name: 'Empty' });
    const idle = (
      await createPerson(s.sql, {
        email: `idle.${Date.now()}@example.com`,
        name: 'Idle',
        password: 'correct horse battery',
        workspaceId: empty.id,
      })
    ).id;
    const { key } = await createKey(s.sql, {
      workspaceId: empty.id,
      role: 'admin',
      scopes: [...SCOPES],
    });
    t.equal(
      (await s.api<Digest>('GET', `/v1/notifications/digest?memberId=${idle}`, { token: key })).body
        .wouldSend,
      false,
    );
    const sent = smtp.messages.length;
    await digests.sendDigest(
      { workspaceId: empty.id, memberId: idle, localDate: '2026-12-01' },
      new Date(),
    );
    t.strictSame(
      (
        await s.api<NotificationDeliveryList>(
          'GET',
          `/v1/notifications/deliveries?memberId=${idle}`,
          { token: key },
        )
      ).body.items.map(({ kind, status }) => ({ kind, status })),
      [{ kind: 'digest', status: 'skipped-empty' }],
      'one delivery, skipped as empty',
    );
    t.equal(smtp.messages.length, sent, 'an empty digest is never sent');
  });
});

/**
 * Two flowplan processes draining one outbox: every domain event becomes its notification
 * work exactly once (no event lost, none doubled), whichever process drained it.
 */
import t from 'tap';
import { member, newFlow, ok, startFlowServer } from '../../helpers/flows.ts';
import { until, item } from '../../helpers/server.ts';
import { startChildServer } from './child.ts';

t.test('two processes, one outbox: each event handled exactly once', async (t) => {
  const s = await startFlowServer(t);
  await startChildServer(t, s.databaseUrl);
  const people = await Promise.all(['Ada', 'Bob', 'Cy'].map((name) => member(s, name)));
  const flow = await newFlow(t, s, {
    name: 'Drain',
    tasks: Array.from({ length: 60 }, (_, i) => ({
      name: `T${i}`,
      ...(i % 2 ? { after: [i - 1] } : {}),
    })),
  });
  // Assignments and completions from many requests at once; completions unblock assigned work.
  await Promise.all(
    flow.tasks.map((task: { id: string }, i: number) =>
      ok(t, s, 'POST', `/v1/flows/${flow.id}/tasks/${task.id}/assign`, {
        assigneeId: people[i % 3],
      }),
    ),
  );
  for (let i = 0; i < 60; i += 2) {
    await ok(t, s, 'POST', `/v1/flows/${flow.id}/tasks/${item(flow.tasks, i).id}/start`);
    await ok(t, s, 'POST', `/v1/flows/${flow.id}/tasks/${item(flow.tasks, i).id}/complete`);
  }
  await until(
    async () =>
      (
        await s.sql<
          { n: number }[]
        >`select count(*)::int as n from outbox where processed_at is null`
      )[0]!.n,
    (n) => n === 0,
  );
  const pending =
    await s.sql`select kind, task_id, member_id, count(*)::int as n from notification_pending group by kind, task_id, member_id`;
  t.equal(
    pending.filter((r) => r.kind === 'assigned').length,
    60,
    'one assigned event per assignment',
  );
  t.equal(
    pending.filter((r) => r.kind === 'unlocked').length,
    30,
    'one unlocked event per unblocked task',
  );
  t.ok(
    pending.every((r) => r.n === 1),
    'none twice',
  );
  const [windows] = await s.sql`select count(*)::int as n from notification_batches`;
  t.equal(windows!.n, 3, 'one open batch per person');
  const [jobs] = await s.sql`select count(*)::int as n from pgboss.job where name = 'notify-batch'`;
  t.ok(jobs!.n >= 3, 'batch jobs enqueued with the drain');
});

/**
 * What `flowplan jobs` shows an operator: each queue's jobs by state, recent failures, the
 * outbox backlog, and webhook lanes with work (the lanes are the work; jobs only wake it).
 */
import type { Sql } from '../../storage/db.ts';
import {
  failedJobs,
  jobsInstalled,
  outboxBacklog,
  queueSummaries,
  setAsideOutboxEvents,
} from '../../storage/jobs.store.ts';
import { webhookBacklog } from '../../storage/webhook-lanes.store.ts';

export async function jobsReport(sql: Sql, failedLimit: number) {
  const installed = await jobsInstalled(sql);
  return {
    queues: installed ? await queueSummaries(sql) : [],
    failed: installed
      ? (await failedJobs(sql, failedLimit)).map((j) => ({
          ...j,
          createdOn: j.createdOn.toISOString(),
          completedOn: j.completedOn?.toISOString() ?? null,
        }))
      : [],
    outbox: {
      backlog: await outboxBacklog(sql),
      setAside: (await setAsideOutboxEvents(sql, failedLimit)).map((e) => ({
        ...e,
        createdAt: e.createdAt.toISOString(),
      })),
    },
    webhooks: await webhookBacklog(sql),
  };
}

export function formatJobsReport(report: Awaited<ReturnType<typeof jobsReport>>): string {
  const lines = ['queue                          created  retry  active  completed  failed'];
  for (const q of report.queues) {
    lines.push(
      `${q.name.padEnd(30)} ${String(q.created).padStart(7)} ${String(q.retry).padStart(6)} ${String(q.active).padStart(7)} ${String(q.completed).padStart(10)} ${String(q.failed).padStart(7)}`,
    );
  }
  if (report.queues.length === 0)
    lines.push('(no queues yet: no server has started on this database)');
  lines.push(
    '',
    `outbox: ${report.outbox.backlog} event(s) waiting, ${report.outbox.setAside.length} set aside after repeated failures`,
  );
  for (const e of report.outbox.setAside)
    lines.push(`  #${e.id} ${e.type} ${e.flowId ?? ''}: ${e.error}`);
  const w = report.webhooks;
  lines.push(
    '',
    `webhook lanes: ${w.queued} due, ${w.sending} sending, ${w.pending} waiting out a retry delay; ${w.failedLastDay} deliveries given up in the last day; ${w.collecting} events not collected yet`,
  );
  lines.push('', report.failed.length ? 'failed jobs (newest first):' : 'no failed jobs');
  for (const j of report.failed)
    lines.push(
      `  ${j.completedOn ?? j.createdOn} ${j.queue} ${j.id} after ${j.retryCount} retries: ${JSON.stringify(j.output)}`,
    );
  return lines.join('\n');
}

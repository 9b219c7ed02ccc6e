/**
 * The digest builder: what `GET /v1/notifications/digest` answers and the morning email
 * says, from the snapshots of every flow the member can see — the workspace's live flows and
 * flows shared with their address from other workspaces. Sections hold at most DIGEST_CAP
 * items, ranked like the work views (critical path, then least slack); `counts` are totals.
 */
import {
  STATUS_BLOCKED,
  STATUS_DONE,
  STATUS_IN_PROGRESS,
  STATUS_READY,
} from '../../engine/status.ts';
import { addWorkingDays, isoDate, startOfSchedule } from '../../engine/calendar.ts';
import type { Static } from '@sinclair/typebox';
import { DIGEST_CAP, type DigestSchema } from '../../contract/notification.schema.ts';
import type { SessionRegistry } from '../flows/registry.ts';
import type { Snapshot } from '../flows/snapshot.ts';
import type { Sql } from '../../storage/db.ts';
import { completedSince, visibleFlows } from '../../storage/notification-digests.store.ts';

export type Digest = Static<typeof DigestSchema>;
export type DigestItem = Digest['ready'][number];

interface Ranked {
  item: DigestItem;
  critical: number;
  slack: number;
}

const byRank = (a: Ranked, b: Ranked) => b.critical - a.critical || a.slack - b.slack;

export async function buildDigest(
  sql: Sql,
  registry: SessionRegistry,
  workspaceId: string,
  memberId: string,
  now: Date,
): Promise<Digest> {
  const visible = await visibleFlows(sql, workspaceId, memberId);
  const snapshots = (
    await Promise.all(
      visible.map((f) => registry.snapshot(f.workspaceId, f.flowId).catch(() => null)),
    )
  ).filter((s): s is Snapshot => s !== null && !s.flow.archived);
  const sections = {
    ready: [] as Ranked[],
    inProgress: [] as Ranked[],
    blocked: [] as Ranked[],
    available: [] as Ranked[],
  };
  const atRisk: Digest['atRisk'] = [];
  const start = startOfSchedule(isoDate(now));
  const tasksById = new Map<string, { snapshot: Snapshot; i: number }>();

  for (const snapshot of snapshots) {
    const { state, status, critical, slack } = snapshot;
    state.tasks.forEach((task, i) => {
      tasksById.set(task.id, { snapshot, i });
      const ranked = (): Ranked => ({
        item: {
          questId: snapshot.flow.id,
          questName: snapshot.flow.name,
          nodeId: task.id,
          nodeTitle: task.name,
          hours: snapshot.hours(task),
          criticalPath: critical[i] === 1,
        },
        critical: critical[i]!,
        slack: slack[task.parentId ? snapshot.index.get(task.parentId)! : i]!,
      });
      const s = status[i]!;
      if (task.assigneeId === memberId) {
        if (s === STATUS_READY) sections.ready.push(ranked());
        else if (s === STATUS_IN_PROGRESS) sections.inProgress.push(ranked());
        else if (
          s === STATUS_BLOCKED &&
          waitsOnOthers(snapshot, task.parentId ?? task.id, memberId)
        )
          sections.blocked.push(ranked());
      } else if (task.assigneeId === null && task.parentId === null && s === STATUS_READY) {
        sections.available.push(ranked());
      }
    });
    const due = snapshot.flow.dueDate?.slice(0, 10) ?? null;
    const projectedFinish = snapshot.finish >= 0 ? addWorkingDays(start, snapshot.finish) : null;
    if (due && projectedFinish && projectedFinish > due) {
      atRisk.push({
        questId: snapshot.flow.id,
        questName: snapshot.flow.name,
        dueDate: snapshot.flow.dueDate!,
        projectedFinish,
      });
    }
  }

  const done = await completedSince(
    sql,
    snapshots.map((s) => s.flow.id),
    new Date(now.getTime() - 86_400_000),
  );
  const completed = done.flatMap(({ id, completedAt }) => {
    const at = tasksById.get(id);
    if (!at || at.snapshot.status[at.i] !== STATUS_DONE) return [];
    const task = at.snapshot.state.tasks[at.i]!;
    return [
      {
        questId: at.snapshot.flow.id,
        questName: at.snapshot.flow.name,
        nodeId: id,
        nodeTitle: task.name,
        hours: at.snapshot.hours(task, false),
        criticalPath: false,
        completedAt: completedAt.toISOString(),
        assigneeId: task.assigneeId,
      },
    ];
  });
  atRisk.sort((a, b) => a.dueDate.localeCompare(b.dueDate) || a.questId.localeCompare(b.questId));

  const counts = {
    ready: sections.ready.length,
    inProgress: sections.inProgress.length,
    blocked: sections.blocked.length,
    available: sections.available.length,
    completed: completed.length,
    atRisk: atRisk.length,
  };
  const cap = (list: Ranked[]) =>
    list
      .sort(byRank)
      .slice(0, DIGEST_CAP)
      .map((r) => r.item);
  return {
    memberId,
    generatedAt: now.toISOString(),
    wouldSend: Object.values(counts).some((n) => n > 0),
    counts,
    ready: cap(sections.ready),
    inProgress: cap(sections.inProgress),
    blocked: cap(sections.blocked),
    available: cap(sections.available),
    completed: completed.slice(0, DIGEST_CAP),
    atRisk: atRisk.slice(0, DIGEST_CAP),
  };
}

/** A blocked task "waits on someone else" when an unfinished task it depends on is not the member's own. */
function waitsOnOthers(snapshot: Snapshot, objectiveId: string, memberId: string): boolean {
  const objective = snapshot.task(objectiveId)!;
  return objective.dependsOn.some((id) => {
    const i = snapshot.index.get(id)!;
    return snapshot.status[i] !== STATUS_DONE && snapshot.state.tasks[i]!.assigneeId !== memberId;
  });
}

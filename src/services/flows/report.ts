/** The delivery report of a flow (CONTRACT §4): counts over objectives, hours, workload, blockers. */
import type { Static } from '@sinclair/typebox';
import type { ReportSchema } from '../../contract/schedule.schema.ts';
import { STATUS_BLOCKED, STATUS_DONE, STATUS_READY } from '../../engine/status.ts';
import type { Snapshot } from './snapshot.ts';

export const TOP_BLOCKERS = 10;

export type ReportView = Static<typeof ReportSchema>;

const sumOrNull = (values: (number | null)[]): number | null =>
  values.some((v) => v !== null) ? values.reduce<number>((sum, v) => sum + (v ?? 0), 0) : null;

export async function buildReport(
  snapshot: Snapshot,
  memberNames: ReadonlyMap<string, string>,
): Promise<ReportView> {
  const tasks = snapshot.state.tasks;
  const blocking = await snapshot.blocking();
  const dependents = new Set<string>();
  for (const task of tasks) for (const dep of task.dependsOn) dependents.add(dep);

  let total = 0,
    done = 0,
    ready = 0,
    blocked = 0;
  const estimated: (number | null)[] = [];
  const remaining: (number | null)[] = [];
  const unestimated: string[] = [];
  const orphaned: string[] = [];
  const blockers: { taskId: string; taskName: string; blocking: number; position: number }[] = [];
  const workload = new Map<string, { openTasks: number; hours: (number | null)[] }>();

  for (let i = 0; i < tasks.length; i++) {
    const task = tasks[i]!;
    const status = snapshot.status[i]!;
    if (task.assigneeId) {
      const load = workload.get(task.assigneeId) ?? { openTasks: 0, hours: [] };
      workload.set(task.assigneeId, load);
      if (status !== STATUS_DONE) {
        load.openTasks++;
        load.hours.push(snapshot.hours(task));
      }
    }
    if (task.parentId !== null) continue;
    total++;
    if (status === STATUS_DONE) done++;
    else if (status === STATUS_READY) ready++;
    else if (status === STATUS_BLOCKED) blocked++;
    const planned = snapshot.hours(task, false);
    estimated.push(planned);
    if (status !== STATUS_DONE) remaining.push(snapshot.hours(task));
    if (planned === null) unestimated.push(task.id);
    if (task.dependsOn.length === 0 && !dependents.has(task.id)) orphaned.push(task.id);
    if (status !== STATUS_DONE && blocking[i]! > 0)
      blockers.push({ taskId: task.id, taskName: task.name, blocking: blocking[i]!, position: i });
  }
  blockers.sort((a, b) => b.blocking - a.blocking || a.position - b.position);
  const anyEstimate = estimated.some((h) => h !== null);
  return {
    flowId: snapshot.flow.id,
    flowName: snapshot.flow.name,
    completion: total === 0 ? 0 : done / total,
    tasksTotal: total,
    tasksDone: done,
    tasksReady: ready,
    tasksBlocked: blocked,
    hoursEstimated: sumOrNull(estimated),
    hoursRemaining: anyEstimate ? (sumOrNull(remaining) ?? 0) : null,
    unestimatedTasks: unestimated,
    orphanedTasks: orphaned,
    workload: [...workload]
      .map(([memberId, load]) => ({
        memberId,
        name: memberNames.get(memberId) ?? null,
        openTasks: load.openTasks,
        hoursRemaining: sumOrNull(load.hours),
      }))
      .sort((a, b) => b.openTasks - a.openTasks || a.memberId.localeCompare(b.memberId)),
    topBlockers: blockers.slice(0, TOP_BLOCKERS).map(({ position: _position, ...rest }) => rest),
  };
}

/**
 * What the web app's flow page shows a person who may read the flow: the public page's model
 * (facts and diagram), every objective as the API's Task with what waits on it next and how
 * much it holds up, the people named, the schedule and the report. One version, read once.
 */
import { memberNames } from '../../storage/members.store.ts';
import { diagramModel, type DiagramModel } from './diagram.ts';
import type { Sql } from '../../storage/db.ts';
import type { TaskView } from '../flows/flow-body.ts';
import { finishP80 } from '../flows/forecast.ts';
import type { RecomputePool } from '../flows/recompute-pool.ts';
import { buildReport, type ReportView } from '../flows/report.ts';
import { buildSchedule, type ScheduleView } from '../flows/schedule.ts';
import type { Snapshot } from '../flows/snapshot.ts';

export interface PageTask {
  task: TaskView;
  /** The tasks that wait on this one directly, in flow order. */
  next: string[];
  /** How many unfinished tasks wait on it, directly or not. */
  holdsUp: number;
}

export interface FlowPageModel {
  version: number;
  archived: boolean;
  diagram: DiagramModel;
  /** The objectives in flow order (sub-tasks are inside their Task). */
  tasks: PageTask[];
  /** Names of the tasks (objectives and sub-tasks) by id. */
  taskNames: ReadonlyMap<string, string>;
  /** Names of the people the tasks are assigned to, by id. */
  people: ReadonlyMap<string, string>;
  schedule: ScheduleView;
  report: ReportView;
}

/** The flow as its page shows it, scheduled from `start` (the caller has found the snapshot for whoever reads it). */
export async function flowPageModel(
  sql: Sql,
  pool: RecomputePool,
  snapshot: Snapshot,
  start: string,
): Promise<FlowPageModel> {
  // The 80% date is a nicety: a pool too busy to draw it leaves the page without it.
  const [p80, blocking] = await Promise.all([
    finishP80(pool, snapshot, start).catch(() => null),
    snapshot.blocking(),
  ]);
  const all = snapshot.state.tasks;
  const taskNames = new Map(all.map((t) => [t.id, t.name]));
  const people = await memberNames(
    sql,
    all.flatMap((t) => (t.assigneeId ? [t.assigneeId] : [])),
  );
  return {
    version: snapshot.version,
    archived: snapshot.flow.archived,
    diagram: diagramModel(snapshot, start, p80),
    tasks: pageTasks(snapshot, blocking),
    taskNames,
    people,
    schedule: buildSchedule(snapshot, start),
    report: await buildReport(snapshot, people),
  };
}

function pageTasks(snapshot: Snapshot, blocking: Uint32Array): PageTask[] {
  const tasks: PageTask[] = [];
  const byId = new Map<string, PageTask>();
  snapshot.state.tasks.forEach((record, i) => {
    if (record.parentId !== null) return;
    const entry = { task: snapshot.taskView(record.id), next: [], holdsUp: blocking[i] ?? 0 };
    tasks.push(entry);
    byId.set(record.id, entry);
  });
  for (const { task } of tasks) for (const id of task.dependsOn) byId.get(id)?.next.push(task.id);
  return tasks;
}

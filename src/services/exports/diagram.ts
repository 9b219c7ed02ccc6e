/**
 * The dependency diagram's model: what a published page, an SVG, a PNG or a PDF may show
 * of a flow. Built field by field from the snapshot (never by copying task records), so an
 * assignee, description, comment, file or note can never reach a public view through it.
 * Plain data: it crosses to the render workers by structured clone.
 */
import type { TaskStatus } from '../../contract/vocabulary.ts';
import { statusName } from '../../engine/status.ts';
import { buildSchedule, scheduleStart } from '../flows/schedule.ts';
import type { EstimateRange } from '../flows/model.ts';
import type { Snapshot } from '../flows/snapshot.ts';

export interface DiagramTask {
  id: string;
  name: string;
  status: TaskStatus;
  /** The objective's hours (its open sub-tasks' when estimated), null when unestimated. */
  estimateHours: number | null;
  /** The range those hours may fall in; null without one. */
  estimateRange: EstimateRange | null;
  critical: boolean;
  /** Indexes into `tasks` of the tasks this one waits for. */
  dependsOn: number[];
}

export interface DiagramModel {
  flowId: string;
  flowName: string;
  /** The flow version the model was built from: a cache key for callers. */
  version: number;
  dueDate: string | null;
  projectedFinish: string | null;
  onTrack: boolean | null;
  /**
   * The day four in five of the forecast's samples finish by (services/flows/forecast.ts
   * finishP80), shown beside projectedFinish; null when no open task has a ranged estimate.
   */
  finishP80: string | null;
  /** Objectives in creation order; sub-tasks are not drawn (they have no dependencies). */
  tasks: DiagramTask[];
}

/** The model of a snapshot; `start` (a schedule start date) decides the projected finish. */
export function diagramModel(
  snapshot: Snapshot,
  start: string = scheduleStart(undefined),
  finishP80: string | null = null,
): DiagramModel {
  const all = snapshot.state.tasks;
  const position = new Map<string, number>();
  const picked: number[] = [];
  for (let i = 0; i < all.length; i++) {
    if (all[i]!.parentId !== null) continue;
    position.set(all[i]!.id, picked.length);
    picked.push(i);
  }
  const tasks = picked.map((i): DiagramTask => {
    const task = all[i]!;
    return {
      id: task.id,
      name: task.name,
      status: statusName(snapshot.status[i]!),
      estimateHours: snapshot.hours(task, false),
      estimateRange: snapshot.hoursRange(task, false),
      critical: snapshot.critical[i] === 1,
      dependsOn: task.dependsOn.map((dep) => position.get(dep)!).sort((a, b) => a - b),
    };
  });
  const { dueDate, projectedFinish, onTrack } = buildSchedule(snapshot, start);
  return {
    flowId: snapshot.flow.id,
    flowName: snapshot.flow.name,
    version: snapshot.version,
    dueDate,
    projectedFinish,
    onTrack,
    finishP80,
    tasks,
  };
}

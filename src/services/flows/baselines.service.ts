/**
 * Baselines (CONTRACT §5): the schedule as it stands, kept, and how it has moved since. A
 * baseline is no change of the flow (its version stays): it is stored beside the flow with its
 * `baseline.created` event, as a comment is.
 *
 * The snapshot holds each objective's CPM offsets from the day it was taken, read straight off
 * the engine's arrays; variance compares them with today's offsets after shifting by the
 * working days between the two start days, so no date is built per task either way.
 */
import type { Static } from '@sinclair/typebox';
import type { BaselineSchema, VarianceSchema } from '../../contract/baseline.schema.ts';
import { addWorkingDays, workingDaysBetween } from '../../engine/calendar.ts';
import { STATUS_DONE } from '../../engine/status.ts';
import { notFound } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import type { Page, PageRequest } from '../../platform/paging.ts';
import {
  insertBaseline,
  loadBaseline,
  pageBaselines,
  type BaselineRow,
  type BaselineTasks,
} from '../../storage/baselines.store.ts';
import { insertEvents } from '../../storage/flows.store.ts';
import { actorId } from './actor.ts';
import type { FlowContext } from './flows.service.ts';
import { refuseLateFinish, scheduleStart } from './schedule.ts';
import type { Snapshot } from './snapshot.ts';

export type BaselineView = Static<typeof BaselineSchema>;
export type VarianceView = Static<typeof VarianceSchema>;

/** A task with no dates (done) in the engine's arrays and in a stored snapshot. */
const NO_DATE = -1;

const baselineView = (row: BaselineRow): BaselineView => ({
  id: row.id,
  name: row.name,
  createdAt: row.createdAt.toISOString(),
  projectedFinish: row.finish === NO_DATE ? null : addWorkingDays(row.startDate, row.finish),
});

/** Each objective's offsets, in flow order, as the schedule has them (done: NO_DATE). */
function scheduleOffsets(snapshot: Snapshot): BaselineTasks {
  const kept: BaselineTasks = { taskIds: [], starts: [], finishes: [] };
  snapshot.state.tasks.forEach((task, i) => {
    if (task.parentId !== null) return;
    const done = snapshot.status[i] === STATUS_DONE;
    kept.taskIds.push(task.id);
    kept.starts.push(done ? NO_DATE : (snapshot.es[i] ?? NO_DATE));
    kept.finishes.push(done ? NO_DATE : (snapshot.ef[i] ?? NO_DATE));
  });
  return kept;
}

export async function createBaseline(
  ctx: FlowContext,
  flowId: string,
  name: string,
): Promise<BaselineView> {
  const { workspaceId } = ctx.principal;
  const snapshot = await ctx.registry.snapshot(workspaceId, flowId);
  const row = await ctx.sql.begin(async (tx) => {
    const created = await insertBaseline(tx, {
      id: newId('bsl'),
      workspaceId,
      flowId,
      name,
      startDate: scheduleStart(undefined),
      finish: snapshot.finish >= 0 ? snapshot.finish : NO_DATE,
      ...scheduleOffsets(snapshot),
    });
    await insertEvents(tx, workspaceId, flowId, actorId(ctx.principal), [
      { type: 'baseline.created', data: { flowId, baselineId: created.id, name } },
    ]);
    return created;
  });
  return baselineView(row);
}

export async function listBaselines(
  ctx: FlowContext,
  flowId: string,
  page: PageRequest,
): Promise<Page<BaselineView>> {
  // The flow first: another workspace's is 404, not an empty list.
  await ctx.registry.snapshot(ctx.principal.workspaceId, flowId);
  const { total, items } = await pageBaselines(ctx.sql, ctx.principal.workspaceId, flowId, page);
  return { total, items: items.map(baselineView) };
}

/** The schedule from `startDate` (default today) against the baseline's, in working days. */
export async function baselineVariance(
  ctx: FlowContext,
  flowId: string,
  baselineId: string,
  startDate: string | undefined,
): Promise<VarianceView> {
  const { workspaceId } = ctx.principal;
  const snapshot = await ctx.registry.snapshot(workspaceId, flowId);
  const baseline = await loadBaseline(ctx.sql, workspaceId, flowId, baselineId);
  if (!baseline) throw notFound('Baseline');
  const start = scheduleStart(startDate);
  if (startDate !== undefined) refuseLateFinish(start, snapshot.finish, 'query');
  // An offset counted from the baseline's day is `shift` working days fewer counted from `start`.
  const shift = workingDaysBetween(baseline.startDate, start);
  const slip = (now = NO_DATE, then = NO_DATE) =>
    now === NO_DATE || then === NO_DATE ? null : now - then + shift;
  const current = scheduleOffsets(snapshot);
  const position = new Map(baseline.taskIds.map((id, k) => [id, k]));
  const tasks: VarianceView['tasks'] = [];
  const added: string[] = [];
  current.taskIds.forEach((taskId, j) => {
    const k = position.get(taskId);
    if (k === undefined) {
      added.push(taskId);
      return;
    }
    position.delete(taskId);
    tasks.push({
      taskId,
      startSlipDays: slip(current.starts[j], baseline.starts[k]),
      finishSlipDays: slip(current.finishes[j], baseline.finishes[k]),
    });
  });
  const finish = snapshot.finish >= 0 ? snapshot.finish : NO_DATE;
  return {
    baseline: baselineView(baseline),
    projectedFinish: finish === NO_DATE ? null : addWorkingDays(start, finish),
    slipDays: slip(finish, baseline.finish),
    tasks,
    added,
    // What is left of the baseline's positions, in its order (a Map keeps insertion order).
    removed: [...position.keys()],
  };
}

/**
 * Moving work along (spec §3): start, complete, reopen and assign, with the sub-task rules
 * of CONTRACT §3 (starting a sub-task starts its objective; completing the last open one
 * completes the objective when no deliverable is missing).
 */
import { DomainError, downstreamStarted } from '../../platform/errors.ts';
import { STATUS_BLOCKED, STATUS_DONE, STATUS_READY } from '../../engine/status.ts';
import { updateTask } from '../../storage/flows.store.ts';
import type { DomainEvent } from '../../storage/flows.store.ts';
import { actorId } from './actor.ts';
import { checkAssignees, type FlowContext } from './flows.service.ts';
import { PROGRESS, type Progress, type TaskRecord } from './model.ts';
import { unblockedIds, type Decide } from './session.ts';
import type { FlowView, Snapshot } from './snapshot.ts';
import { downstream, requireTask, startedTasks } from './tasks.service.ts';

function invalid(snapshot: FlowView, task: TaskRecord, action: string): DomainError {
  const status = snapshot.statusOf(task.id);
  return new DomainError(
    'INVALID_TRANSITION',
    `Cannot ${action} a task that is ${status.replace('_', ' ')}`,
    { status },
  );
}

const missingDeliverables = (task: TaskRecord) =>
  task.deliverables.filter((d) => !d.satisfied).map(({ id, name }) => ({ id, name }));

/** Runs a plan through the flow's session, attributed to the caller. */
async function run<R>(ctx: FlowContext, flowId: string, decide: Decide<R>): Promise<R> {
  const session = await ctx.registry.get(ctx.principal.workspaceId, flowId);
  return session.run(decide, actorId(ctx.principal));
}

/** A progress change on some tasks, as a plan. */
function transition<R>(
  decide: (current: FlowView) => {
    changes: [TaskRecord, Progress][];
    events: DomainEvent[];
    result: (next: Snapshot, previous: Snapshot) => R;
  },
): Decide<R> {
  return (current) => {
    const { changes, events, result } = decide(current);
    const now = new Date().toISOString();
    const updated = changes.map(([task, progress]) => ({ ...task, progress, updatedAt: now }));
    return {
      next: current.next({ replace: updated }),
      write: async (tx) => {
        for (const task of updated) await updateTask(tx, current.flow.workspaceId, task);
      },
      events,
      result,
    };
  };
}

const event = (
  type: string,
  flowId: string,
  taskId: string,
  data: Record<string, unknown> = {},
): DomainEvent => ({ type, data: { flowId, taskId, ...data } });

export function startTask(ctx: FlowContext, flowId: string, taskId: string): Promise<Snapshot> {
  return run(ctx, flowId, planStart(flowId, taskId));
}

export function planStart(flowId: string, taskId: string): Decide<Snapshot> {
  return transition((current) => {
    const task = requireTask(current, taskId);
    const status = current.statusCode(taskId);
    if (status === STATUS_BLOCKED) {
      const holder = task.parentId ? current.task(task.parentId)! : task;
      const blockedBy = holder.dependsOn.filter((dep) => current.statusCode(dep) !== STATUS_DONE);
      throw new DomainError('TASK_BLOCKED', 'This task waits on unfinished work', { blockedBy });
    }
    if (status !== STATUS_READY) throw invalid(current, task, 'start');
    const changes: [TaskRecord, Progress][] = [[task, PROGRESS.started]];
    const events = [event('task.started', flowId, taskId)];
    const parent = task.parentId ? current.task(task.parentId)! : null;
    if (parent && parent.progress === PROGRESS.open) {
      changes.push([parent, PROGRESS.started]);
      events.push(event('task.started', flowId, parent.id));
    }
    return { changes, events, result: (next) => next };
  });
}

export function completeTask(
  ctx: FlowContext,
  flowId: string,
  taskId: string,
): Promise<{ snapshot: Snapshot; unblocked: string[] }> {
  return run(ctx, flowId, planComplete(flowId, taskId));
}

export function planComplete(
  flowId: string,
  taskId: string,
): Decide<{ snapshot: Snapshot; unblocked: string[] }> {
  return transition((current) => {
    const task = requireTask(current, taskId);
    if (task.progress !== PROGRESS.started) throw invalid(current, task, 'complete');
    const outstanding = (current.children.get(taskId) ?? []).filter(
      (s) => s.progress !== PROGRESS.done,
    );
    if (outstanding.length > 0) {
      throw new DomainError('SUBTASKS_OUTSTANDING', 'Sub-tasks are not done yet', {
        subtasks: outstanding.map(({ id, name }) => ({ id, name })),
      });
    }
    const missing = missingDeliverables(task);
    if (missing.length > 0)
      throw new DomainError(
        'DELIVERABLE_MISSING',
        'A required deliverable has not been handed in',
        { deliverables: missing },
      );
    const changes: [TaskRecord, Progress][] = [[task, PROGRESS.done]];
    const events = [event('task.completed', flowId, taskId)];
    const parent = task.parentId ? current.task(task.parentId)! : null;
    if (parent && parent.progress === PROGRESS.started) {
      const othersDone = (current.children.get(parent.id) ?? []).every(
        (s) => s.id === taskId || s.progress === PROGRESS.done,
      );
      if (othersDone && missingDeliverables(parent).length === 0) {
        changes.push([parent, PROGRESS.done]);
        events.push(event('task.completed', flowId, parent.id));
      }
    }
    return {
      changes,
      events,
      result: (next, previous) => ({ snapshot: next, unblocked: unblockedIds(previous, next) }),
    };
  });
}

export function reopenTask(ctx: FlowContext, flowId: string, taskId: string): Promise<Snapshot> {
  return run(ctx, flowId, planReopen(flowId, taskId));
}

export function planReopen(flowId: string, taskId: string): Decide<Snapshot> {
  return transition((current) => {
    const task = requireTask(current, taskId);
    if (task.progress !== PROGRESS.done) throw invalid(current, task, 'reopen');
    const parent = task.parentId ? current.task(task.parentId)! : null;
    // Reopening a sub-task of a done objective reopens the objective too.
    const objective = parent && parent.progress === PROGRESS.done ? parent : parent ? null : task;
    const started = objective
      ? startedTasks(
          current,
          [...downstream(current, [objective.id]).keys()].filter((id) => id !== objective.id),
        )
      : [];
    if (started.length > 0) throw downstreamStarted(started);
    const changes: [TaskRecord, Progress][] = [[task, PROGRESS.started]];
    const events = [event('task.reopened', flowId, taskId)];
    if (parent && objective === parent) {
      changes.push([parent, PROGRESS.started]);
      events.push(event('task.reopened', flowId, parent.id));
    }
    return { changes, events, result: (next) => next };
  });
}

export async function assignTask(
  ctx: FlowContext,
  flowId: string,
  taskId: string,
  assigneeId: string | null,
): Promise<Snapshot> {
  // The flow first: another workspace's flow is 404 whatever the body names.
  const session = await ctx.registry.get(ctx.principal.workspaceId, flowId);
  if (assigneeId !== null)
    await checkAssignees(ctx.sql, ctx.principal.workspaceId, [
      { pointer: '/assigneeId', id: assigneeId },
    ]);
  return session.run(planAssign(flowId, taskId, assigneeId), actorId(ctx.principal));
}

/** Assigns the task (the assignee was checked already); the same assignee again changes nothing. */
export function planAssign(
  flowId: string,
  taskId: string,
  assigneeId: string | null,
): Decide<Snapshot> {
  return (current) => {
    const task = requireTask(current, taskId);
    if (task.assigneeId === assigneeId) return { next: null, result: (next) => next };
    const updated = { ...task, assigneeId, updatedAt: new Date().toISOString() };
    return {
      next: current.next({ replace: [updated] }),
      write: (tx) => updateTask(tx, current.flow.workspaceId, updated),
      events: [
        event('task.assigned', flowId, taskId, { assigneeId, previousAssigneeId: task.assigneeId }),
      ],
      result: (next) => next,
    };
  };
}

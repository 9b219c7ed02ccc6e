/**
 * Task structure commands: create (linked in with after/before, or as a sub-task), update,
 * delete with bridging, and dependencies. Each validates against the flow's current
 * snapshot inside its session and refuses with the codes of CONTRACT §3.
 */
import type { Static } from '@sinclair/typebox';
import type { CreateTaskBody, PatchTaskBody } from '../../contract/task.schema.ts';
import {
  circularDependency,
  DomainError,
  downstreamStarted,
  notFound,
  validationFailed,
} from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import {
  deleteDependencies,
  deleteTasks,
  insertDependencies,
  insertTasks,
  NO_DELIVERABLES,
  updateTask,
} from '../../storage/flows.store.ts';
import { actorId } from './actor.ts';
import { checkAssignees, type FlowContext } from './flows.service.ts';
import { checkedRange, nextPosition, PROGRESS, type TaskRecord } from './model.ts';
import type { Decide } from './session.ts';
import type { FlowView, Snapshot } from './snapshot.ts';

export function requireTask(snapshot: FlowView, taskId: string): TaskRecord {
  const task = snapshot.task(taskId);
  if (!task) throw notFound('Task');
  return task;
}

export function refuseStarted(snapshot: FlowView, task: TaskRecord): void {
  if (task.progress !== PROGRESS.open)
    throw new DomainError(
      'TASK_STARTED',
      'Work on this task has started: its plan can no longer change',
      { status: snapshot.statusOf(task.id) },
    );
}

/** An objective named in a body field: it must exist in this flow and not be a sub-task. */
function objectiveAt(snapshot: FlowView, id: string, pointer: string): TaskRecord {
  const task = snapshot.task(id);
  if (!task)
    throw validationFailed([{ in: 'body', pointer, message: `${id} is not a task of this flow` }]);
  if (task.parentId !== null)
    throw validationFailed([
      { in: 'body', pointer, message: `${id} is a sub-task: sub-tasks carry no dependencies` },
    ]);
  return task;
}

/** Ids downstream of `start` (tasks that transitively wait on it), with the path back for reporting a cycle. */
export function downstream(
  snapshot: FlowView,
  start: readonly string[],
): Map<string, string | null> {
  const via = new Map<string, string | null>(start.map((id) => [id, null]));
  if (start.length === 0) return via;
  // The engine's successor rows (dependents in task order), not a map built from every task.
  const { succStart, succ } = snapshot.graph();
  const { tasks } = snapshot.state;
  const queue = start.map((id) => snapshot.index.get(id)!);
  for (let head = 0; head < queue.length; head++) {
    const v = queue[head]!;
    for (let k = succStart[v]!, end = succStart[v + 1]!; k < end; k++) {
      const next = tasks[succ[k]!]!.id;
      if (via.has(next)) continue;
      via.set(next, tasks[v]!.id);
      queue.push(succ[k]!);
    }
  }
  return via;
}

const WAIT_ORDER = 'each waits on the one before it';

function pathTo(via: Map<string, string | null>, end: string): string[] {
  const path: string[] = [];
  for (let at: string | null = end; at !== null; at = via.get(at) ?? null) path.unshift(at);
  return path;
}

export function startedTasks(
  snapshot: FlowView,
  ids: Iterable<string>,
): { id: string; name: string; status: string }[] {
  const started = [];
  for (const id of ids) {
    const task = snapshot.task(id)!;
    if (task.progress !== PROGRESS.open)
      started.push({ id, name: task.name, status: snapshot.statusOf(id) });
  }
  return started;
}

export async function createTask(
  ctx: FlowContext,
  flowId: string,
  body: Static<typeof CreateTaskBody>,
): Promise<{ snapshot: Snapshot; taskId: string }> {
  // The flow first: another workspace's flow is 404 whatever the body names.
  const session = await ctx.registry.get(ctx.principal.workspaceId, flowId);
  if (body.assigneeId)
    await checkAssignees(ctx.sql, ctx.principal.workspaceId, [
      { pointer: '/assigneeId', id: body.assigneeId },
    ]);
  const id = newId('tsk');
  const snapshot = await session.run(planCreateTask(flowId, id, body), actorId(ctx.principal));
  return { snapshot, taskId: id };
}

/** Creates task `id` as the body says, judged on `current` (the assignee was checked already). */
export function planCreateTask(
  flowId: string,
  id: string,
  body: Static<typeof CreateTaskBody>,
): Decide<Snapshot> {
  return (current) => {
    const after = body.after ?? [];
    const before = body.before ?? [];
    if (body.parentId !== undefined) {
      if (after.length > 0 || before.length > 0)
        throw validationFailed([
          {
            in: 'body',
            pointer: after.length ? '/after' : '/before',
            message: 'a sub-task carries no dependencies',
          },
        ]);
      const parent = current.task(body.parentId);
      if (!parent)
        throw validationFailed([
          {
            in: 'body',
            pointer: '/parentId',
            message: `${body.parentId} is not a task of this flow`,
          },
        ]);
      if (parent.parentId !== null)
        throw validationFailed([
          {
            in: 'body',
            pointer: '/parentId',
            message: 'sub-tasks are one level deep: the parent must be an objective',
          },
        ]);
      if (parent.progress === PROGRESS.done)
        throw new DomainError(
          'TASK_STARTED',
          'The objective is done: reopen it before adding sub-tasks',
          { status: 'done' },
        );
    }
    after.forEach((dep, i) => objectiveAt(current, dep, `/after/${i}`));
    before.forEach((dep, i) => objectiveAt(current, dep, `/before/${i}`));
    const started = startedTasks(current, before);
    if (started.length > 0) throw downstreamStarted(started);
    const reach = downstream(current, before);
    const looped = after.find((dep) => reach.has(dep));
    if (looped) {
      const cycle = [...pathTo(reach, looped), id];
      const members = cycle.map((at) => ({
        id: at,
        name: at === id ? body.name : current.task(at)!.name,
      }));
      throw circularDependency(
        'The new task would wait on work that waits on it',
        members,
        WAIT_ORDER,
        'tasks',
        { cycle },
      );
    }

    const now = new Date().toISOString();
    const task: TaskRecord = {
      id,
      parentId: body.parentId ?? null,
      name: body.name,
      description: body.description ?? null,
      estimateHours: body.estimateHours ?? null,
      estimateRange: checkedRange(
        body.estimateHours ?? null,
        body.estimateRange ?? null,
        '/estimateRange',
      ),
      assigneeId: body.assigneeId ?? null,
      progress: PROGRESS.open,
      position: nextPosition(current),
      dependsOn: after,
      deliverables: NO_DELIVERABLES,
      createdAt: now,
      updatedAt: now,
    };
    // With after A and before B where B waited on A directly, the new step replaces that edge.
    const removed: (readonly [string, string])[] = [];
    const relinked = before.map((b) => {
      const waiting = current.task(b)!;
      const kept = waiting.dependsOn.filter((dep) => {
        const direct = after.includes(dep);
        if (direct) removed.push([b, dep]);
        return !direct;
      });
      return { ...waiting, dependsOn: [...kept, id], updatedAt: now };
    });
    return {
      next: current.next({ replace: relinked, add: [task] }),
      write: async (tx) => {
        const workspaceId = current.flow.workspaceId;
        await insertTasks(tx, workspaceId, flowId, [task]);
        await deleteDependencies(tx, workspaceId, removed);
        await insertDependencies(tx, workspaceId, flowId, [
          ...after.map((dep) => [id, dep] as const),
          ...before.map((b) => [b, id] as const),
        ]);
      },
      events: [{ type: 'task.created', data: { flowId, taskId: id, parentId: task.parentId } }],
      result: (next) => next,
    };
  };
}

export async function updateTaskPlan(
  ctx: FlowContext,
  flowId: string,
  taskId: string,
  body: Static<typeof PatchTaskBody>,
): Promise<Snapshot> {
  const session = await ctx.registry.get(ctx.principal.workspaceId, flowId);
  return session.run(planUpdateTask(flowId, taskId, body), actorId(ctx.principal));
}

export function planUpdateTask(
  flowId: string,
  taskId: string,
  body: Static<typeof PatchTaskBody>,
): Decide<Snapshot> {
  return (current) => {
    const task = requireTask(current, taskId);
    refuseStarted(current, task);
    const estimateHours =
      body.estimateHours !== undefined ? body.estimateHours : task.estimateHours;
    const updated: TaskRecord = {
      ...task,
      name: body.name ?? task.name,
      description: body.description !== undefined ? body.description : task.description,
      estimateHours,
      // A new estimate outside the kept range is refused where the estimate was given.
      estimateRange: checkedRange(
        estimateHours,
        body.estimateRange !== undefined ? body.estimateRange : task.estimateRange,
        body.estimateRange !== undefined ? '/estimateRange' : '/estimateHours',
      ),
      updatedAt: new Date().toISOString(),
    };
    return {
      next: current.next({ replace: [updated] }),
      write: (tx) => updateTask(tx, current.flow.workspaceId, updated),
      events: [{ type: 'task.updated', data: { flowId, taskId, changes: Object.keys(body) } }],
      result: (next) => next,
    };
  };
}

/** Removes the task (and its sub-tasks); whatever waited on it now waits on what it waited on. */
export async function deleteTask(ctx: FlowContext, flowId: string, taskId: string): Promise<void> {
  const session = await ctx.registry.get(ctx.principal.workspaceId, flowId);
  await session.run(planDeleteTask(flowId, taskId), actorId(ctx.principal));
}

export function planDeleteTask(flowId: string, taskId: string): Decide<void> {
  return (current) => {
    const task = requireTask(current, taskId);
    const removed = new Set([taskId, ...(current.children.get(taskId) ?? []).map((s) => s.id)]);
    const now = new Date().toISOString();
    const bridged: [string, string][] = [];
    const relinked = current.state.tasks
      .filter((t) => t.dependsOn.includes(taskId))
      .map((t) => {
        const inherited = task.dependsOn.filter((dep) => !t.dependsOn.includes(dep));
        for (const dep of inherited) bridged.push([t.id, dep]);
        return {
          ...t,
          dependsOn: [...t.dependsOn.filter((dep) => dep !== taskId), ...inherited],
          updatedAt: now,
        };
      });
    return {
      next: current.next({ replace: relinked, remove: removed }),
      write: async (tx) => {
        await insertDependencies(tx, current.flow.workspaceId, flowId, bridged);
        await deleteTasks(tx, current.flow.workspaceId, [...removed]);
      },
      events: [
        {
          type: 'task.deleted',
          data: { flowId, taskId, bridged: bridged.map(([t, d]) => ({ taskId: t, dependsOn: d })) },
        },
      ],
      result: () => undefined,
    };
  };
}

export async function addDependency(
  ctx: FlowContext,
  flowId: string,
  taskId: string,
  dependsOnId: string,
): Promise<Snapshot> {
  const session = await ctx.registry.get(ctx.principal.workspaceId, flowId);
  return session.run(planAddDependency(flowId, taskId, dependsOnId), actorId(ctx.principal));
}

export function planAddDependency(
  flowId: string,
  taskId: string,
  dependsOnId: string,
): Decide<Snapshot> {
  return (current) => {
    const task = requireTask(current, taskId);
    if (task.parentId !== null)
      throw validationFailed([
        { in: 'path', pointer: '/taskId', message: 'a sub-task carries no dependencies' },
      ]);
    if (dependsOnId === taskId)
      throw validationFailed([
        { in: 'body', pointer: '/taskId', message: 'a task cannot depend on itself' },
      ]);
    objectiveAt(current, dependsOnId, '/taskId');
    if (task.dependsOn.includes(dependsOnId))
      throw validationFailed([
        { in: 'body', pointer: '/taskId', message: 'this dependency already exists' },
      ]);
    refuseStarted(current, task);
    const reach = downstream(current, [taskId]);
    if (reach.has(dependsOnId)) {
      const cycle = pathTo(reach, dependsOnId);
      const members = cycle.map((at) => ({ id: at, name: current.task(at)!.name }));
      throw circularDependency(
        `"${current.task(dependsOnId)!.name}" (${dependsOnId}) already waits on "${task.name}" (${taskId})`,
        members,
        WAIT_ORDER,
        'tasks',
        { cycle },
      );
    }
    const updated = {
      ...task,
      dependsOn: [...task.dependsOn, dependsOnId],
      updatedAt: new Date().toISOString(),
    };
    return {
      next: current.next({ replace: [updated] }),
      write: (tx) =>
        insertDependencies(tx, current.flow.workspaceId, flowId, [[taskId, dependsOnId]]),
      events: [{ type: 'task.updated', data: { flowId, taskId, changes: ['dependsOn'] } }],
      result: (next) => next,
    };
  };
}

export async function removeDependency(
  ctx: FlowContext,
  flowId: string,
  taskId: string,
  dependsOnId: string,
): Promise<Snapshot> {
  const session = await ctx.registry.get(ctx.principal.workspaceId, flowId);
  return session.run(planRemoveDependency(flowId, taskId, dependsOnId), actorId(ctx.principal));
}

export function planRemoveDependency(
  flowId: string,
  taskId: string,
  dependsOnId: string,
): Decide<Snapshot> {
  return (current) => {
    const task = requireTask(current, taskId);
    if (!task.dependsOn.includes(dependsOnId))
      throw new DomainError('NOT_FOUND', `${taskId} does not depend on ${dependsOnId}`);
    const updated = {
      ...task,
      dependsOn: task.dependsOn.filter((dep) => dep !== dependsOnId),
      updatedAt: new Date().toISOString(),
    };
    return {
      next: current.next({ replace: [updated] }),
      write: (tx) => deleteDependencies(tx, current.flow.workspaceId, [[taskId, dependsOnId]]),
      events: [{ type: 'task.updated', data: { flowId, taskId, changes: ['dependsOn'] } }],
      result: (next) => next,
    };
  };
}

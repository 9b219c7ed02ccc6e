/** Flow-level commands: create (with its task graph), list, change, archive, restore, publish. */
import { randomBytes } from 'node:crypto';
import type { Static } from '@sinclair/typebox';
import type { CreateFlowBody, ListFlowsQuery, PatchFlowBody } from '../../contract/flow.schema.ts';
import {
  circularDependency,
  notArchived,
  validationFailed,
  type ValidationProblem,
} from '../../platform/errors.ts';
import type { Principal } from '../auth/principal.ts';
import { newId } from '../../platform/ids.ts';
import { buildGraph, topoOrder } from '../../engine/graph.ts';
import type { Sql, Tx } from '../../storage/db.ts';
import {
  announceFlowChange,
  insertDependencies,
  insertEvents,
  insertFlow,
  insertTasks,
  NO_DELIVERABLES,
  NO_TASK_IDS,
  pageFlowIds,
} from '../../storage/flows.store.ts';
import { existingMembers } from '../../storage/members.store.ts';
import { actorId } from './actor.ts';
import { parseDateInput } from './dates.ts';
import { checkedRange, nextFlow, PROGRESS, type FlowRecord, type TaskRecord } from './model.ts';
import type { SessionRegistry } from './registry.ts';
import type { FlowSummaryView } from './flow-body.ts';
import type { Snapshot } from './snapshot.ts';
import type { Page } from '../../platform/paging.ts';

export interface FlowContext {
  sql: Sql;
  registry: SessionRegistry;
  principal: Principal;
}

type NewFlowInput = Static<typeof CreateFlowBody>;
type NewTaskInput = NonNullable<NewFlowInput['tasks']>[number];

/** Refuses references out of range or to self, and cycles (with the cycle's task indexes). */
function checkAfter(tasks: readonly NewTaskInput[]): void {
  const problems: ValidationProblem[] = [];
  const from: number[] = [];
  const to: number[] = [];
  tasks.forEach((task, i) => {
    (task.after ?? []).forEach((dep, j) => {
      if (dep >= tasks.length)
        problems.push({
          in: 'body',
          pointer: `/tasks/${i}/after/${j}`,
          message: `refers to task ${dep}, but there are ${tasks.length}`,
        });
      else if (dep === i)
        problems.push({
          in: 'body',
          pointer: `/tasks/${i}/after/${j}`,
          message: 'a task cannot depend on itself',
        });
      else {
        from.push(dep);
        to.push(i);
      }
    });
  });
  if (problems.length > 0) throw validationFailed(problems);
  const topo = topoOrder(buildGraph(tasks.length, from, to));
  if (topo.cycle) {
    const members = topo.cycle.map((index) => ({ index, name: tasks[index]!.name }));
    throw circularDependency(
      'These tasks wait on each other in a cycle',
      members,
      "each waits on the one before it; #n is the task's index in `tasks`",
      'tasks',
      { cycle: topo.cycle },
    );
  }
}

export async function checkAssignees(
  sql: Sql,
  workspaceId: string,
  assignees: readonly { pointer: string; id: string }[],
): Promise<void> {
  if (assignees.length === 0) return;
  const found = await existingMembers(
    sql,
    workspaceId,
    assignees.map((a) => a.id),
  );
  const unknown = assignees.filter((a) => !found.has(a.id));
  if (unknown.length > 0) {
    throw validationFailed(
      unknown.map((a) => ({
        in: 'body' as const,
        pointer: a.pointer,
        message: `${a.id} is not a member of this workspace`,
      })),
    );
  }
}

/** Also writes `extraEvents`, and runs `alsoInTransaction` in the creating transaction (template uses). */
export async function createFlow(
  ctx: FlowContext,
  input: NewFlowInput,
  extraEvents: { type: string; data: Record<string, unknown> }[] = [],
  alsoInTransaction?: (tx: Tx, flowId: string) => Promise<void>,
): Promise<Snapshot> {
  const tasksInput = input.tasks ?? [];
  checkAfter(tasksInput);
  await checkAssignees(
    ctx.sql,
    ctx.principal.workspaceId,
    tasksInput.flatMap((t, i) =>
      t.assigneeId ? [{ pointer: `/tasks/${i}/assigneeId`, id: t.assigneeId }] : [],
    ),
  );
  const now = new Date().toISOString();
  const flow: FlowRecord = {
    id: newId('flw'),
    workspaceId: ctx.principal.workspaceId,
    name: input.name,
    description: input.description ?? null,
    dueDate: input.dueDate ? parseDateInput(input.dueDate, '/dueDate') : null,
    archived: false,
    publicToken: null,
    version: 1,
    createdAt: now,
    updatedAt: now,
  };
  const ids = tasksInput.map(() => newId('tsk'));
  const tasks: TaskRecord[] = tasksInput.map((t, i) => ({
    id: ids[i]!,
    parentId: null,
    name: t.name,
    description: t.description ?? null,
    estimateHours: t.estimateHours ?? null,
    estimateRange: checkedRange(
      t.estimateHours ?? null,
      t.estimateRange ?? null,
      `/tasks/${i}/estimateRange`,
    ),
    assigneeId: t.assigneeId ?? null,
    progress: PROGRESS.open,
    position: i + 1,
    dependsOn: t.after?.length ? [...new Set(t.after)].map((j) => ids[j]!) : NO_TASK_IDS,
    deliverables: NO_DELIVERABLES,
    createdAt: now,
    updatedAt: now,
  }));
  const state = { flow, tasks };
  const snapshot = await ctx.registry.derive(state);
  await ctx.sql.begin(async (tx) => {
    await insertFlow(tx, flow);
    await insertTasks(tx, flow.workspaceId, flow.id, tasks);
    await insertDependencies(
      tx,
      flow.workspaceId,
      flow.id,
      tasks.flatMap((t) => t.dependsOn.map((dep) => [t.id, dep] as const)),
    );
    await insertEvents(tx, flow.workspaceId, flow.id, actorId(ctx.principal), [
      { type: 'flow.created', data: { flowId: flow.id, name: flow.name, taskCount: tasks.length } },
      ...extraEvents,
    ]);
    await alsoInTransaction?.(tx, flow.id);
    await announceFlowChange(tx, flow.workspaceId, flow.id, flow.version);
  });
  ctx.registry.adopt(snapshot);
  return snapshot;
}

export async function listFlows(
  ctx: FlowContext,
  query: Static<typeof ListFlowsQuery>,
): Promise<Page<FlowSummaryView>> {
  const { total, items } = await pageFlowSnapshots(ctx, query);
  return { total, items: items.map((s) => s.summary()) };
}

/** A page of the workspace's flows as their hot snapshots (one deleted meanwhile is left out). */
export async function pageFlowSnapshots(
  ctx: FlowContext,
  query: Static<typeof ListFlowsQuery>,
): Promise<Page<Snapshot>> {
  const { total, items } = await pageFlowIds(ctx.sql, ctx.principal.workspaceId, query);
  const snapshots = await Promise.all(
    items.map(({ id }) => ctx.registry.snapshot(ctx.principal.workspaceId, id).catch(() => null)),
  );
  return { total, items: snapshots.filter((s): s is Snapshot => s !== null) };
}

type FlowPatch = {
  -readonly [K in 'name' | 'description' | 'dueDate' | 'archived' | 'publicToken']?: FlowRecord[K];
};

/** Runs a flow-record change through the flow's session; a change that changes nothing writes nothing. */
async function changeFlow(
  ctx: FlowContext,
  flowId: string,
  decide: (flow: FlowRecord) => { patch: FlowPatch; event?: string },
): Promise<Snapshot> {
  const session = await ctx.registry.get(ctx.principal.workspaceId, flowId);
  return session.run((current) => {
    const { patch, event } = decide(current.flow);
    const changes = Object.entries(patch)
      .filter(([key, value]) => current.flow[key as keyof FlowRecord] !== value)
      .map(([key]) => key);
    if (changes.length === 0) return { next: null, result: (next) => next };
    const flow = nextFlow(current.flow, patch);
    return {
      next: { flow, tasks: current.state.tasks },
      events: event ? [{ type: event, data: { flowId, changes } }] : [],
      result: (next) => next,
    };
  }, actorId(ctx.principal));
}

export function updateFlow(
  ctx: FlowContext,
  flowId: string,
  body: Static<typeof PatchFlowBody>,
): Promise<Snapshot> {
  const patch: FlowPatch = {};
  if (body.name !== undefined) patch.name = body.name;
  if (body.description !== undefined) patch.description = body.description;
  if (body.dueDate !== undefined)
    patch.dueDate = body.dueDate === null ? null : parseDateInput(body.dueDate, '/dueDate');
  return changeFlow(ctx, flowId, () => ({ patch, event: 'flow.updated' }));
}

/** Archiving also withdraws the public link, so a restore never brings a leaked one back (docs/security.md). */
export function archiveFlow(ctx: FlowContext, flowId: string): Promise<Snapshot> {
  return changeFlow(ctx, flowId, () => ({
    patch: { archived: true, publicToken: null },
    event: 'flow.archived',
  }));
}

export function restoreFlow(ctx: FlowContext, flowId: string): Promise<Snapshot> {
  return changeFlow(ctx, flowId, (flow) => {
    if (!flow.archived) throw notArchived('flow');
    return { patch: { archived: false }, event: 'flow.restored' };
  });
}

/** A fresh unguessable link each time; the old one stops working at once. */
export function publishFlow(ctx: FlowContext, flowId: string): Promise<Snapshot> {
  return changeFlow(ctx, flowId, () => ({
    patch: { publicToken: randomBytes(24).toString('base64url') },
    event: 'flow.published',
  }));
}

export function unpublishFlow(ctx: FlowContext, flowId: string): Promise<Snapshot> {
  return changeFlow(ctx, flowId, () => ({
    patch: { publicToken: null },
    event: 'flow.unpublished',
  }));
}

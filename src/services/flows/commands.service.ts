/**
 * Commands as data (CONTRACT §5): a list of the single routes' commands, each judged by its
 * route's own rules on the state the ones before it left. A batch commits them as one change
 * (one transaction, one version step, each command's events in order); a what-if derives them
 * on a private chain of snapshots and commits nothing.
 *
 * Nothing is copied whole: each step builds the next state by structural sharing. A batch
 * derives each step from the one before (incrementally where the graph kept its shape), as a
 * single route's command does; a what-if derives only when a command reads status or the
 * graph (draft.ts), and at the end. The session's own snapshot is never touched.
 */
import { WORK_OPS, type Command, type Outlook } from '../../contract/plan.schema.ts';
import {
  DomainError,
  insufficientScope,
  validationFailed,
  type ValidationProblem,
} from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { writeTaskChanges, type DomainEvent } from '../../storage/flows.store.ts';
import { existingMembers } from '../../storage/members.store.ts';
import { actorId } from './actor.ts';
import type { FlowContext } from './flows.service.ts';
import { refuseLateFinish, scheduleStart } from './schedule.ts';
import { taskUnblocked, unblockedEvents, type Decide, type Derive } from './session.ts';
import type { FlowView, Snapshot } from './snapshot.ts';
import { Draft, NotDerived } from './draft.ts';
import { changedTasks, outlook, type ChangedTask } from './outlook.ts';
import {
  planAddDependency,
  planCreateTask,
  planDeleteTask,
  planRemoveDependency,
  planUpdateTask,
} from './tasks.service.ts';
import { planAssign, planComplete, planReopen, planStart } from './transitions.service.ts';

/** One command ready to judge: its position, the task it makes or acts on, its plan. */
interface Step {
  index: number;
  op: Command['op'];
  taskId: string;
  decide: Decide<unknown>;
  /** What prepare found wrong with it (an unknown ref or member), as its single route would say it. */
  problems: ValidationProblem[];
  /** A createTask's `ref`. */
  ref?: string;
}

/**
 * The list as steps: `$ref`s resolved to the ids their createTask commands will make, and
 * assignees looked up once. A problem found here (an unknown ref or member) is raised when
 * its step is judged, so the first refusal is the first command that fails, as when sent alone.
 */
async function prepare(ctx: FlowContext, flowId: string, commands: Command[]): Promise<Step[]> {
  const assignees = commands.flatMap((c) =>
    (c.op === 'createTask' || c.op === 'assign') && c.assigneeId ? [c.assigneeId] : [],
  );
  const members =
    assignees.length > 0
      ? await existingMembers(ctx.sql, ctx.principal.workspaceId, assignees)
      : new Set<string>();
  const refs = new Map<string, string>();
  return commands.map((command, index) => {
    const problems: ValidationProblem[] = [];
    const resolve = (id: string, pointer: string): string => {
      if (!id.startsWith('$')) return id;
      const resolved = refs.get(id.slice(1));
      if (resolved) return resolved;
      problems.push({
        // The id a single route takes in its path (taskId), or a body field.
        in: pointer === '/taskId' ? 'path' : 'body',
        pointer,
        message: `${id} names no task an earlier createTask of this list made`,
      });
      return id;
    };
    if ('assigneeId' in command && command.assigneeId && !members.has(command.assigneeId))
      problems.push({
        in: 'body',
        pointer: '/assigneeId',
        message: `${command.assigneeId} is not a member of this workspace`,
      });
    let taskId: string;
    let decide: Decide<unknown>;
    let made: string | undefined;
    if (command.op === 'createTask') {
      const { op: _op, ref, ...body } = command;
      taskId = newId('tsk');
      const resolved = {
        ...body,
        ...(body.parentId !== undefined && { parentId: resolve(body.parentId, '/parentId') }),
        ...(body.after && { after: body.after.map((id, k) => resolve(id, `/after/${k}`)) }),
        ...(body.before && { before: body.before.map((id, k) => resolve(id, `/before/${k}`)) }),
      };
      if (ref !== undefined) {
        if (refs.has(ref))
          problems.push({ in: 'body', pointer: '/ref', message: `$${ref} is already taken` });
        else refs.set(ref, taskId);
        made = ref;
      }
      decide = planCreateTask(flowId, taskId, resolved);
    } else {
      taskId = resolve(command.taskId, '/taskId');
      switch (command.op) {
        case 'updateTask': {
          const { op: _op, taskId: _id, ...body } = command;
          decide = planUpdateTask(flowId, taskId, body);
          break;
        }
        case 'deleteTask':
          decide = planDeleteTask(flowId, taskId);
          break;
        case 'addDependency':
          decide = planAddDependency(flowId, taskId, resolve(command.dependsOnId, '/dependsOnId'));
          break;
        case 'removeDependency':
          decide = planRemoveDependency(
            flowId,
            taskId,
            resolve(command.dependsOnId, '/dependsOnId'),
          );
          break;
        case 'start':
          decide = planStart(flowId, taskId);
          break;
        case 'complete':
          decide = planComplete(flowId, taskId);
          break;
        case 'reopen':
          decide = planReopen(flowId, taskId);
          break;
        case 'assign':
          decide = planAssign(flowId, taskId, command.assigneeId);
          break;
      }
    }
    return { index, op: command.op, taskId, decide, problems, ref: made };
  });
}

/**
 * Where a single route's refusal points, in the list: a path id or body field of command
 * `index`. addDependency's body names the task waited on `taskId`; its command, `dependsOnId`.
 */
function pointerIn(step: Step, problem: ValidationProblem): ValidationProblem {
  const field =
    step.op === 'addDependency' && problem.in === 'body' && problem.pointer === '/taskId'
      ? '/dependsOnId'
      : problem.pointer;
  return { ...problem, in: 'body', pointer: `/commands/${step.index}${field}` };
}

/** The route's own refusal, with the command's position (`details.index`) added. */
function refusalAt(step: Step, error: unknown): unknown {
  if (!(error instanceof DomainError)) return error;
  const details = error.details ?? {};
  const problems = Array.isArray(details.errors)
    ? (details.errors as ValidationProblem[]).map((p) => pointerIn(step, p))
    : null;
  // A validation refusal is worded again from its pointers in the list.
  const message = problems ? validationFailed(problems).message : error.message;
  return new DomainError(
    error.code,
    `Command ${step.index} (${step.op}): ${message}`,
    { ...details, ...(problems && { errors: problems }), index: step.index },
    error.hints,
  );
}

/** Judges one step on `snapshot`: its plan, or its refusal placed in the list. */
function judge(step: Step, snapshot: FlowView) {
  try {
    if (step.problems.length > 0) throw validationFailed(step.problems);
    return step.decide(snapshot);
  } catch (error) {
    throw refusalAt(step, error);
  }
}

interface Applied {
  snapshot: Snapshot;
  events: DomainEvent[];
}

/**
 * The steps applied one after another from `current`, each derived from the one before. Every
 * step's state carries the one version after `current`'s: the list is one change.
 */
async function apply(
  current: Snapshot,
  steps: Step[],
  derive: Derive,
  /** A batch's events; a what-if emits none and skips their work. */
  withEvents: boolean,
): Promise<Applied> {
  /** The version derived last, and what the steps since made of it (a draft, until derived). */
  let snapshot = current;
  let view: Snapshot | Draft = current;
  const events: DomainEvent[] = [];
  const version = current.version + 1;
  const settle = async (): Promise<Snapshot> => {
    if (view instanceof Draft)
      snapshot = await derive(view.state, snapshot, view.replacedPositions());
    view = snapshot;
    return snapshot;
  };
  for (const step of steps) {
    let plan;
    try {
      plan = judge(step, view);
    } catch (error) {
      if (!(error instanceof NotDerived)) throw error;
      // The command reads the graph: derive what the drafts left, and judge again.
      plan = judge(step, await settle());
    }
    if (!plan.next) continue;
    const before: Snapshot | Draft = view;
    const drafted = Draft.after(before, plan.next, version);
    if (drafted) {
      view = drafted.draft;
      if (withEvents)
        events.push(
          ...(plan.events ?? []),
          ...taskUnblocked(current.flow.id, drafted.draft.unblockedSince(before, drafted.changed)),
        );
      continue;
    }
    // A task removed, moved or re-parented, or a sub-task changed: derived at once.
    const state = { ...plan.next, flow: { ...plan.next.flow, version } };
    const previous = await settle();
    const next = await derive(state, previous);
    if (withEvents) events.push(...(plan.events ?? []), ...unblockedEvents(previous, next));
    snapshot = next;
    view = next;
  }
  return { snapshot: await settle(), events };
}

/** Moving work needs work:write beside the route's flows:write, as the single routes do. */
function requireWorkScope(ctx: FlowContext, commands: Command[]): void {
  if (!commands.some((c) => WORK_OPS.has(c.op))) return;
  if (!ctx.principal.scopes.includes('work:write'))
    throw insufficientScope(['flows:write', 'work:write'], ['work:write']);
}

export interface BatchResult {
  version: number;
  results: { index: number; taskId: string }[];
}

/** All the commands as one change, or none of them. */
export async function runBatch(
  ctx: FlowContext,
  flowId: string,
  body: { commands: Command[]; ifVersion?: number },
): Promise<BatchResult> {
  // The flow first: another workspace's flow is 404 whatever the commands name.
  const session = await ctx.registry.get(ctx.principal.workspaceId, flowId);
  requireWorkScope(ctx, body.commands);
  const steps = await prepare(ctx, flowId, body.commands);
  const results = steps.map(({ index, taskId }) => ({ index, taskId }));
  return session.run(async (current, derive) => {
    if (body.ifVersion !== undefined && body.ifVersion !== current.version)
      throw new DomainError(
        'VERSION_MISMATCH',
        `The flow is at version ${current.version}, not ${body.ifVersion}: read it again and decide anew`,
        { version: current.version },
      );
    const applied = await apply(current, steps, derive, true);
    if (applied.snapshot === current)
      return { next: null, result: () => ({ version: current.version, results }) };
    return {
      next: applied.snapshot.state,
      derived: applied.snapshot,
      // The list's net change, in a few statements: not each command's writes one by one.
      write: (tx) =>
        writeTaskChanges(tx, flowId, current.state, applied.snapshot.state, current.index),
      events: applied.events,
      result: (next) => ({ version: next.version, results }),
    };
  }, actorId(ctx.principal));
}

export interface WhatIfView {
  version: number;
  current: Outlook;
  scenario: Outlook;
  finishDeltaDays: number | null;
  changed: ChangedTask[];
}

/** The flow as the commands would leave it, beside the flow as it is; nothing is committed. */
export async function whatIf(
  ctx: FlowContext,
  flowId: string,
  body: { commands: Command[]; startDate?: string },
): Promise<WhatIfView> {
  const session = await ctx.registry.get(ctx.principal.workspaceId, flowId);
  const start = scheduleStart(body.startDate);
  const steps = await prepare(ctx, flowId, body.commands);
  // The snapshot as it stands: readers never queue, and nothing here is adopted.
  const current = session.snapshot;
  const { snapshot: scenario } = await apply(
    current,
    steps,
    (state, previous, replaced) => ctx.registry.derive(state, previous, replaced),
    false,
  );
  // Refused where the caller chose the start, as the schedule is: now, or as the commands leave it.
  if (body.startDate !== undefined)
    for (const finish of [current.finish, scenario.finish]) refuseLateFinish(start, finish, 'body');
  const refs = new Map(steps.flatMap((step) => (step.ref ? [[step.taskId, step.ref]] : [])));
  return {
    version: current.version,
    current: outlook(current, start),
    scenario: outlook(scenario, start),
    finishDeltaDays:
      current.finish >= 0 && scenario.finish >= 0 ? scenario.finish - current.finish : null,
    changed: changedTasks(current, scenario, start, refs),
  };
}

/**
 * Commands as data: a list of the single routes' commands, each judged by its route's own rules
 * on the state the ones before it left, applied one after another from a version, and what a
 * list costs. Nothing here reads the database or holds a session: a batch (commands.service.ts)
 * commits what this derives, and a what-if's scenario is derived here, in this thread or on the
 * what-if lane's worker (workers/what-if.worker.ts), the same code either way.
 *
 * Nothing is copied whole: each step builds the next state by structural sharing. A step is
 * derived from the one before (incrementally where the graph kept its shape) only when a
 * command reads status or the graph (draft.ts), or changed the graph's shape, and at the end.
 * The version the list started from is never touched.
 */
import {
  KEPT_SHAPE_COMMAND_WORK,
  COMMAND_WORK_PER_TOKEN,
  type Command,
  type Outlook,
} from '../../contract/plan.schema.ts';
import { DomainError, validationFailed, type ValidationProblem } from '../../platform/errors.ts';
import type { TaskRecord } from './model.ts';
import { newId } from '../../platform/ids.ts';
import type { DomainEvent } from '../../storage/flows.store.ts';
import { refuseLateFinish } from './schedule.ts';
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
export interface Step {
  index: number;
  op: Command['op'];
  taskId: string;
  decide: Decide<unknown>;
  /** What stepsOf found wrong with it (an unknown ref or member), as its single route would say it. */
  problems: ValidationProblem[];
  /** A createTask's `ref`. */
  ref?: string;
}

/**
 * The list as steps: `$ref`s resolved to the ids their createTask commands will make, and
 * assignees checked against `members` (the ones the list names that belong to the workspace).
 * A problem found here (an unknown ref or member) is raised when its step is judged, so the
 * first refusal is the first command that fails, as when sent alone.
 */
export function stepsOf(flowId: string, commands: Command[], members: ReadonlySet<string>): Step[] {
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

/** Awaited between steps: gives other requests a turn of the event loop now and then. */
export type Pause = () => Promise<void>;

/**
 * A turn of the event loop once `everyMs` have passed since the last: a long list run in this
 * thread holds it for about one step at a time, however many steps it has.
 */
export function turnsEvery(everyMs: number): Pause {
  let since = performance.now();
  return async () => {
    if (performance.now() - since < everyMs) return;
    await new Promise((resolve) => setImmediate(resolve));
    since = performance.now();
  };
}

export interface Applied {
  snapshot: Snapshot;
  events: DomainEvent[];
}

/**
 * The steps applied one after another from `current`, each derived from the one before. Every
 * step's state carries the one version after `current`'s: the list is one change. A version
 * derived from another step's has its change marks made against `current` (marksAgainst), so
 * neither a committed batch's first read nor its memory pays for each step.
 */
export async function apply(
  current: Snapshot,
  steps: Step[],
  derive: Derive,
  /** A batch's events; a what-if emits none and skips their work. */
  withEvents: boolean,
  pause: Pause,
): Promise<Applied> {
  /** The version derived last, and what the steps since made of it (a draft, until derived). */
  let snapshot = current;
  let view: Snapshot | Draft = current;
  const events: DomainEvent[] = [];
  const version = current.version + 1;
  const derived = (next: Snapshot, previous: Snapshot): Snapshot => {
    if (previous !== current) next.marksAgainst(current);
    return next;
  };
  const settle = async (): Promise<Snapshot> => {
    if (view instanceof Draft) {
      const previous = snapshot;
      snapshot = derived(await derive(view.state, previous, view.replacedPositions()), previous);
    }
    view = snapshot;
    return snapshot;
  };
  for (const step of steps) {
    await pause();
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
    const next = derived(await derive(state, previous), previous);
    if (withEvents) events.push(...(plan.events ?? []), ...unblockedEvents(previous, next));
    snapshot = next;
    view = next;
  }
  return { snapshot: await settle(), events };
}

/**
 * What a list changed of a flow's tasks, from the records before to the records after (the
 * same record where a task is unchanged): the records replaced, the ids removed, the records
 * added, in the order they stand after. Applied to the list before (withTasks), they make the
 * list after.
 */
export function changesBetween(
  before: readonly TaskRecord[],
  after: readonly TaskRecord[],
): { replace: TaskRecord[]; remove: string[]; add: TaskRecord[] } {
  const left = new Map(before.map((task) => [task.id, task]));
  const replace: TaskRecord[] = [];
  const add: TaskRecord[] = [];
  for (const task of after) {
    const old = left.get(task.id);
    if (!old) add.push(task);
    else {
      left.delete(task.id);
      if (old !== task) replace.push(task);
    }
  }
  return { replace, remove: [...left.keys()], add };
}

export interface WhatIfView {
  version: number;
  current: Outlook;
  scenario: Outlook;
  finishDeltaDays: number | null;
  changed: ChangedTask[];
}

/** The flow as the steps would leave `current`, beside `current` itself, from `start`. */
export async function scenarioOf(
  current: Snapshot,
  steps: Step[],
  start: { date: string; given: boolean },
  derive: Derive,
  pause: Pause,
): Promise<WhatIfView> {
  const { snapshot: scenario } = await apply(current, steps, derive, false, pause);
  // Refused where the caller chose the start, as the schedule is: now, or as the commands leave it.
  if (start.given)
    for (const finish of [current.finish, scenario.finish])
      refuseLateFinish(start.date, finish, 'body');
  const refs = new Map(steps.flatMap((step) => (step.ref ? [[step.taskId, step.ref]] : [])));
  return {
    version: current.version,
    current: outlook(current, start.date),
    scenario: outlook(scenario, start.date),
    finishDeltaDays:
      current.finish >= 0 && scenario.finish >= 0 ? scenario.finish - current.finish : null,
    changed: changedTasks(current, scenario, start.date, refs),
  };
}

/**
 * The work a list asks of the server on `flow`, in task derivations: each command that changes
 * the graph's shape (a deletion, a dependency added or removed, a task created before others or
 * under an objective, a change to a sub-task) makes the whole flow be derived again, every one
 * of its tasks; any other is derived with the rest at the end, from the version before, and
 * counts KEPT_SHAPE_COMMAND_WORK.
 */
export function commandsWork(flow: FlowView, commands: readonly Command[]): number {
  let size = flow.size;
  const subtaskRefs = new Set<string>();
  const onSubtask = (taskId: string) =>
    taskId.startsWith('$')
      ? subtaskRefs.has(taskId.slice(1))
      : (flow.task(taskId)?.parentId ?? null) !== null;
  let work = 0;
  for (const command of commands) {
    let whole: boolean;
    if (command.op === 'createTask') {
      whole = command.parentId !== undefined || (command.before?.length ?? 0) > 0;
      if (command.parentId !== undefined && command.ref !== undefined) subtaskRefs.add(command.ref);
      size++;
    } else
      whole =
        command.op === 'deleteTask' ||
        command.op === 'addDependency' ||
        command.op === 'removeDependency' ||
        onSubtask(command.taskId);
    work += whole ? size : KEPT_SHAPE_COMMAND_WORK;
  }
  return work;
}

/** What a list costs of the rate budget: one request, and one more for each COMMAND_WORK_PER_TOKEN of its work. */
export const commandsCost = (flow: FlowView, commands: readonly Command[]): number =>
  1 + Math.floor(commandsWork(flow, commands) / COMMAND_WORK_PER_TOKEN);

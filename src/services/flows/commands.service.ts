/**
 * Batches and what-ifs (commands.ts has the lists' rules). A batch commits its list as one
 * change (one transaction, one version step, each command's events in order) in the flow's
 * session; a what-if derives its list on a private chain of snapshots and commits nothing. A
 * small list runs in this thread, giving the event loop a turn between steps; a large one (from
 * `offloadWork` task derivations) on the pool's commands lane, so a 20,000-task flow's list of
 * 500 deletions never holds the event loop: a batch's worker sends back what the list changed,
 * and this thread derives and commits that once. One workspace runs at most `whatIfsAtOnce`
 * what-ifs at once in a process.
 */
import { WORK_OPS, type Command } from '../../contract/plan.schema.ts';
import { DomainError, insufficientScope } from '../../platform/errors.ts';
import { writeTaskChanges } from '../../storage/flows.store.ts';
import { existingMembers } from '../../storage/members.store.ts';
import { actorId } from './actor.ts';
import {
  apply,
  commandsWork,
  scenarioOf,
  stepsOf,
  turnsEvery,
  type WhatIfView,
} from './commands.ts';
import { answerOf, changesOf, chunksOf } from './commands-task.ts';
import type { FlowContext } from './flows.service.ts';
import type { RecomputePool } from './recompute-pool.ts';
import { scheduleStart } from './schedule.ts';
import type { Plan } from './session.ts';
import type { Snapshot } from './snapshot.ts';

/** How long a list run in this thread holds the event loop at most before giving other requests a turn. */
const TURN_EVERY_MS = 10;

/** Which of the assignees the commands name are members of the workspace. */
async function membersNamed(ctx: FlowContext, commands: Command[]): Promise<Set<string>> {
  const assignees = commands.flatMap((c) =>
    (c.op === 'createTask' || c.op === 'assign') && c.assigneeId ? [c.assigneeId] : [],
  );
  return assignees.length > 0
    ? existingMembers(ctx.sql, ctx.principal.workspaceId, assignees)
    : new Set<string>();
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

export interface CommandListOptions {
  /** What-ifs one workspace may run at once in this process; the next is refused 429. */
  whatIfsAtOnce: number;
  /** From this much work (commandsWork) a list runs on the pool's commands lane. */
  offloadWork: number;
}

/** Batches and what-ifs, in this thread or on the commands lane; and each workspace's what-ifs running now. */
export class CommandLists {
  readonly #whatIfs = new Map<string, number>();

  constructor(
    private readonly pool: RecomputePool,
    private readonly options: CommandListOptions,
  ) {}

  /** A list on `current` as the lane takes it. */
  async #list(current: Snapshot, commands: Command[], members: Set<string>) {
    return {
      flow: current.flow,
      chunks: await chunksOf(current.state.tasks),
      size: current.size,
      commands,
      members: [...members],
    };
  }

  /** All the commands as one change, or none of them. */
  async batch(
    ctx: FlowContext,
    flowId: string,
    body: { commands: Command[]; ifVersion?: number },
  ): Promise<BatchResult> {
    // The flow first: another workspace's flow is 404 whatever the commands name.
    const session = await ctx.registry.get(ctx.principal.workspaceId, flowId);
    requireWorkScope(ctx, body.commands);
    const members = await membersNamed(ctx, body.commands);
    return session.run(async (current, derive): Promise<Plan<BatchResult>> => {
      if (body.ifVersion !== undefined && body.ifVersion !== current.version)
        throw new DomainError(
          'VERSION_MISMATCH',
          `The flow is at version ${current.version}, not ${body.ifVersion}: read it again and decide anew`,
          { version: current.version },
        );
      const unchanged = (results: BatchResult['results']) => ({
        next: null,
        result: () => ({ version: current.version, results }),
      });
      if (commandsWork(current, body.commands) >= this.options.offloadWork) {
        const list = await this.#list(current, body.commands, members);
        const answer = await this.pool.commands(
          { kind: 'batch', ...list },
          ctx.principal.workspaceId,
        );
        const { results, changes, events } = answerOf(answer).batch;
        if (!changes) return unchanged(results);
        // What the list changed, applied to the flow as it stands, derived once (the worker's
        // events already hold each step's task.unblocked).
        const next = current.next(await changesOf(changes));
        const derived = await derive(next, current);
        return {
          next,
          derived,
          write: (tx) => writeTaskChanges(tx, flowId, current.state, next, current.index),
          events,
          result: (committed) => ({ version: committed.version, results }),
        };
      }
      const steps = stepsOf(flowId, body.commands, members);
      const results = steps.map(({ index, taskId }) => ({ index, taskId }));
      const applied = await apply(current, steps, derive, true, turnsEvery(TURN_EVERY_MS));
      if (applied.snapshot === current) return unchanged(results);
      return {
        next: applied.snapshot.state,
        derived: applied.snapshot,
        // The list's net change, in a few statements: not each command's writes one by one.
        write: (tx) =>
          writeTaskChanges(tx, flowId, current.state, applied.snapshot.state, current.index),
        events: applied.events,
        result: (committed) => ({ version: committed.version, results }),
      };
    }, actorId(ctx.principal));
  }

  /**
   * The flow as the commands would leave it, beside the flow as it is; nothing is committed. A
   * large list's answer comes as the JSON bytes its worker made.
   */
  async whatIf(
    ctx: FlowContext,
    flowId: string,
    body: { commands: Command[]; startDate?: string },
  ): Promise<WhatIfView | Buffer> {
    const session = await ctx.registry.get(ctx.principal.workspaceId, flowId);
    const { workspaceId } = ctx.principal;
    const running = this.#whatIfs.get(workspaceId) ?? 0;
    const { whatIfsAtOnce, offloadWork } = this.options;
    if (running >= whatIfsAtOnce)
      throw new DomainError(
        'RATE_LIMITED',
        `This workspace has ${running} what-ifs running, at most ${whatIfsAtOnce} at once (WHAT_IF_CONCURRENCY): retry when one has answered`,
        { limit: whatIfsAtOnce, retryAfter: 1 },
        { retryAfterSeconds: 1 },
      );
    this.#whatIfs.set(workspaceId, running + 1);
    try {
      // The snapshot as it stands: readers never queue, and nothing here is adopted.
      const current = session.snapshot;
      const start = { date: scheduleStart(body.startDate), given: body.startDate !== undefined };
      const members = await membersNamed(ctx, body.commands);
      if (commandsWork(current, body.commands) < offloadWork)
        return await scenarioOf(
          current,
          stepsOf(flowId, body.commands, members),
          start,
          (state, previous, replaced) => ctx.registry.derive(state, previous, replaced),
          turnsEvery(TURN_EVERY_MS),
        );
      const list = await this.#list(current, body.commands, members);
      const { json } = answerOf(
        await this.pool.commands({ kind: 'what-if', start, ...list }, workspaceId),
      );
      return Buffer.from(json.buffer, json.byteOffset, json.byteLength);
    } finally {
      const left = (this.#whatIfs.get(workspaceId) ?? 1) - 1;
      if (left > 0) this.#whatIfs.set(workspaceId, left);
      else this.#whatIfs.delete(workspaceId);
    }
  }
}

/**
 * Piscina worker of the commands lane: a large what-if or batch's list, off the main thread. The
 * flow arrives as it stands (its tasks in serialized slices) and is derived here in full; the
 * list is judged and derived step by step by the same code as in the main thread
 * (src/services/flows/commands.ts), the engine running in this thread. A what-if's answer goes
 * back as its JSON bytes; a batch's as what it changed, its events and the ids it made, which
 * the main thread commits; either moved, not copied. A refusal of the list goes back as data.
 */
import { move, transferableSymbol, valueSymbol } from 'piscina';
import { recompute, type RecomputeInput } from '../src/engine/recompute.ts';
import { DomainError } from '../src/platform/errors.ts';
import { markStarted, type Started } from '../src/platform/worker-pool.ts';
import { apply, changesBetween, scenarioOf, stepsOf } from '../src/services/flows/commands.ts';
import {
  buffersOf,
  chunksOf,
  refusalOf,
  stateOf,
  type BatchAnswer,
  type CommandsTask,
  type WhatIfAnswer,
} from '../src/services/flows/commands-task.ts';
import type { FlowState } from '../src/services/flows/model.ts';
import { Snapshot, type Recompute } from '../src/services/flows/snapshot.ts';

const inThisThread: Recompute = Object.assign(async (input: RecomputeInput) => recompute(input), {
  incremental: <T>(derive: () => T): T => derive(),
});

/** No public links are rendered here: neither answer carries one. */
const NO_PUBLIC_URL = '';

const derive = (state: FlowState, previous?: Snapshot, replaced?: readonly number[]) =>
  Snapshot.derive(state, inThisThread, NO_PUBLIC_URL, previous, replaced);

/** This thread serves nothing else: no turns to give between steps. */
const noTurns = async () => {};

/** An answer whose buffers Piscina moves; it unwraps the movable, so the other side receives the answer itself. */
const moved = <A extends object>(answer: A, buffers: ArrayBuffer[]): A =>
  move({
    get [transferableSymbol]() {
      return buffers;
    },
    get [valueSymbol]() {
      return answer;
    },
  }) as unknown as A;

export default async function commands(
  task: CommandsTask & Started,
): Promise<WhatIfAnswer | BatchAnswer> {
  markStarted(task);
  try {
    const current = await derive(await stateOf(task));
    const steps = stepsOf(task.flow.id, task.commands, new Set(task.members));
    if (task.kind === 'what-if') {
      const view = await scenarioOf(current, steps, task.start, derive, noTurns);
      const json = new TextEncoder().encode(JSON.stringify(view));
      return moved<WhatIfAnswer>({ json }, buffersOf([json]));
    }
    const applied = await apply(current, steps, derive, true, noTurns);
    const results = steps.map(({ index, taskId }) => ({ index, taskId }));
    if (applied.snapshot === current) return { batch: { results, changes: null, events: [] } };
    const changed = changesBetween(current.state.tasks, applied.snapshot.state.tasks);
    const replace = await chunksOf(changed.replace);
    const add = await chunksOf(changed.add);
    return moved<BatchAnswer>(
      {
        batch: {
          results,
          events: applied.events,
          changes: { replace, remove: changed.remove, add },
        },
      },
      buffersOf([...replace, ...add]),
    );
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    return refusalOf(error);
  }
}

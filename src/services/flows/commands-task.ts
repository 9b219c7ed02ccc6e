/**
 * A large command list as the pool's commands lane takes it (workers/commands.worker.ts): the
 * flow as it stands, its tasks serialized a slice at a time with a turn of the event loop after
 * each, so a 20,000-task flow never holds the loop for more than a few milliseconds; and what
 * comes back. A what-if's answer comes as its JSON bytes; a batch's as the records it changed,
 * serialized in slices too, with the ids it made and its events, to be committed here; a
 * refusal of the list, as data to raise again on this side.
 */
import { deserialize, serialize } from 'node:v8';
import type { Command } from '../../contract/plan.schema.ts';
import { DomainError, type ErrorCode, type ErrorHints } from '../../platform/errors.ts';
import type { DomainEvent } from '../../storage/flows.store.ts';
import type { FlowRecord, FlowState, TaskChanges, TaskRecord } from './model.ts';

/** Tasks serialized at a time: about 2 ms of the event loop each (1 µs a task measured here). */
const TASKS_PER_CHUNK = 2000;

/** A list on a flow as it stands. */
interface ListOnFlow {
  flow: FlowRecord;
  /** The tasks, TASKS_PER_CHUNK at a time, each slice serialized (node:v8) into a buffer of its own. */
  chunks: Uint8Array[];
  /** How many tasks. */
  size: number;
  commands: Command[];
  /** The assignees the commands name that are members of the workspace. */
  members: string[];
}

/** A what-if (its answer; nothing committed, from its schedule start) or a batch (its changes, committed here). */
export type CommandsTask =
  | (ListOnFlow & { kind: 'what-if'; start: { date: string; given: boolean } })
  | (ListOnFlow & { kind: 'batch' });

export interface Refusal {
  refusal: {
    code: ErrorCode;
    message: string;
    details: Record<string, unknown> | undefined;
    hints: ErrorHints;
  };
}

/** A batch's outcome: what its list changed of the flow's tasks (in chunks), the ids it made, its events. */
export interface BatchOutcome {
  results: { index: number; taskId: string }[];
  /** Null when the list changed nothing. */
  changes: { replace: Uint8Array[]; remove: string[]; add: Uint8Array[] } | null;
  events: DomainEvent[];
}

export type WhatIfAnswer = { json: Uint8Array } | Refusal;
export type BatchAnswer = { batch: BatchOutcome } | Refusal;
/** What the lane answers a task of its kind. */
export type AnswerTo<T extends CommandsTask> = T extends { kind: 'what-if' }
  ? WhatIfAnswer
  : BatchAnswer;

const turn = () => new Promise((resolve) => setImmediate(resolve));

/** Records as chunks for the other side, a turn of the event loop after each. */
export async function chunksOf(tasks: readonly TaskRecord[]): Promise<Uint8Array[]> {
  const chunks: Uint8Array[] = [];
  for (let from = 0; from < tasks.length; from += TASKS_PER_CHUNK) {
    chunks.push(serialize(tasks.slice(from, from + TASKS_PER_CHUNK)));
    await turn();
  }
  return chunks;
}

/** The records `chunksOf` made, a turn of the event loop after each chunk. */
export async function recordsOf(chunks: readonly Uint8Array[]): Promise<TaskRecord[]> {
  const tasks: TaskRecord[] = [];
  for (const chunk of chunks) {
    for (const record of deserialize(chunk) as TaskRecord[]) tasks.push(record);
    await turn();
  }
  return tasks;
}

/** The state a task carries (in the worker). */
export async function stateOf(task: ListOnFlow): Promise<FlowState> {
  return { flow: task.flow, tasks: await recordsOf(task.chunks) };
}

/** The buffers of chunks, to move rather than copy. */
export const buffersOf = (chunks: readonly Uint8Array[]): ArrayBuffer[] =>
  chunks.map((chunk) => chunk.buffer as ArrayBuffer);

/** A refusal as the worker sends it back. */
export const refusalOf = (error: DomainError): Refusal => ({
  refusal: { code: error.code, message: error.message, details: error.details, hints: error.hints },
});

/** The answer, its refusal raised again (on this side). */
export function answerOf<A extends object>(answer: A | Refusal): A {
  if ('refusal' in answer) {
    const { code, message, details, hints } = answer.refusal;
    throw new DomainError(code, message, details, hints);
  }
  return answer;
}

/** A batch outcome's changes as records again. */
export async function changesOf(
  changes: NonNullable<BatchOutcome['changes']>,
): Promise<TaskChanges> {
  return {
    replace: await recordsOf(changes.replace),
    remove: new Set(changes.remove),
    add: await recordsOf(changes.add),
  };
}

import { TASK_STATUSES, type TaskStatus } from '../contract/vocabulary.ts';
import type { Graph } from './graph.ts';

/**
 * Stored facts (progress) versus derived status: only progress is persisted;
 * ready/blocked follow from the graph and are recomputed, never stored.
 * Plain consts (not const enums) so isolatedModules/tsx keep them. The progress codes are
 * defined here only: the domain (services/flows/model.ts) re-exports them.
 */
export const PROGRESS = { open: 0, started: 1, done: 2 } as const;
export type Progress = (typeof PROGRESS)[keyof typeof PROGRESS];

/** The position of `name` in the list `T`, as a type. */
type IndexOf<T extends readonly unknown[], name, seen extends unknown[] = []> = T extends readonly [
  infer first,
  ...infer rest,
]
  ? first extends name
    ? seen['length']
    : IndexOf<rest, name, [...seen, first]>
  : never;

// A derived status code is its name's index in the contract's TASK_STATUSES: typed so, these stop
// compiling if that list is ever reordered.
export const STATUS_BLOCKED: IndexOf<typeof TASK_STATUSES, 'blocked'> = 0;
export const STATUS_READY: IndexOf<typeof TASK_STATUSES, 'ready'> = 1;
export const STATUS_IN_PROGRESS: IndexOf<typeof TASK_STATUSES, 'in_progress'> = 2;
export const STATUS_DONE: IndexOf<typeof TASK_STATUSES, 'done'> = 3;

/** The contract's name of a derived status code. */
export function statusName(code: number): TaskStatus {
  const name = TASK_STATUSES[code];
  if (name === undefined) throw new RangeError(`not a status code: ${code}`);
  return name;
}

/** done / in_progress from progress; an open task is ready when every dependency is done. */
export function computeStatus(g: Graph, progress: Uint8Array): Uint8Array {
  const { n, predStart, pred } = g;
  const status = new Uint8Array(n);
  for (let v = 0; v < n; v++) {
    const p = progress[v];
    if (p === PROGRESS.done) {
      status[v] = STATUS_DONE;
    } else if (p === PROGRESS.started) {
      status[v] = STATUS_IN_PROGRESS;
    } else {
      let ready: number = STATUS_READY;
      for (let k = predStart[v]!, end = predStart[v + 1]!; k < end; k++) {
        if (progress[pred[k]!] !== PROGRESS.done) {
          ready = STATUS_BLOCKED;
          break;
        }
      }
      status[v] = ready;
    }
  }
  return status;
}

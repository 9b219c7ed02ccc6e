import type { Graph } from './graph.ts';

/**
 * Stored facts (progress) versus derived status: only progress is persisted;
 * ready/blocked follow from the graph and are recomputed, never stored.
 * Plain consts (not const enums) so isolatedModules/tsx keep them. The progress codes are
 * defined here only: the domain (services/flows/model.ts) re-exports them.
 */
export const PROGRESS = { open: 0, started: 1, done: 2 } as const;
export type Progress = (typeof PROGRESS)[keyof typeof PROGRESS];

export const STATUS_BLOCKED = 0;
export const STATUS_READY = 1;
export const STATUS_IN_PROGRESS = 2;
export const STATUS_DONE = 3;

export const STATUS_NAMES = ['blocked', 'ready', 'in_progress', 'done'] as const;
export type StatusName = (typeof STATUS_NAMES)[number];

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
      let ready = STATUS_READY;
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

import type { Graph } from './graph.ts';

/**
 * Stored facts (progress) versus derived status: only progress is persisted;
 * ready/blocked follow from the graph and are recomputed, never stored.
 * Plain numeric consts (not const enums) so isolatedModules/tsx keep them.
 */
export const PROGRESS_OPEN = 0;
export const PROGRESS_STARTED = 1;
export const PROGRESS_DONE = 2;

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
    if (p === PROGRESS_DONE) {
      status[v] = STATUS_DONE;
    } else if (p === PROGRESS_STARTED) {
      status[v] = STATUS_IN_PROGRESS;
    } else {
      let ready = STATUS_READY;
      for (let k = predStart[v]!, end = predStart[v + 1]!; k < end; k++) {
        if (progress[pred[k]!] !== PROGRESS_DONE) {
          ready = STATUS_BLOCKED;
          break;
        }
      }
      status[v] = ready;
    }
  }
  return status;
}

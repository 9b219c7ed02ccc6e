import { TASK_STATUSES, type TaskStatus } from '../contract/vocabulary.ts';
import { LINK, type Graph } from './graph.ts';

/**
 * Stored facts (progress) versus derived status: only progress is persisted;
 * ready/blocked follow from the graph and its links and are recomputed, never stored.
 * Plain consts (not const enums) so isolatedModules/tsx keep them. The progress codes are
 * defined here only: the domain (services/flows/model.ts) re-exports them.
 */
export const PROGRESS = { open: 0, started: 1, done: 2 } as const;
// Read once, as cpm.ts does.
const { FS, SS, FF, SF } = LINK;
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

/**
 * Whether a link of `type` from a predecessor at `progress` holds its successor's start: an FS
 * link until the predecessor is done, an SS link until it has started (FF and SF never do).
 */
export function holdsStart(type: number, progress: number): boolean {
  return type === FS ? progress !== PROGRESS.done : type === SS && progress === PROGRESS.open;
}

/**
 * Whether a link of `type` from a predecessor at `progress` holds its successor's completion:
 * an FF link until the predecessor is done, an SF link until it has started.
 */
export function holdsFinish(type: number, progress: number): boolean {
  return type === FF ? progress !== PROGRESS.done : type === SF && progress === PROGRESS.open;
}

/** The predecessors of v (by their rows, in order) whose links hold its start (`blockedBy`). */
export function startBlockers(g: Graph, progress: Uint8Array, v: number): number[] {
  return blockers(g, progress, v, holdsStart);
}

/** The predecessors of v whose links hold its completion (a refusal's `blockedBy`). */
export function finishBlockers(g: Graph, progress: Uint8Array, v: number): number[] {
  return blockers(g, progress, v, holdsFinish);
}

function blockers(
  g: Graph,
  progress: Uint8Array,
  v: number,
  holds: (type: number, progress: number) => boolean,
): number[] {
  const found: number[] = [];
  for (let k = g.predStart[v] ?? 0, end = g.predStart[v + 1] ?? 0; k < end; k++) {
    const p = g.pred[k] ?? 0;
    if (holds((g.links?.predLink[k] ?? FS) & 3, progress[p] ?? PROGRESS.open)) found.push(p);
  }
  return found;
}

/** Whether open task v is blocked: a link of its holds its start. */
export function isBlocked(g: Graph, progress: Uint8Array, v: number): boolean {
  const { predStart, pred, links } = g;
  const first = predStart[v] ?? 0;
  const end = predStart[v + 1] ?? 0;
  if (links === null) {
    for (let k = first; k < end; k++) if (progress[pred[k] ?? 0] !== PROGRESS.done) return true;
    return false;
  }
  for (let k = first; k < end; k++)
    if (holdsStart((links.predLink[k] ?? FS) & 3, progress[pred[k] ?? 0] ?? PROGRESS.open))
      return true;
  return false;
}

/** done / in_progress from progress; an open task is blocked while a link holds its start. */
export function computeStatus(g: Graph, progress: Uint8Array): Uint8Array {
  const { n, predStart, pred, links } = g;
  const status = new Uint8Array(n);
  for (let v = 0; v < n; v++) {
    const p = progress[v];
    if (p === PROGRESS.done) status[v] = STATUS_DONE;
    else if (p === PROGRESS.started) status[v] = STATUS_IN_PROGRESS;
    else {
      let blocked = false;
      const end = predStart[v + 1] ?? 0;
      if (links === null) {
        for (let k = predStart[v] ?? 0; k < end && !blocked; k++)
          blocked = progress[pred[k] ?? 0] !== PROGRESS.done;
      } else {
        // FS holds until done, SS until started: type 0 below done, type 1 below started.
        const types = links.predLink;
        for (let k = predStart[v] ?? 0; k < end && !blocked; k++) {
          const type = (types[k] ?? 0) & 3;
          const q = progress[pred[k] ?? 0] ?? 0;
          blocked = type === FS ? q !== PROGRESS.done : type === SS && q === PROGRESS.open;
        }
      }
      status[v] = blocked ? STATUS_BLOCKED : STATUS_READY;
    }
  }
  return status;
}

/**
 * A page of a flow's tasks in flow order (CONTRACT §6), read off one snapshot: the filters
 * run over its typed arrays (status codes, change marks), and only the page's tasks are viewed,
 * so a page of a 100k-task flow costs a pass over bytes, not the Flow body.
 */
import type { Static } from '@sinclair/typebox';
import type { TaskPageQuery, TaskPageSchema } from '../../contract/task.schema.ts';
import { TASK_STATUSES } from '../../contract/vocabulary.ts';
import { validationFailed } from '../../platform/errors.ts';
import type { TaskRecord } from './model.ts';
import type { Snapshot } from './snapshot.ts';

export type TaskPageView = Static<typeof TaskPageSchema>;

/**
 * `from` is a place in flow order (a task's stored position; 0 is the start), not a count: a
 * task keeps its position, so a walk by `next` over a flow that changes meanwhile skips no task
 * that stays (an offset would skip one for each task deleted before it).
 */
export function taskPage(snapshot: Snapshot, query: Static<typeof TaskPageQuery>): TaskPageView {
  const { size, from, changedSince } = query;
  if (changedSince !== undefined && changedSince > snapshot.version)
    throw validationFailed([
      {
        in: 'query',
        pointer: '/changedSince',
        message: `is after the flow's version (${snapshot.version})`,
      },
    ]);
  const n = snapshot.size;
  const start = firstAtOrAfter(snapshot, from);
  const tasks = snapshot.state.tasks;
  let picked: readonly TaskRecord[];
  let total: number;
  let after: number;
  if (query.status === undefined && changedSince === undefined) {
    total = n;
    picked = tasks.slice(start, start + size);
    after = start + size;
  } else {
    const wanted = statusCodes(query.status);
    const since = changedSince ?? -1;
    const { status, changedAt } = snapshot;
    const found: number[] = [];
    total = 0;
    after = n;
    // Over the typed arrays alone: no task record is read until the page is known.
    for (let i = 0; i < n; i++) {
      if (wanted[status[i] ?? 0] === 0 || (changedAt[i] ?? 0) <= since) continue;
      total++;
      if (i < start) continue;
      if (found.length < size) found.push(i);
      else if (after === n) after = i;
    }
    picked = found.flatMap((i) => tasks[i] ?? []);
  }
  return {
    total,
    items: picked.map((task) => snapshot.taskView(task.id)),
    version: snapshot.version,
    next: tasks[after]?.position ?? null,
  };
}

/** Per status code, 1 when the page shows it: every status unless the query lists some. */
function statusCodes(list: string | undefined): Uint8Array {
  const named = list === undefined ? null : new Set(list.split(','));
  return Uint8Array.from(TASK_STATUSES, (name) => (!named || named.has(name) ? 1 : 0));
}

/** The first task at or after `position`: tasks are held in position order. */
function firstAtOrAfter(snapshot: Snapshot, position: number): number {
  let low = 0;
  let high = snapshot.size;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if ((snapshot.at(mid)?.position ?? position) < position) low = mid + 1;
    else high = mid;
  }
  return low;
}

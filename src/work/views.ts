/**
 * Cross-flow work views (CONTRACT §3): objectives of every live flow as WorkItems, ranked
 * by what decides finish dates — critical-path work first, then least slack, then the
 * earliest flow due date, then the most work held up.
 */
import { addWorkingDays, startOfSchedule } from '../graph/calendar.ts';
import { STATUS_BLOCKED, STATUS_DONE, STATUS_IN_PROGRESS, STATUS_NAMES, STATUS_READY } from '../graph/status.ts';
import { PROGRESS } from '../flows/model.ts';
import type { IndexedFlow, WorkspaceIndex } from './workspace-index.ts';

export type ListView = 'available' | 'blocked' | 'in-progress' | 'mine';

/** An objective in a view, with its sort keys read once from its flow's snapshot. */
interface Ref {
  readonly flow: IndexedFlow;
  readonly i: number;
  readonly critical: number;
  readonly slack: number;
  /** The flow's due date in ms; +Infinity without one (ranks last). */
  readonly due: number;
  readonly blocking: number;
  /** The flow's place in the index (oldest flow first), then the task's in the flow: a stable tie-break. */
  readonly position: number;
}

const VIEW_STATUSES: Record<ListView, readonly number[]> = {
  available: [STATUS_READY],
  blocked: [STATUS_BLOCKED],
  'in-progress': [STATUS_IN_PROGRESS],
  mine: [STATUS_READY, STATUS_IN_PROGRESS],
};

const dueMs = (flow: IndexedFlow) => (flow.snapshot.flow.dueDate ? Date.parse(flow.snapshot.flow.dueDate) : Number.POSITIVE_INFINITY);

/**
 * Critical-path work first, then least slack, then the earliest flow due date, then the
 * most work held up. Numbers only: a view re-ranks thousands of objectives after every
 * write, on the event loop, so nothing here may parse or compare strings.
 */
function compare(a: Ref, b: Ref): number {
  return (b.critical - a.critical)
    || (a.slack - b.slack)
    || (a.due === b.due ? 0 : a.due < b.due ? -1 : 1)
    || (b.blocking - a.blocking)
    || (a.position - b.position)
    || (a.i - b.i);
}

/** The ranked objectives of a view, before the assignee filter and paging; once per index version. */
function ranked(index: WorkspaceIndex, view: ListView): Ref[] {
  return index.memo(`ranked:${view}`, () => {
    const statuses = VIEW_STATUSES[view];
    const refs: Ref[] = [];
    index.flows.forEach((flow, position) => {
      const { state, status, critical, slack } = flow.snapshot;
      const due = dueMs(flow);
      for (let i = 0; i < state.tasks.length; i++) {
        if (state.tasks[i]!.parentId === null && statuses.includes(status[i]!)) {
          refs.push({ flow, i, critical: critical[i]!, slack: slack[i]!, due, blocking: flow.blocking[i]!, position });
        }
      }
    });
    return refs.sort(compare);
  });
}

function workItem({ flow, i }: Ref) {
  const { snapshot, blocking } = flow;
  const task = snapshot.state.tasks[i]!;
  const status = snapshot.status[i]!;
  const item: Record<string, unknown> = {
    taskId: task.id,
    taskName: task.name,
    flowId: snapshot.flow.id,
    flowName: snapshot.flow.name,
    status: STATUS_NAMES[status],
    assigneeId: task.assigneeId,
    estimateHours: task.estimateHours,
    criticalPath: snapshot.critical[i] === 1,
    subtasks: (snapshot.children.get(task.id) ?? []).map((s) => ({
      id: s.id, name: s.name, done: s.progress === PROGRESS.done, assigneeId: s.assigneeId, estimateHours: s.estimateHours,
    })),
  };
  if (status === STATUS_BLOCKED) {
    item.blockedBy = task.dependsOn
      .map((id) => snapshot.index.get(id)!)
      .filter((j) => snapshot.status[j] !== STATUS_DONE)
      .sort((a, b) => blocking[b]! - blocking[a]! || a - b)
      .map((j) => ({ taskId: snapshot.state.tasks[j]!.id, taskName: snapshot.state.tasks[j]!.name, blocking: blocking[j]! }));
  }
  return item;
}

export interface PageQuery {
  assigneeId?: string;
  size: number;
  from: number;
}

/** One page of a view; `assigneeId` `none` means unassigned work. */
export function listView(index: WorkspaceIndex, view: ListView, query: PageQuery): { total: number; items: unknown[] } {
  return index.memo(`page:${view}:${query.assigneeId ?? ''}:${query.size}:${query.from}`, () => {
    let refs = ranked(index, view);
    if (query.assigneeId !== undefined) {
      const wanted = query.assigneeId === 'none' ? null : query.assigneeId;
      refs = refs.filter(({ flow, i }) => flow.snapshot.state.tasks[i]!.assigneeId === wanted);
    }
    return { total: refs.length, items: refs.slice(query.from, query.from + query.size).map(workItem) };
  });
}

export const TOP_BLOCKERS = 10;

export function overview(index: WorkspaceIndex) {
  return index.memo('overview', () => {
    const counts = { available: 0, blocked: 0, inProgress: 0, done: 0 };
    const blockers: { taskId: string; taskName: string; flowId: string; blocking: number }[] = [];
    const start = startOfSchedule(index.today);
    const flows = index.flows.map(({ snapshot, blocking }) => {
      let ready = 0;
      let blocked = 0;
      snapshot.state.tasks.forEach((task, i) => {
        if (task.parentId !== null) return;
        const status = snapshot.status[i];
        if (status === STATUS_READY) (ready++, counts.available++);
        else if (status === STATUS_BLOCKED) (blocked++, counts.blocked++);
        else if (status === STATUS_IN_PROGRESS) counts.inProgress++;
        else counts.done++;
        if (status !== STATUS_DONE && blocking[i]! > 0) blockers.push({ taskId: task.id, taskName: task.name, flowId: snapshot.flow.id, blocking: blocking[i]! });
      });
      const projectedFinish = snapshot.finish >= 0 ? addWorkingDays(start, snapshot.finish) : null;
      const due = snapshot.flow.dueDate?.slice(0, 10) ?? null;
      return {
        flowId: snapshot.flow.id,
        flowName: snapshot.flow.name,
        dueDate: snapshot.flow.dueDate,
        projectedFinish,
        onTrack: due === null ? null : projectedFinish === null || projectedFinish <= due,
        readyCount: ready,
        blockedCount: blocked,
      };
    });
    blockers.sort((a, b) => b.blocking - a.blocking || a.flowId.localeCompare(b.flowId) || a.taskId.localeCompare(b.taskId));
    return { counts, flows, topBlockers: blockers.slice(0, TOP_BLOCKERS) };
  });
}

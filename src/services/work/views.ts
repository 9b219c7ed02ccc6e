/**
 * Cross-flow work views (CONTRACT §3): objectives of every live flow as WorkItems, ranked
 * by what decides finish dates — critical-path work first, then least slack, then the
 * earliest flow due date, then the most work held up. Each flow is ranked on its own
 * (flow-ranks.ts); a page merges the flows' lists only as far as it reaches.
 */
import { createHash } from 'node:crypto';
import type { Static } from '@sinclair/typebox';
import type { OverviewSchema, WorkItemSchema, WorkQuery } from '../../contract/work.schema.ts';
import { addWorkingDays, startOfSchedule } from '../../engine/calendar.ts';
import { STATUS_BLOCKED, STATUS_DONE, statusName } from '../../engine/status.ts';
import { subtaskView } from '../flows/flow-body.ts';
import { TOP_BLOCKERS } from '../flows/report.ts';
import { compareBlockers, compareTasks, type ListView, type RankedFlow } from './flow-ranks.ts';
import { mergeFirst } from './merge.ts';
import type { WorkspaceIndex } from './workspace-index.ts';
import type { Page } from '../../platform/paging.ts';

/** A view's query; `mine` fills `assigneeId` with the person's own id. */
export type PageQuery = Static<typeof WorkQuery>;

/** A flow's list in a view, with the flow's place in the index for the tie-break. */
interface FlowRun {
  readonly flow: RankedFlow;
  readonly position: number;
  readonly items: readonly number[];
}

interface RankedPage {
  readonly total: number;
  readonly refs: readonly { run: FlowRun; item: number }[];
  /** Changes whenever the page's bytes may: see pageTag. */
  readonly tag: string;
}

type WorkItem = Static<typeof WorkItemSchema>;

function workItem(flow: RankedFlow, i: number): WorkItem {
  const { snapshot, blocking } = flow;
  const task = snapshot.state.tasks[i]!;
  const status = snapshot.status[i]!;
  const item: WorkItem = {
    taskId: task.id,
    taskName: task.name,
    flowId: snapshot.flow.id,
    flowName: snapshot.flow.name,
    status: statusName(status),
    assigneeId: task.assigneeId,
    estimateHours: task.estimateHours,
    criticalPath: snapshot.critical[i] === 1,
    subtasks: (snapshot.children.get(task.id) ?? []).map(subtaskView),
  };
  if (status === STATUS_BLOCKED) {
    item.blockedBy = task.dependsOn
      .map((id) => snapshot.index.get(id)!)
      .filter((j) => snapshot.status[j] !== STATUS_DONE)
      .sort((a, b) => blocking[b]! - blocking[a]! || a - b)
      .map((j) => ({
        taskId: snapshot.state.tasks[j]!.id,
        taskName: snapshot.state.tasks[j]!.name,
        blocking: blocking[j]!,
      }));
  }
  return item;
}

/**
 * The page's validator: `total` and the (flow, version) of every flow with an item ranked
 * up to the page's end. Those flows, unchanged, hold the same top `from + size` items
 * whatever other flows do (an outside item that moved ahead would be in that prefix), and
 * an item's bytes come from its own flow alone; so an equal tag means equal bytes, and a
 * write to a flow further down the ranking leaves the tag alone.
 */
function pageTag(total: number, prefix: readonly { run: FlowRun }[]): string {
  const hash = createHash('sha1').update(String(total));
  const seen = new Set<RankedFlow>();
  for (const { run } of prefix) {
    if (seen.has(run.flow)) continue;
    seen.add(run.flow);
    hash.update(`|${run.flow.snapshot.flow.id}:${run.flow.snapshot.version}`);
  }
  return hash.digest('base64url');
}

/** The ranked refs of one page, its total and its tag; once per index version and query. */
function page(index: WorkspaceIndex, view: ListView, query: PageQuery): RankedPage {
  return index.memo(`page:${view}:${query.assigneeId ?? ''}:${query.size}:${query.from}`, () => {
    const wanted = query.assigneeId === 'none' ? null : query.assigneeId;
    const runs: FlowRun[] = [];
    let total = 0;
    index.flows.forEach((flow, position) => {
      const ranks = flow.views[view];
      const items = wanted === undefined ? ranks.all : ranks.byAssignee.get(wanted);
      if (!items?.length) return;
      runs.push({ flow, position, items });
      total += items.length;
    });
    const prefix = mergeFirst(runs, query.from + query.size, (a, i, b, j) =>
      compareTasks(a.flow, i, a.position, b.flow, j, b.position),
    );
    return { total, refs: prefix.slice(query.from), tag: pageTag(total, prefix) };
  });
}

/** One page of a view; `assigneeId` `none` means unassigned work. */
export function listView(index: WorkspaceIndex, view: ListView, query: PageQuery): Page<WorkItem> {
  const { total, refs } = page(index, view, query);
  return { total, items: refs.map(({ run, item }) => workItem(run.flow, item)) };
}

/** The validator of listView's page for the same arguments, without rendering it. */
export function listTag(index: WorkspaceIndex, view: ListView, query: PageQuery): string {
  return page(index, view, query).tag;
}

export function overview(index: WorkspaceIndex): Static<typeof OverviewSchema> {
  return index.memo('overview', () => {
    const counts = { available: 0, blocked: 0, inProgress: 0, done: 0 };
    const start = startOfSchedule(index.today);
    const flows = index.flows.map(({ snapshot, counts: own }) => {
      counts.available += own.available;
      counts.blocked += own.blocked;
      counts.inProgress += own.inProgress;
      counts.done += own.done;
      const projectedFinish = snapshot.finish >= 0 ? addWorkingDays(start, snapshot.finish) : null;
      const due = snapshot.flow.dueDate?.slice(0, 10) ?? null;
      return {
        flowId: snapshot.flow.id,
        flowName: snapshot.flow.name,
        dueDate: snapshot.flow.dueDate,
        projectedFinish,
        onTrack: due === null ? null : projectedFinish === null || projectedFinish <= due,
        readyCount: own.available,
        blockedCount: own.blocked,
      };
    });
    const topBlockers = index.flows
      .flatMap((flow) => flow.blockers)
      .sort(compareBlockers)
      .slice(0, TOP_BLOCKERS);
    return { counts, flows, topBlockers };
  });
}

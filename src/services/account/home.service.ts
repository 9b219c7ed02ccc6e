/**
 * What the app's home page shows a signed-in person in one workspace: their own work (ready
 * and in progress, ranked as the `mine` work view ranks it), each item with its flow's
 * published page where the flow is published.
 */
import type { WorkIndexes } from '../work/workspace-index.ts';
import { listView } from '../work/views.ts';

/** Items the home page lists; the rest are counted. */
export const HOME_WORK_SHOWN = 25;

export interface HomeWorkItem {
  taskName: string;
  flowId: string;
  flowName: string;
  status: 'ready' | 'in_progress';
  criticalPath: boolean;
  /** The flow's published page, or null when it is not published. */
  publicUrl: string | null;
}

export async function homeWork(
  work: WorkIndexes,
  workspaceId: string,
  userId: string,
): Promise<{ total: number; items: HomeWorkItem[] }> {
  const index = await work.get(workspaceId);
  const page = listView(index, 'mine', { assigneeId: userId, size: HOME_WORK_SHOWN, from: 0 }) as {
    total: number;
    items: Omit<HomeWorkItem, 'publicUrl'>[];
  };
  const published = new Map(
    index.flows.map((flow) => [flow.snapshot.flow.id, flow.snapshot.summary().publicUrl]),
  );
  return {
    total: page.total,
    items: page.items.map(({ taskName, flowId, flowName, status, criticalPath }) => ({
      taskName,
      flowId,
      flowName,
      status,
      criticalPath,
      publicUrl: published.get(flowId) ?? null,
    })),
  };
}

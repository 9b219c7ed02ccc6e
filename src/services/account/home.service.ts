/**
 * What the app's home page shows a signed-in person in one workspace: their own work (ready
 * and in progress, ranked as the `mine` work view ranks it), each item linking to the task on
 * its flow's page in the app.
 */
import type { WorkIndexes } from '../work/workspace-index.ts';
import { listView } from '../work/views.ts';

/** Items the home page lists; the rest are counted. */
export const HOME_WORK_SHOWN = 25;

export interface HomeWorkItem {
  taskId: string;
  taskName: string;
  flowId: string;
  flowName: string;
  status: 'ready' | 'in_progress';
  criticalPath: boolean;
}

export async function homeWork(
  work: WorkIndexes,
  workspaceId: string,
  userId: string,
): Promise<{ total: number; items: HomeWorkItem[] }> {
  const index = await work.get(workspaceId);
  const page = listView(index, 'mine', { assigneeId: userId, size: HOME_WORK_SHOWN, from: 0 }) as {
    total: number;
    items: HomeWorkItem[];
  };
  return {
    total: page.total,
    items: page.items.map(({ taskId, taskName, flowId, flowName, status, criticalPath }) => ({
      taskId,
      taskName,
      flowId,
      flowName,
      status,
      criticalPath,
    })),
  };
}

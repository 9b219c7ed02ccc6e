/** A task's stored record for tests that build flow states by hand: open, 4 hours, no links. */
import { PROGRESS, type TaskRecord } from '../../src/services/flows/model.ts';

export function taskRecord(
  id: string,
  position: number,
  patch: Partial<TaskRecord> = {},
): TaskRecord {
  return {
    id,
    parentId: null,
    name: id,
    description: null,
    estimateHours: 4,
    estimateRange: null,
    assigneeId: null,
    progress: PROGRESS.open,
    position,
    dependsOn: [],
    deliverables: [],
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
    ...patch,
  };
}

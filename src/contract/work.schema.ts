/** WorkItem and the work views' queries (spec §2, CONTRACT §3). */
import { Type } from '@sinclair/typebox';
import { dueDateTime, listOf, lookupId, Nullable, pageQuery, StringEnum } from './common.schema.ts';
import { SubTaskSchema } from './flow.schema.ts';
import { TASK_STATUSES } from './vocabulary.ts';

export const WorkItemSchema = Type.Object({
  taskId: Type.String(),
  taskName: Type.String(),
  flowId: Type.String(),
  flowName: Type.String(),
  status: StringEnum(TASK_STATUSES),
  assigneeId: Nullable(Type.String()),
  estimateHours: Nullable(Type.Number()),
  criticalPath: Type.Boolean(),
  subtasks: Type.Array(SubTaskSchema),
  blockedBy: Type.Optional(
    Type.Array(
      Type.Object({
        taskId: Type.String(),
        taskName: Type.String(),
        blocking: Type.Integer({ minimum: 0 }),
      }),
      { description: 'On blocked work: unfinished tasks holding it up, most-blocking first' },
    ),
  ),
});

export const WorkListSchema = listOf(WorkItemSchema);

export const WorkQuery = Type.Object({
  assigneeId: Type.Optional(
    lookupId({ description: "A member id, or 'none' for unassigned work" }),
  ),
  ...pageQuery(25),
});

export const MineQuery = Type.Object(pageQuery(25));

export const OverviewSchema = Type.Object({
  counts: Type.Object({
    available: Type.Integer(),
    blocked: Type.Integer(),
    inProgress: Type.Integer(),
    done: Type.Integer(),
  }),
  flows: Type.Array(
    Type.Object({
      flowId: Type.String(),
      flowName: Type.String(),
      dueDate: Nullable(dueDateTime),
      projectedFinish: Nullable(Type.String({ format: 'date' })),
      onTrack: Nullable(Type.Boolean()),
      readyCount: Type.Integer(),
      blockedCount: Type.Integer(),
    }),
  ),
  topBlockers: Type.Array(
    Type.Object({
      taskId: Type.String(),
      taskName: Type.String(),
      flowId: Type.String(),
      blocking: Type.Integer(),
    }),
  ),
});

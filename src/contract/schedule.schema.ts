/** Schedule and Report (spec §2). */
import { Type } from '@sinclair/typebox';
import { dateInput, Nullable } from './common.schema.ts';
import { LAST_DAY } from './vocabulary.ts';

const day = Type.String({ format: 'date' });

export const ScheduleSchema = Type.Object({
  flowId: Type.String(),
  startDate: Type.Optional(
    Type.String({ format: 'date', description: 'The working day the schedule starts on' }),
  ),
  dueDate: Type.Optional(Nullable(Type.String({ format: 'date' }))),
  projectedFinish: Type.Optional(
    Nullable(
      Type.String({
        format: 'date',
        description: `The last working day; a day past ${LAST_DAY} (a flow of millions of working days, scheduled from today) reads ${LAST_DAY}`,
      }),
    ),
  ),
  onTrack: Type.Optional(Nullable(Type.Boolean())),
  entries: Type.Array(
    Type.Object({
      taskId: Type.Optional(Type.String()),
      taskName: Type.String(),
      earliestStart: Type.Optional(day),
      earliestFinish: Type.Optional(day),
      criticalPath: Type.Boolean(),
      estimated: Type.Optional(Type.Boolean()),
    }),
  ),
});

export const ScheduleQuery = Type.Object({
  startDate: Type.Optional({
    ...dateInput,
    description: `${dateInput.description}; also refused when the schedule from it would end after ${LAST_DAY}. Default: today (UTC)`,
  }),
});

const ids = Type.Array(Type.String());

export const ReportSchema = Type.Object({
  flowId: Type.String(),
  flowName: Type.Optional(Type.String()),
  completion: Type.Number({ minimum: 0, maximum: 1 }),
  tasksTotal: Type.Integer(),
  tasksDone: Type.Optional(Type.Integer()),
  tasksReady: Type.Optional(Type.Integer()),
  tasksBlocked: Type.Optional(Type.Integer()),
  hoursEstimated: Type.Optional(Nullable(Type.Number())),
  hoursRemaining: Type.Optional(Nullable(Type.Number())),
  unestimatedTasks: Type.Optional(ids),
  orphanedTasks: Type.Optional(ids),
  workload: Type.Optional(
    Type.Array(
      Type.Object({
        memberId: Type.String(),
        name: Type.Optional(Nullable(Type.String())),
        openTasks: Type.Integer(),
        hoursRemaining: Type.Optional(Nullable(Type.Number())),
      }),
    ),
  ),
  topBlockers: Type.Optional(
    Type.Array(
      Type.Object({ taskId: Type.String(), taskName: Type.String(), blocking: Type.Integer() }),
    ),
  ),
});

/** Schedule and Report (spec §2). */
import { Type } from '@sinclair/typebox';
import { dateInput, Nullable } from './common.schema.ts';
import { LAST_DAY } from './vocabulary.ts';

const day = Type.String({ format: 'date' });

export const ScheduleSchema = Type.Object({
  flowId: Type.String(),
  startDate: Type.String({ format: 'date', description: 'The working day the schedule starts on' }),
  dueDate: Nullable(Type.String({ format: 'date' })),
  projectedFinish: Nullable(
    Type.String({
      format: 'date',
      description: `The last working day; a day past ${LAST_DAY} (a flow of millions of working days, scheduled from today) reads ${LAST_DAY}`,
    }),
  ),
  onTrack: Nullable(Type.Boolean()),
  entries: Type.Array(
    Type.Object({
      taskId: Type.String(),
      taskName: Type.String(),
      // A done objective takes no time: it has neither (CONTRACT §4).
      earliestStart: Type.Optional(day),
      earliestFinish: Type.Optional(day),
      criticalPath: Type.Boolean(),
      estimated: Type.Boolean(),
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
  flowName: Type.String(),
  completion: Type.Number({ minimum: 0, maximum: 1 }),
  tasksTotal: Type.Integer(),
  tasksDone: Type.Integer(),
  tasksReady: Type.Integer(),
  tasksBlocked: Type.Integer(),
  hoursEstimated: Nullable(Type.Number()),
  hoursRemaining: Nullable(Type.Number()),
  unestimatedTasks: ids,
  orphanedTasks: ids,
  workload: Type.Array(
    Type.Object({
      memberId: Type.String(),
      name: Nullable(Type.String()),
      openTasks: Type.Integer(),
      hoursRemaining: Nullable(Type.Number()),
    }),
  ),
  topBlockers: Type.Array(
    Type.Object({ taskId: Type.String(), taskName: Type.String(), blocking: Type.Integer() }),
  ),
});

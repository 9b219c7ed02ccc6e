/** Schedule and Report (spec §2). */
import { Type } from '@sinclair/typebox';
import { dateInput, Defaulted, Nullable } from './common.schema.ts';
import { LAST_DAY } from './vocabulary.ts';

const day = Type.String({ format: 'date' });
const ids = Type.Array(Type.String());

/**
 * The plain schedule (CONTRACT §4) and, with `?level=true`, the levelled one (§5): the same
 * document, each member doing one task of the flow at a time at their hoursPerDay. The levelled
 * one adds `unscheduled` and each entry's `delayDays`; only it has null dates.
 */
export const ScheduleSchema = Type.Object({
  flowId: Type.String(),
  startDate: Type.String({ format: 'date', description: 'The working day the schedule starts on' }),
  dueDate: Nullable(Type.String({ format: 'date' })),
  projectedFinish: Nullable(
    Type.String({
      format: 'date',
      description: `The last working day; a day past ${LAST_DAY} (a flow of millions of working days, scheduled from today) reads ${LAST_DAY}. Null when nothing is open; levelled, also when any open task is unscheduled (the flow cannot land while work nobody can do remains)`,
    }),
  ),
  onTrack: Nullable(
    Type.Boolean({
      description:
        'projectedFinish <= dueDate; null without a due date. Levelled: the levelled finish, and false while any task is unscheduled',
    }),
  ),
  entries: Type.Array(
    Type.Object({
      taskId: Type.String(),
      taskName: Type.String(),
      // A done objective takes no time: it has neither (CONTRACT §4).
      earliestStart: Type.Optional(
        Nullable(day, {
          description:
            "Absent on a done objective. Levelled: null when the task is unscheduled, as its assignee's hoursPerDay is 0 or it waits (directly or not) on such a task",
        }),
      ),
      earliestFinish: Type.Optional(
        Nullable(day, {
          description: 'The last working day it occupies; levelled, null when unscheduled',
        }),
      ),
      criticalPath: Type.Boolean({
        description:
          'No slack: the task cannot slip a working day without moving projectedFinish. Levelled, its successors are its dependents and the next task its assignee does. False when done or unscheduled',
      }),
      estimated: Type.Boolean(),
      delayDays: Type.Optional(
        Nullable(
          Type.Integer({
            description:
              'Levelled only: working days the levelled start is later than the plain one; negative when days of more than 8 hours shorten the work before it. Null when unscheduled, absent on a done objective',
          }),
        ),
      ),
    }),
    {
      description:
        "One per objective, in flow order. Levelled: sub-tasks are not levelled apart (an objective is held by its own assignee for its hours: its open sub-tasks' sum when any is estimated, else its estimate; none: 1 day). An unassigned task is held by nobody and lasts its plain days, yet starts after its dependencies' levelled finish. Tasks are placed by CONTRACT §5's order whatever their status, so an in-progress task may be levelled after startDate. An assignee who is no longer a member works 8 hours a day",
    },
  ),
  unscheduled: Type.Optional(
    Type.Array(Type.String(), {
      description:
        'Levelled only: ids of the open objectives left unscheduled (earliestStart null), in flow order',
    }),
  ),
});

export const ScheduleQuery = Type.Object({
  startDate: Type.Optional({
    ...dateInput,
    description: `${dateInput.description}; also refused when the schedule from it would end after ${LAST_DAY}. Default: today (UTC)`,
  }),
  level: Defaulted(
    Type.Boolean({
      default: false,
      description:
        'true: the resource-levelled schedule (each member does one task of the flow at a time, at their hoursPerDay), each entry with delayDays and the document with `unscheduled`; false: the plain critical-path schedule',
    }),
  ),
});

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

/** Flow, Task and their request bodies, as spec §2 and CONTRACT §3 give them. */
import { Type } from '@sinclair/typebox';
import {
  dateInput,
  dateTime,
  Defaulted,
  dueDateTime,
  freeText,
  idParam,
  nameText,
  Nullable,
  pageQuery,
  lookupId,
  pathParams,
  StringEnum,
  lineText,
} from './common.schema.ts';
import { TASK_STATUSES } from './vocabulary.ts';

/** The largest task graph one creation call takes (spec §8 leaves it open). */
export const MAX_TASKS_PER_CALL = 10_000;

export const name = (max = 200) => nameText(max);
export const description = freeText(20_000);
export const estimate = Type.Number({ minimum: 0, maximum: 100_000 });
/** A ranged estimate, as given: checked against estimateHours by the service (0 ≤ low ≤ estimateHours ≤ high). */
export const estimateRange = Type.Object(
  { low: estimate, high: estimate },
  {
    additionalProperties: false,
    description:
      'Hours: the least and the most the task may take, around estimateHours (0 ≤ low ≤ estimateHours ≤ high); the forecast draws between them',
  },
);
export const EstimateRangeSchema = Nullable(
  Type.Object(
    { low: Type.Number(), high: Type.Number() },
    {
      additionalProperties: false,
      description: 'The least and the most hours the task may take; null without a range',
    },
  ),
);

export const SubTaskSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  done: Type.Boolean(),
  assigneeId: Nullable(Type.String()),
  estimateHours: Nullable(Type.Number()),
  estimateRange: EstimateRangeSchema,
});

export const DeliverableSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  satisfied: Type.Boolean(),
});

export const TaskSchema = Type.Object({
  id: Type.String(),
  flowId: Type.String(),
  parentId: Nullable(Type.String()),
  name: Type.String(),
  description: Nullable(Type.String()),
  status: StringEnum(TASK_STATUSES),
  dependsOn: Type.Array(Type.String()),
  blockedBy: Type.Array(Type.String(), {
    description: "A blocked task's unfinished dependencies; empty for any other",
  }),
  assigneeId: Nullable(Type.String()),
  estimateHours: Nullable(Type.Number()),
  estimateRange: EstimateRangeSchema,
  criticalPath: Type.Boolean(),
  subtasks: Type.Array(SubTaskSchema),
  requiredDeliverables: Type.Array(DeliverableSchema),
  createdAt: dateTime,
  updatedAt: dateTime,
});

const summaryProperties = {
  id: Type.String(),
  name: Type.String(),
  description: Nullable(Type.String()),
  archived: Type.Boolean(),
  public: Type.Boolean(),
  publicUrl: Nullable(Type.String()),
  dueDate: Nullable(dueDateTime),
  taskCount: Type.Integer(),
  doneCount: Type.Integer(),
  readyCount: Type.Integer(),
  version: Type.Integer({
    minimum: 1,
    description: 'Steps by one with each committed change of the flow (a batch is one change)',
  }),
  createdAt: dateTime,
  updatedAt: dateTime,
};

export const FlowSummarySchema = Type.Object(summaryProperties);

export const FlowSchema = Type.Object({ ...summaryProperties, tasks: Type.Array(TaskSchema) });

export const CreateFlowBody = Type.Object(
  {
    name: name(),
    description: Type.Optional(description),
    dueDate: Type.Optional(dateInput),
    tasks: Type.Optional(
      Type.Array(
        Type.Object(
          {
            name: name(500),
            description: Type.Optional(description),
            estimateHours: Type.Optional(estimate),
            estimateRange: Type.Optional(estimateRange),
            assigneeId: Type.Optional(idParam('usr')),
            after: Type.Optional(
              Type.Array(Type.Integer({ minimum: 0 }), { maxItems: 1000, uniqueItems: true }),
            ),
          },
          { additionalProperties: false },
        ),
        { maxItems: MAX_TASKS_PER_CALL },
      ),
    ),
  },
  { additionalProperties: false },
);

export const PatchFlowBody = Type.Object(
  {
    name: Type.Optional(name()),
    description: Type.Optional(Nullable(description)),
    dueDate: Type.Optional(Type.Union([dateInput, Type.Null()])),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const ListFlowsQuery = Type.Object({
  archived: Defaulted(Type.Boolean({ default: false })),
  q: Type.Optional(lineText(200)),
  ...pageQuery(25),
});

// Path ids are opaque: one that names nothing is 404, whatever its shape.
export const FlowParams = pathParams({ flowId: lookupId() });
export const TaskParams = pathParams({ flowId: lookupId(), taskId: lookupId() });

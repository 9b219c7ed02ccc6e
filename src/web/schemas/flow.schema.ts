/** Flow, Task and their request bodies, as spec §2 and CONTRACT §3 give them. */
import { Type } from '@sinclair/typebox';
import type { Schema } from '../http/route.ts';
import { dateInput, dateTime, Defaulted, idParam, Nullable, pageQuery, pathParams } from './common.schema.ts';

export const TASK_STATUSES = ['blocked', 'ready', 'in_progress', 'done'];
/** The largest task graph one creation call takes (spec §8 leaves it open). */
export const MAX_TASKS_PER_CALL = 10_000;

export const name = (max = 200) => Type.String({ minLength: 1, maxLength: max, pattern: '\\S' });
export const description = Type.String({ maxLength: 20_000 });
export const estimate = Type.Number({ minimum: 0, maximum: 100_000 });

export const SubTaskSchema: Schema = {
  type: 'object',
  required: ['id', 'name', 'done'],
  properties: {
    id: { type: 'string' }, name: { type: 'string' }, done: { type: 'boolean' },
    assigneeId: { type: ['string', 'null'] }, estimateHours: { type: ['number', 'null'] },
  },
};

export const DeliverableSchema: Schema = {
  type: 'object',
  required: ['id', 'name', 'satisfied'],
  properties: { id: { type: 'string' }, name: { type: 'string' }, satisfied: { type: 'boolean' } },
};

export const TaskSchema: Schema = {
  type: 'object',
  required: ['id', 'flowId', 'parentId', 'name', 'status', 'dependsOn'],
  properties: {
    id: { type: 'string' },
    flowId: { type: 'string' },
    parentId: { type: ['string', 'null'] },
    name: { type: 'string' },
    description: { type: ['string', 'null'] },
    status: { type: 'string', enum: TASK_STATUSES },
    dependsOn: { type: 'array', items: { type: 'string' } },
    blockedBy: { type: 'array', items: { type: 'string' } },
    assigneeId: { type: ['string', 'null'] },
    estimateHours: { type: ['number', 'null'] },
    criticalPath: { type: 'boolean' },
    subtasks: { type: 'array', items: SubTaskSchema },
    requiredDeliverables: { type: 'array', items: DeliverableSchema },
    createdAt: dateTime,
    updatedAt: dateTime,
  },
};

const summaryProperties: Record<string, Schema> = {
  id: { type: 'string' },
  name: { type: 'string' },
  description: { type: ['string', 'null'] },
  archived: { type: 'boolean' },
  public: { type: 'boolean' },
  publicUrl: { type: ['string', 'null'] },
  dueDate: { type: ['string', 'null'], format: 'date-time' },
  taskCount: { type: 'integer' },
  doneCount: { type: 'integer' },
  readyCount: { type: 'integer' },
  createdAt: dateTime,
  updatedAt: dateTime,
};

export const FlowSummarySchema: Schema = { type: 'object', required: ['id', 'name', 'archived'], properties: summaryProperties };

export const FlowSchema: Schema = {
  type: 'object',
  required: ['id', 'name', 'archived', 'tasks'],
  properties: { ...summaryProperties, tasks: { type: 'array', items: TaskSchema } },
};

export const CreateFlowBody = Type.Object({
  name: name(),
  description: Type.Optional(description),
  dueDate: Type.Optional(dateInput),
  tasks: Type.Optional(Type.Array(
    Type.Object({
      name: name(500),
      description: Type.Optional(description),
      estimateHours: Type.Optional(estimate),
      assigneeId: Type.Optional(idParam('usr')),
      after: Type.Optional(Type.Array(Type.Integer({ minimum: 0 }), { maxItems: 1000, uniqueItems: true })),
    }, { additionalProperties: false }),
    { maxItems: MAX_TASKS_PER_CALL },
  )),
}, { additionalProperties: false });

export const PatchFlowBody = Type.Object({
  name: Type.Optional(name()),
  description: Type.Optional(Nullable(description)),
  dueDate: Type.Optional(Type.Union([dateInput, Type.Null()])),
}, { additionalProperties: false, minProperties: 1 });

export const ListFlowsQuery = Type.Object({
  archived: Defaulted(Type.Boolean({ default: false })),
  q: Type.Optional(Type.String({ maxLength: 200 })),
  ...pageQuery(25),
});

// Path ids are opaque: one that names nothing is 404, whatever its shape.
export const pathId = Type.String({ minLength: 1, maxLength: 100 });
export const FlowParams = pathParams({ flowId: pathId });
export const TaskParams = pathParams({ flowId: pathId, taskId: pathId });

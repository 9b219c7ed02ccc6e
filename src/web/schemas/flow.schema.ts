/** Flow, Task and their request bodies, as spec §2 and CONTRACT §3 give them. */
import type { Schema } from '../http/route.ts';
import { dateInput, dateTime, idParam, pageQuery, pathParams } from './common.schema.ts';

const nullable = (schema: Schema): Schema => ({ ...schema, type: [schema.type as string, 'null'] });

export const TASK_STATUSES = ['blocked', 'ready', 'in_progress', 'done'];
/** The largest task graph one creation call takes (spec §8 leaves it open). */
export const MAX_TASKS_PER_CALL = 10_000;

export const name = (max = 200): Schema => ({ type: 'string', minLength: 1, maxLength: max, pattern: '\\S' });
export const description: Schema = { type: 'string', maxLength: 20_000 };
export const estimate: Schema = { type: 'number', minimum: 0, maximum: 100_000 };

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

export const CreateFlowBody: Schema = {
  type: 'object',
  required: ['name'],
  additionalProperties: false,
  properties: {
    name: name(),
    description,
    dueDate: dateInput,
    tasks: {
      type: 'array',
      maxItems: MAX_TASKS_PER_CALL,
      items: {
        type: 'object',
        required: ['name'],
        additionalProperties: false,
        properties: {
          name: name(500),
          description,
          estimateHours: estimate,
          assigneeId: idParam('usr'),
          after: { type: 'array', maxItems: 1000, uniqueItems: true, items: { type: 'integer', minimum: 0 } },
        },
      },
    },
  },
};

export const PatchFlowBody: Schema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: { name: name(), description: nullable(description), dueDate: { anyOf: [dateInput, { type: 'null' }] } },
};

export const ListFlowsQuery: Schema = {
  type: 'object',
  properties: { archived: { type: 'boolean', default: false }, q: { type: 'string', maxLength: 200 }, ...pageQuery(25) },
};

// Path ids are opaque: one that names nothing is 404, whatever its shape.
const pathId: Schema = { type: 'string', minLength: 1, maxLength: 100 };
export const FlowParams = pathParams({ flowId: pathId });
export const TaskParams = pathParams({ flowId: pathId, taskId: pathId });

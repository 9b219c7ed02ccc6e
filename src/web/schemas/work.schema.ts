/** WorkItem and the work views' queries (spec §2, CONTRACT §3). */
import { Type } from '@sinclair/typebox';
import type { Schema } from '../http/route.ts';
import { listOf, pageQuery } from './common.schema.ts';
import { SubTaskSchema, TASK_STATUSES } from './flow.schema.ts';

export const WorkItemSchema: Schema = {
  type: 'object',
  required: ['taskId', 'taskName', 'flowId', 'flowName', 'status', 'subtasks'],
  properties: {
    taskId: { type: 'string' },
    taskName: { type: 'string' },
    flowId: { type: 'string' },
    flowName: { type: 'string' },
    status: { type: 'string', enum: TASK_STATUSES },
    assigneeId: { type: ['string', 'null'] },
    estimateHours: { type: ['number', 'null'] },
    criticalPath: { type: 'boolean' },
    subtasks: { type: 'array', items: SubTaskSchema },
    blockedBy: {
      type: 'array',
      description: 'On blocked work: unfinished tasks holding it up, most-blocking first',
      items: {
        type: 'object',
        required: ['taskId', 'taskName', 'blocking'],
        properties: { taskId: { type: 'string' }, taskName: { type: 'string' }, blocking: { type: 'integer', minimum: 0 } },
      },
    },
  },
};

export const WorkListSchema = listOf(WorkItemSchema);

export const WorkQuery = Type.Object({
  assigneeId: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: "A member id, or 'none' for unassigned work" })),
  ...pageQuery(25),
});

export const MineQuery = Type.Object(pageQuery(25));

export const OverviewSchema: Schema = {
  type: 'object',
  required: ['counts', 'flows', 'topBlockers'],
  properties: {
    counts: {
      type: 'object',
      required: ['available', 'blocked', 'inProgress', 'done'],
      properties: { available: { type: 'integer' }, blocked: { type: 'integer' }, inProgress: { type: 'integer' }, done: { type: 'integer' } },
    },
    flows: {
      type: 'array',
      items: {
        type: 'object',
        required: ['flowId', 'flowName'],
        properties: {
          flowId: { type: 'string' }, flowName: { type: 'string' }, dueDate: { type: ['string', 'null'], format: 'date-time' },
          projectedFinish: { type: ['string', 'null'], format: 'date' }, onTrack: { type: ['boolean', 'null'] },
          readyCount: { type: 'integer' }, blockedCount: { type: 'integer' },
        },
      },
    },
    topBlockers: {
      type: 'array',
      items: {
        type: 'object',
        required: ['taskId', 'taskName', 'flowId', 'blocking'],
        properties: { taskId: { type: 'string' }, taskName: { type: 'string' }, flowId: { type: 'string' }, blocking: { type: 'integer' } },
      },
    },
  },
};

/** Schedule and Report (spec §2). */
import { Type } from '@sinclair/typebox';
import type { Schema } from '../http/route.ts';
import { dateInput } from './common.schema.ts';

const day: Schema = { type: 'string', format: 'date' };

export const ScheduleSchema: Schema = {
  type: 'object',
  required: ['flowId', 'entries'],
  properties: {
    flowId: { type: 'string' },
    startDate: { ...day, description: 'The working day the schedule starts on' },
    dueDate: { type: ['string', 'null'], format: 'date' },
    projectedFinish: { type: ['string', 'null'], format: 'date' },
    onTrack: { type: ['boolean', 'null'] },
    entries: {
      type: 'array',
      items: {
        type: 'object',
        required: ['taskName', 'criticalPath'],
        properties: {
          taskId: { type: 'string' }, taskName: { type: 'string' }, earliestStart: day, earliestFinish: day,
          criticalPath: { type: 'boolean' }, estimated: { type: 'boolean' },
        },
      },
    },
  },
};

export const ScheduleQuery = Type.Object({ startDate: Type.Optional(dateInput) });

const ids: Schema = { type: 'array', items: { type: 'string' } };

export const ReportSchema: Schema = {
  type: 'object',
  required: ['flowId', 'completion', 'tasksTotal'],
  properties: {
    flowId: { type: 'string' },
    flowName: { type: 'string' },
    completion: { type: 'number', minimum: 0, maximum: 1 },
    tasksTotal: { type: 'integer' },
    tasksDone: { type: 'integer' },
    tasksReady: { type: 'integer' },
    tasksBlocked: { type: 'integer' },
    hoursEstimated: { type: ['number', 'null'] },
    hoursRemaining: { type: ['number', 'null'] },
    unestimatedTasks: ids,
    orphanedTasks: ids,
    workload: {
      type: 'array',
      items: {
        type: 'object',
        required: ['memberId', 'openTasks'],
        properties: { memberId: { type: 'string' }, name: { type: ['string', 'null'] }, openTasks: { type: 'integer' }, hoursRemaining: { type: ['number', 'null'] } },
      },
    },
    topBlockers: {
      type: 'array',
      items: { type: 'object', required: ['taskId', 'taskName', 'blocking'], properties: { taskId: { type: 'string' }, taskName: { type: 'string' }, blocking: { type: 'integer' } } },
    },
  },
};

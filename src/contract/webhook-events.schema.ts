/**
 * The webhook event types (CONTRACT §3, and §5's baseline.created) and the `data` each carries, for the OpenAPI
 * document's `webhooks`: the domain event as the flows code wrote it to the outbox in the
 * change's own transaction. Payloads are thin (ids and what changed); a receiver fetches the
 * current resource when it needs more.
 */
import type { Schema } from './common.schema.ts';

export const WEBHOOK_EVENT_TYPES = [
  'flow.created',
  'flow.updated',
  'flow.archived',
  'flow.restored',
  'flow.published',
  'flow.unpublished',
  'task.created',
  'task.updated',
  'task.deleted',
  'task.started',
  'task.completed',
  'task.reopened',
  'task.unblocked',
  'task.assigned',
  'comment.created',
  'baseline.created',
] as const;

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

const id = (what: string): Schema => ({ type: 'string', description: what });
const flowId = id('The flow (`flw_…`)');
const taskId = id('The task (`tsk_…`)');
const changes: Schema = {
  type: 'array',
  items: { type: 'string' },
  description: 'Names of the fields the change set',
};

const flowChange: Schema = {
  type: 'object',
  required: ['flowId', 'changes'],
  properties: { flowId, changes },
};
const taskEvent = (extra: Record<string, Schema> = {}, required: string[] = []): Schema => ({
  type: 'object',
  required: ['flowId', 'taskId', ...required],
  properties: { flowId, taskId, ...extra },
});

/** [type, summary, data schema] */
export const WEBHOOK_EVENTS: readonly (readonly [WebhookEventType, string, Schema])[] = [
  [
    'flow.created',
    'A flow was created (directly or from a template)',
    {
      type: 'object',
      required: ['flowId', 'name', 'taskCount'],
      properties: { flowId, name: { type: 'string' }, taskCount: { type: 'integer', minimum: 0 } },
    },
  ],
  ['flow.updated', 'Name, description or due date of a flow changed', flowChange],
  ['flow.archived', 'A flow was archived (DELETE)', flowChange],
  ['flow.restored', 'An archived flow was restored', flowChange],
  ['flow.published', 'A flow got a (new) public link', flowChange],
  ['flow.unpublished', 'A flow was taken off the public web', flowChange],
  [
    'task.created',
    'A task (or sub-task, with `parentId`) was added',
    taskEvent({ parentId: { type: ['string', 'null'] } }),
  ],
  [
    'task.updated',
    "A task's name, description, estimate, dependencies or required deliverables changed",
    taskEvent({ changes }, ['changes']),
  ],
  [
    'task.deleted',
    'A task was removed; `bridged` lists the dependencies its dependents inherited',
    taskEvent({
      bridged: {
        type: 'array',
        items: { type: 'object', properties: { taskId, dependsOn: taskId } },
      },
    }),
  ],
  [
    'task.started',
    'A task went from ready to in progress (also an objective started by its first sub-task)',
    taskEvent(),
  ],
  [
    'task.completed',
    'A task was completed (also an objective completed by its last sub-task)',
    taskEvent(),
  ],
  ['task.reopened', 'A done task went back to in progress', taskEvent()],
  ['task.unblocked', 'A task stopped being blocked: everything it waited on is done', taskEvent()],
  [
    'task.assigned',
    "A task's assignee changed (`assigneeId` null: unassigned)",
    taskEvent(
      {
        assigneeId: { type: ['string', 'null'] },
        previousAssigneeId: { type: ['string', 'null'] },
      },
      ['assigneeId'],
    ),
  ],
  [
    'comment.created',
    'A comment was added to a task',
    taskEvent({ commentId: id('The comment') }, ['commentId']),
  ],
  [
    'baseline.created',
    'The schedule of a flow was kept as a baseline (CONTRACT §5)',
    {
      type: 'object',
      required: ['flowId', 'baselineId', 'name'],
      properties: { flowId, baselineId: id('The baseline (`bsl_…`)'), name: { type: 'string' } },
    },
  ],
];

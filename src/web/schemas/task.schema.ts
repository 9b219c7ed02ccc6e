/** Task request bodies and the Comment and Attachment resources (CONTRACT §3). */
import type { Schema } from '../http/route.ts';
import { dateTime, idParam, pageQuery } from './common.schema.ts';
import { description, estimate, name, TaskSchema } from './flow.schema.ts';

const taskIds: Schema = { type: 'array', maxItems: 1000, uniqueItems: true, items: { type: 'string', minLength: 1, maxLength: 100 } };

export const CreateTaskBody: Schema = {
  type: 'object',
  required: ['name'],
  additionalProperties: false,
  properties: {
    name: name(500), description, estimateHours: estimate, assigneeId: idParam('usr'),
    parentId: { type: 'string', minLength: 1, maxLength: 100, description: 'Makes a sub-task of that objective' },
    after: { ...taskIds, description: 'Tasks that must finish first' },
    before: { ...taskIds, description: 'Tasks that now wait on this one (inserts a step into a chain)' },
  },
};

export const PatchTaskBody: Schema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: { name: name(500), description: { ...description, type: ['string', 'null'] }, estimateHours: { ...estimate, type: ['number', 'null'] } },
};

export const DependencyBody: Schema = {
  type: 'object', required: ['taskId'], additionalProperties: false,
  properties: { taskId: { type: 'string', minLength: 1, maxLength: 100, description: 'The task that must be done first' } },
};

export const AssignBody: Schema = {
  type: 'object', required: ['assigneeId'], additionalProperties: false,
  properties: { assigneeId: { anyOf: [idParam('usr'), { type: 'null' }], description: 'A member id, or null to unassign' } },
};

export const CommentBody: Schema = {
  type: 'object', required: ['body'], additionalProperties: false,
  properties: { body: { type: 'string', minLength: 1, maxLength: 20_000, pattern: '\\S' } },
};

export const DeliverableBody: Schema = { type: 'object', required: ['name'], additionalProperties: false, properties: { name: name(300) } };

export const CommentSchema: Schema = {
  type: 'object',
  required: ['id', 'body', 'createdAt'],
  properties: {
    id: { type: 'string' }, taskId: { type: 'string' }, authorId: { type: 'string' }, authorName: { type: ['string', 'null'] },
    body: { type: 'string' }, createdAt: dateTime,
  },
};

export const AttachmentSchema: Schema = {
  type: 'object',
  required: ['id', 'name', 'kind'],
  properties: {
    id: { type: 'string' }, name: { type: 'string' }, mimeType: { type: 'string' }, sizeBytes: { type: 'integer' },
    kind: { type: 'string', enum: ['reference', 'deliverable'] }, deliverableId: { type: ['string', 'null'] }, uploadedAt: dateTime,
  },
};

export const AttachmentQuery: Schema = {
  type: 'object',
  required: ['name'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 255 },
    kind: { type: 'string', enum: ['reference', 'deliverable'], default: 'reference' },
    deliverableId: { type: 'string', minLength: 1, maxLength: 100 },
  },
};

export const ItemsQuery: Schema = { type: 'object', properties: pageQuery(25) };

export const CompleteSchema: Schema = {
  type: 'object', required: ['task', 'unblocked'],
  properties: { task: TaskSchema, unblocked: { type: 'array', items: TaskSchema, description: 'Tasks this completion made ready' } },
};

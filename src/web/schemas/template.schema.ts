/** Template (spec §2), its detail view with the task graph it would produce, and its requests. */
import { Type } from '@sinclair/typebox';
import type { Schema } from '../http/route.ts';
import { dateInput, pathParams } from './common.schema.ts';
import { name } from './flow.schema.ts';

const templateProperties: Record<string, Schema> = {
  id: { type: 'string' },
  name: { type: 'string' },
  description: { type: ['string', 'null'] },
  category: { type: ['string', 'null'] },
  taskCount: { type: 'integer', minimum: 0 },
  usedCount: { type: 'integer', minimum: 0, description: 'Flows this workspace has started from the template' },
};

export const TemplateSchema: Schema = { type: 'object', required: ['id', 'name'], properties: templateProperties };

export const TemplateTaskSchema: Schema = {
  type: 'object',
  required: ['index', 'name', 'after'],
  properties: {
    index: { type: 'integer', minimum: 0, description: 'Position in `tasks`; what `after` refers to' },
    name: { type: 'string' },
    description: { type: ['string', 'null'] },
    estimateHours: { type: 'number' },
    after: { type: 'array', items: { type: 'integer', minimum: 0 }, description: 'Indexes of the tasks that must finish first' },
    criticalPath: { type: 'boolean', description: 'On the chain that decides the finish of a flow started from the template' },
  },
};

export const TemplateDetailSchema: Schema = {
  type: 'object',
  required: ['id', 'name', 'tasks'],
  properties: {
    ...templateProperties,
    tasks: { type: 'array', items: TemplateTaskSchema, description: 'The task graph a flow started from this template gets' },
    durationDays: { type: 'integer', minimum: 1, description: 'Working days from start to finish with every task open, at 8 hours a day' },
  },
};

export const ListTemplatesQuery = Type.Object({ category: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })) });

// Ids are opaque: one that names nothing is 404, whatever its shape.
export const TemplateParams = pathParams({ templateId: Type.String({ minLength: 1, maxLength: 100 }) });

export const StartFlowFromTemplateBody = Type.Object({
  name: Type.Optional({ ...name(), description: "Defaults to the template's name" }),
  dueDate: Type.Optional(dateInput),
}, { additionalProperties: false });

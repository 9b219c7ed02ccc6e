/** Template (spec §2), its detail view with the task graph it would produce, and its requests. */
import { Type } from '@sinclair/typebox';
import { dateInput, Nullable, lookupId, pathParams, nameText } from './common.schema.ts';
import { name } from './flow.schema.ts';

const templateProperties = {
  id: Type.String(),
  name: Type.String(),
  description: Nullable(Type.String()),
  category: Nullable(Type.String()),
  taskCount: Type.Integer({ minimum: 0 }),
  usedCount: Type.Integer({
    minimum: 0,
    description: 'Flows this workspace has started from the template',
  }),
};

export const TemplateSchema = Type.Object(templateProperties);

export const TemplateTaskSchema = Type.Object({
  index: Type.Integer({ minimum: 0, description: 'Position in `tasks`; what `after` refers to' }),
  name: Type.String(),
  description: Nullable(Type.String()),
  estimateHours: Type.Number(),
  estimateRange: Type.Object(
    { low: Type.Number(), high: Type.Number() },
    { description: 'The least and the most hours such a task takes' },
  ),
  after: Type.Array(Type.Integer({ minimum: 0 }), {
    description: 'Indexes of the tasks that must finish first',
  }),
  criticalPath: Type.Boolean({
    description: 'On the chain that decides the finish of a flow started from the template',
  }),
});

export const TemplateDetailSchema = Type.Object({
  ...templateProperties,
  tasks: Type.Array(TemplateTaskSchema, {
    description: 'The task graph a flow started from this template gets',
  }),
  durationDays: Type.Integer({
    minimum: 1,
    description: 'Working days from start to finish with every task open, at 8 hours a day',
  }),
});

export const ListTemplatesQuery = Type.Object({ category: Type.Optional(nameText(100)) });

// Ids are opaque: one that names nothing is 404, whatever its shape.
export const TemplateParams = pathParams({ templateId: lookupId() });

export const StartFlowFromTemplateBody = Type.Object(
  {
    name: Type.Optional({ ...name(), description: "Defaults to the template's name" }),
    dueDate: Type.Optional(dateInput),
  },
  { additionalProperties: false },
);

/**
 * The public views' documents (`{public_url}/flows/{token}.json`, `/brainstorms/{token}.json`):
 * only what spec §1 rule 8 lets anyone with the link see. `additionalProperties: false`
 * everywhere, so the OpenAPI document states that nothing else is in them.
 */
import { Type } from '@sinclair/typebox';
import type { Schema } from '../http/route.ts';

const nullable = (type: string, extra: Schema = {}): Schema => ({ type: [type, 'null'], ...extra });

/** A published link's token; anything of another shape is a 404 (never a 400: it names nothing). */
export const PublicTokenParams = Type.Object({
  token: Type.String({ description: 'The token of the published link (32 characters, base64url)' }),
});

export const PublicFlowSchema: Schema = {
  type: 'object',
  description: 'A published flow: names, statuses, estimates, dependencies and the schedule verdict. Never an assignee, description, comment, file or note.',
  required: ['name', 'dueDate', 'projectedFinish', 'onTrack', 'tasks'],
  additionalProperties: false,
  properties: {
    name: { type: 'string' },
    dueDate: nullable('string', { description: 'When the flow is meant to land' }),
    projectedFinish: nullable('string', { format: 'date', description: 'The last working day of the schedule; null with nothing left open' }),
    onTrack: nullable('boolean', { description: 'projectedFinish <= dueDate; null without a due date' }),
    tasks: {
      type: 'array',
      description: 'The objectives in creation order (sub-tasks are not shown)',
      items: {
        type: 'object',
        required: ['id', 'name', 'status', 'estimateHours', 'critical', 'dependsOn'],
        additionalProperties: false,
        properties: {
          id: { type: 'string' },
          name: { type: 'string' },
          status: { type: 'string', enum: ['blocked', 'ready', 'in_progress', 'done'] },
          estimateHours: nullable('number', { description: 'null when unestimated' }),
          critical: { type: 'boolean', description: 'On the critical path' },
          dependsOn: { type: 'array', items: { type: 'string' }, description: 'Ids of the tasks this one waits for' },
        },
      },
    },
  },
};

export const PublicBrainstormSchema: Schema = {
  type: 'object',
  description: 'A published brainstorm: idea titles, tree position and tags only.',
  required: ['name', 'ideas'],
  additionalProperties: false,
  properties: {
    name: { type: 'string' },
    ideas: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'title', 'tags', 'parentId'],
        additionalProperties: false,
        properties: {
          id: { type: 'string' },
          title: { type: 'string' },
          tags: { type: 'array', items: { type: 'string' } },
          parentId: nullable('string', { description: 'The idea above this one; null for a root idea' }),
        },
      },
    },
  },
};

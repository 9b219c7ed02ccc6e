/**
 * The public views' documents (`{public_url}/flows/{token}.json`, `/brainstorms/{token}.json`):
 * only what spec §1 rule 8 lets anyone with the link see. `additionalProperties: false`
 * everywhere, so the OpenAPI document states that nothing else is in them.
 */
import { Type } from '@sinclair/typebox';
import { Nullable, StringEnum } from './common.schema.ts';
import { EstimateRangeSchema } from './flow.schema.ts';
import { TASK_STATUSES } from './vocabulary.ts';

/** A published link's token; anything of another shape is a 404 (never a 400: it names nothing). */
export const PublicTokenParams = Type.Object({
  token: Type.String({ description: 'The token of the published link (32 characters, base64url)' }),
});

export const PublicFlowSchema = Type.Object(
  {
    name: Type.String(),
    dueDate: Nullable(
      Type.String({ format: 'date', description: 'When the flow is meant to land: its UTC day' }),
    ),
    projectedFinish: Nullable(
      Type.String({
        format: 'date',
        description: 'The last working day of the schedule; null with nothing left open',
      }),
    ),
    onTrack: Nullable(
      Type.Boolean({ description: 'projectedFinish <= dueDate; null without a due date' }),
    ),
    finishP80: Nullable(
      Type.String({
        format: 'date',
        description:
          'The day four in five of the forecast’s samples finish by (2,000 samples, seed 0); null when no open task has a ranged estimate',
      }),
    ),
    tasks: Type.Array(
      Type.Object(
        {
          id: Type.String(),
          name: Type.String(),
          status: StringEnum(TASK_STATUSES),
          estimateHours: Nullable(Type.Number({ description: 'null when unestimated' })),
          estimateRange: EstimateRangeSchema,
          critical: Type.Boolean({ description: 'On the critical path' }),
          dependsOn: Type.Array(Type.String(), {
            description: 'Ids of the tasks this one waits for',
          }),
        },
        { additionalProperties: false },
      ),
      { description: 'The objectives in creation order (sub-tasks are not shown)' },
    ),
  },
  {
    description:
      'A published flow: names, statuses, estimates, dependencies and the schedule verdict. Never an assignee, description, comment, file or note.',
    additionalProperties: false,
  },
);

export const PublicBrainstormSchema = Type.Object(
  {
    name: Type.String(),
    ideas: Type.Array(
      Type.Object(
        {
          id: Type.String(),
          title: Type.String(),
          tags: Type.Array(Type.String()),
          parentId: Nullable(
            Type.String({ description: 'The idea above this one; null for a root idea' }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
  },
  {
    description: 'A published brainstorm: idea titles, tree position and tags only.',
    additionalProperties: false,
  },
);

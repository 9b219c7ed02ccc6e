/**
 * Baselines (CONTRACT §5): a flow's schedule kept as it stood, and how the schedule has moved
 * since. Slips are in working days, positive when later.
 */
import { Type } from '@sinclair/typebox';
import { dateInput, dateTime, lookupId, Nullable, pageQuery, pathParams } from './common.schema.ts';
import { name } from './flow.schema.ts';
import { LAST_DAY } from './vocabulary.ts';

const day = Type.String({ format: 'date' });
const slip = (description: string) => Nullable(Type.Integer(), { description });

export const CreateBaselineBody = Type.Object(
  { name: name(200) },
  { additionalProperties: false, examples: [{ name: 'Signed off 3 March' }] },
);

export const BaselineSchema = Type.Object({
  id: Type.String({ description: 'The baseline (`bsl_…`)' }),
  name: Type.String(),
  createdAt: dateTime,
  projectedFinish: Nullable(day, {
    description: 'The projected finish when the baseline was taken; null when nothing was open',
  }),
});

export const BaselineParams = pathParams({ flowId: lookupId(), baselineId: lookupId() });

export const BaselinesQuery = Type.Object(pageQuery(25));

export const VarianceQuery = Type.Object({
  startDate: Type.Optional({
    ...dateInput,
    description: `${dateInput.description}; the day the current schedule is laid from, as GET /schedule takes it (also refused when the schedule from it would end after ${LAST_DAY}). Default: today (UTC)`,
  }),
});

export const VarianceSchema = Type.Object({
  baseline: BaselineSchema,
  projectedFinish: Nullable(day, {
    description: 'The projected finish now; null when nothing is left open',
  }),
  slipDays: slip(
    'Working days the projected finish moved since the baseline (positive: later); null when either has nothing open',
  ),
  tasks: Type.Array(
    Type.Object({
      taskId: Type.String(),
      startSlipDays: slip(
        'Working days its earliest start moved (positive: later); null when it is done now or was done then (a done task has no dates)',
      ),
      finishSlipDays: slip(
        'Working days its earliest finish moved (positive: later); null when it is done now or was done then',
      ),
    }),
    {
      description:
        'Every objective in both the baseline and the flow, in flow order, moved or not (sub-tasks have no dates of their own and are never listed)',
    },
  ),
  added: Type.Array(Type.String(), {
    description: 'Objectives the flow has that the baseline has not, in flow order',
  }),
  removed: Type.Array(Type.String(), {
    description: 'Objectives of the baseline the flow no longer has, in the baseline’s order',
  }),
});

/** The forecast of a flow's finish from its ranged estimates (CONTRACT §5). */
import { Type } from '@sinclair/typebox';
import { Defaulted, Nullable } from './common.schema.ts';
import { ScheduleQuery } from './schedule.schema.ts';

/** The most `samples × open tasks` one forecast may cost: a bound on how long it holds the pool. */
export const MAX_FORECAST_WORK = 100_000_000;
/**
 * A forecast spends one more token of the credential's rate budget, and of its workspace's, for
 * each this many task schedules (about 40 ms of a worker's time).
 */
export const FORECAST_WORK_PER_TOKEN = 1_000_000;
/** The most tasks `tasks` lists. */
export const CRITICAL_TASKS_LISTED = 50;

export const ForecastQuery = Type.Object({
  samples: Defaulted(
    Type.Integer({
      minimum: 100,
      maximum: 100_000,
      default: 2000,
      description: `How many schedules to draw; samples × open tasks may be at most ${MAX_FORECAST_WORK.toLocaleString('en')}, and each ${FORECAST_WORK_PER_TOKEN.toLocaleString('en')} of them costs one more request of the rate budget (the credential's, and the workspace's budget for costly work)`,
    }),
  ),
  seed: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 4_294_967_295,
      description:
        'The random generator’s seed: the same seed, samples and flow version give the same answer. Default: a random one (echoed)',
    }),
  ),
  startDate: ScheduleQuery.properties.startDate,
});

const day = (description: string) => Nullable(Type.String({ format: 'date', description }));

export const ForecastSchema = Type.Object({
  samples: Type.Integer(),
  seed: Type.Integer({ description: 'Give it back to see the same answer again' }),
  startDate: Type.String({ format: 'date', description: 'The working day the schedules start on' }),
  finish: Type.Object(
    {
      p50: day('Half the samples finish on or before this working day; null with nothing open'),
      p80: day('Four samples in five finish on or before it'),
      p95: day('Nineteen in twenty finish on or before it'),
    },
    {
      description:
        'Quantiles of the samples’ projected finish (nearest rank: the earliest day on or before which that share of the samples finish)',
    },
  ),
  onTimeProbability: Nullable(
    Type.Number({
      minimum: 0,
      maximum: 1,
      description: 'The share of samples finishing on or before dueDate; null without one',
    }),
  ),
  tasks: Type.Array(
    Type.Object({
      taskId: Type.String(),
      criticality: Type.Number({
        minimum: 0,
        maximum: 1,
        description: 'The share of samples in which the task was on the critical path',
      }),
    }),
    {
      maxItems: CRITICAL_TASKS_LISTED,
      description: `The ${CRITICAL_TASKS_LISTED} tasks most often critical (never-critical ones left out), most often first, then in flow order`,
    },
  ),
});

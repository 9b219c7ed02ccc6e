/**
 * Commands as data (CONTRACT §5): the body of a batch and of a what-if, and their answers.
 * Each command is its single route's body with `op` and the ids the route takes in its path;
 * one list, judged in order, so a batch and a what-if of the same list agree.
 */
import { Type, type Static, type TProperties, type TUnion } from '@sinclair/typebox';
import { dateInput, lookupId, Nullable, StringEnum, wordedPattern } from './common.schema.ts';
import { TASK_STATUSES } from './vocabulary.ts';
import { AssignBody, CreateTaskBody, PatchTaskBody } from './task.schema.ts';

/** The most commands one list may hold. */
export const MAX_COMMANDS = 500;

/**
 * A list spends one more token of the credential's rate budget, and of its workspace's, for each
 * this many task derivations it asks for (about 50 ms of the server's time): a command that
 * changes the graph's shape derives every task of the flow again, any other counts
 * KEPT_SHAPE_COMMAND_WORK.
 */
export const COMMAND_WORK_PER_TOKEN = 25_000;
/** What a command that keeps the graph's shape counts, in task derivations. */
export const KEPT_SHAPE_COMMAND_WORK = 200;

export const REF_PATTERN = wordedPattern(
  '^[A-Za-z0-9_-]{1,64}$',
  'must be 1 to 64 letters, digits, _ or -',
);

const taskId = lookupId({
  description: 'A task id, or "$ref" naming a task an earlier createTask of this list made',
});

/** One op's command: `op` first, then the route's path ids and body fields. */
const command = <O extends string, P extends TProperties>(
  op: O,
  properties: P,
  description: string,
) =>
  Type.Object(
    { op: Type.Literal(op), ...properties },
    { additionalProperties: false, description },
  );

export const CreateTaskCommand = command(
  'createTask',
  {
    // Its ids (parentId, after, before) may name an earlier command's task as "$ref".
    ...CreateTaskBody.properties,
    ref: Type.Optional(
      Type.String({
        pattern: REF_PATTERN,
        description: 'A name later commands use for this task, as "$ref"',
      }),
    ),
  },
  'POST /tasks',
);
export const UpdateTaskCommand = Type.Object(
  { op: Type.Literal('updateTask'), taskId, ...PatchTaskBody.properties },
  {
    additionalProperties: false,
    // As the PATCH body needs one field: op, taskId and one to change.
    minProperties: 3,
    description: 'PATCH /tasks/{taskId}: op, taskId and at least one field to change',
  },
);
export const DeleteTaskCommand = command('deleteTask', { taskId }, 'DELETE /tasks/{taskId}');
export const AddDependencyCommand = command(
  'addDependency',
  { taskId, dependsOnId: taskId },
  'POST /tasks/{taskId}/dependencies',
);
export const RemoveDependencyCommand = command(
  'removeDependency',
  { taskId, dependsOnId: taskId },
  'DELETE /tasks/{taskId}/dependencies/{dependsOnId}',
);
export const StartCommand = command('start', { taskId }, 'POST /tasks/{taskId}/start');
export const CompleteCommand = command('complete', { taskId }, 'POST /tasks/{taskId}/complete');
export const ReopenCommand = command('reopen', { taskId }, 'POST /tasks/{taskId}/reopen');
export const AssignCommand = command(
  'assign',
  { taskId, ...AssignBody.properties },
  'POST /tasks/{taskId}/assign',
);

const COMMANDS = [
  CreateTaskCommand,
  UpdateTaskCommand,
  DeleteTaskCommand,
  AddDependencyCommand,
  RemoveDependencyCommand,
  StartCommand,
  CompleteCommand,
  ReopenCommand,
  AssignCommand,
] as const;

export const COMMAND_OPS = COMMANDS.map((c) => c.properties.op.const);

/** Ops that move work: a batch holding one needs work:write besides flows:write. */
export const WORK_OPS: ReadonlySet<string> = new Set(['start', 'complete', 'reopen', 'assign']);

/**
 * One command, told apart by `op`: the validator reads the discriminator, so a refusal speaks
 * of that op's own fields, not of all nine alternatives. (`oneOf`, as a discriminator needs:
 * TypeBox spells a union `anyOf`.)
 */
export const CommandSchema = Type.Unsafe<Static<TUnion<[...typeof COMMANDS]>>>({
  type: 'object',
  oneOf: [...COMMANDS],
  discriminator: { propertyName: 'op' },
});

export type Command = Static<typeof CommandSchema>;

const commands = Type.Array(CommandSchema, {
  minItems: 1,
  maxItems: MAX_COMMANDS,
  description: `Judged in order, each on the state the ones before it left. A list costs one request of the rate budget, and one more (of the credential's and of the workspace's budget for costly work) for each ${COMMAND_WORK_PER_TOKEN.toLocaleString('en')} task derivations it asks for: a deleteTask, addDependency or removeDependency, a createTask with before or parentId, or a command on a sub-task counts every task of the flow; any other command counts ${KEPT_SHAPE_COMMAND_WORK}`,
});

export const BatchBody = Type.Object(
  {
    commands,
    ifVersion: Type.Optional(
      Type.Integer({
        minimum: 1,
        description: 'Refused with 409 VERSION_MISMATCH unless the flow is at this version',
      }),
    ),
  },
  {
    additionalProperties: false,
    examples: [
      {
        ifVersion: 7,
        commands: [
          { op: 'createTask', ref: 'qa', name: 'QA pass', estimateHours: 16, after: ['tsk_build'] },
          { op: 'addDependency', taskId: 'tsk_release', dependsOnId: '$qa' },
          { op: 'complete', taskId: 'tsk_design' },
        ],
      },
    ],
  },
);

export const BatchSchema = Type.Object({
  version: Type.Integer({ description: 'The flow version the batch committed' }),
  results: Type.Array(
    Type.Object({
      index: Type.Integer({ minimum: 0 }),
      taskId: Type.String({ description: 'The task the command made or acted on' }),
    }),
  ),
});

export const WhatIfBody = Type.Object(
  {
    commands,
    startDate: Type.Optional({
      ...dateInput,
      description: `${dateInput.description}; the day both outlooks are scheduled from. Default: today (UTC)`,
    }),
  },
  {
    additionalProperties: false,
    examples: [
      {
        // "If Build slips 3 days and Docs is dropped, when do we land?"
        commands: [
          { op: 'updateTask', taskId: 'tsk_build', estimateHours: 64 },
          { op: 'deleteTask', taskId: 'tsk_docs' },
        ],
      },
    ],
  },
);

const day = Type.String({ format: 'date' });

const OutlookSchema = Type.Object({
  projectedFinish: Nullable(day),
  onTrack: Nullable(Type.Boolean()),
  criticalPath: Type.Array(Type.String(), {
    description: 'The objectives on the critical path, by earliest start',
  }),
});

const TaskOutlookSchema = Type.Object({
  status: StringEnum(TASK_STATUSES),
  earliestStart: Nullable(day, { description: 'Null for a done task or a sub-task' }),
  earliestFinish: Nullable(day),
  critical: Type.Boolean(),
});

export const WhatIfSchema = Type.Object({
  version: Type.Integer({ description: 'The flow version both outlooks start from' }),
  current: OutlookSchema,
  scenario: OutlookSchema,
  finishDeltaDays: Nullable(Type.Integer(), {
    description:
      'Working days the scenario finishes later (negative: earlier); null when either has nothing left to do',
  }),
  changed: Type.Array(
    Type.Object({
      taskId: Type.String(),
      ref: Type.Optional(Type.String()),
      before: Type.Optional(TaskOutlookSchema),
      after: Type.Optional(TaskOutlookSchema),
    }),
  ),
});

export type TaskOutlook = Static<typeof TaskOutlookSchema>;
export type Outlook = Static<typeof OutlookSchema>;

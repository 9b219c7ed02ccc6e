/** Task request bodies and the Comment and Attachment resources (CONTRACT §3). */
import { Type } from '@sinclair/typebox';
import {
  dateTime,
  Defaulted,
  freeText,
  idParam,
  lookupId,
  nameText,
  Nullable,
  pageQuery,
  StringEnum,
  wordedPattern,
} from './common.schema.ts';
import { description, estimate, estimateRange, name, TaskSchema } from './flow.schema.ts';
import { TASK_STATUSES } from './vocabulary.ts';

const taskIds = Type.Array(lookupId(), { maxItems: 1000, uniqueItems: true });

export const CreateTaskBody = Type.Object(
  {
    name: name(500),
    description: Type.Optional(description),
    estimateHours: Type.Optional(estimate),
    estimateRange: Type.Optional(estimateRange),
    assigneeId: Type.Optional(idParam('usr')),
    parentId: Type.Optional(lookupId({ description: 'Makes a sub-task of that objective' })),
    after: Type.Optional({ ...taskIds, description: 'Tasks that must finish first' }),
    before: Type.Optional({
      ...taskIds,
      description: 'Tasks that now wait on this one (inserts a step into a chain)',
    }),
  },
  { additionalProperties: false },
);

export const PatchTaskBody = Type.Object(
  {
    name: Type.Optional(name(500)),
    description: Type.Optional(Nullable(description)),
    estimateHours: Type.Optional(Nullable(estimate)),
    estimateRange: Type.Optional(
      Nullable({ ...estimateRange, description: `${estimateRange.description}; null clears it` }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const DependencyBody = Type.Object(
  {
    taskId: lookupId({ description: 'The task that must be done first' }),
  },
  { additionalProperties: false },
);

export const AssignBody = Type.Object(
  {
    assigneeId: Type.Union([idParam('usr'), Type.Null()], {
      description: 'A member id, or null to unassign',
    }),
  },
  { additionalProperties: false },
);

export const CommentBody = Type.Object(
  {
    body: freeText(20_000, { notBlank: true }),
  },
  { additionalProperties: false },
);

export const DeliverableBody = Type.Object({ name: name(300) }, { additionalProperties: false });

export const CommentSchema = Type.Object({
  id: Type.String(),
  taskId: Type.String(),
  authorId: Type.String(),
  authorName: Nullable(Type.String()),
  body: Type.String(),
  createdAt: dateTime,
});

/** A task's attachment, and a brainstorm idea's file (always a reference, with no `deliverableId`). */
export const AttachmentSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  mimeType: Type.String(),
  sizeBytes: Type.Integer(),
  kind: StringEnum(['reference', 'deliverable']),
  deliverableId: Type.Optional(
    Nullable(Type.String(), {
      description: "On a task's attachment: the deliverable it hands in, or null",
    }),
  ),
  uploadedAt: dateTime,
});

export const AttachmentQuery = Type.Object({
  name: nameText(255),
  kind: Defaulted(StringEnum(['reference', 'deliverable'], { default: 'reference' })),
  deliverableId: Type.Optional(lookupId()),
});

export const ItemsQuery = Type.Object(pageQuery(25));

export const CompleteSchema = Type.Object({
  task: TaskSchema,
  unblocked: Type.Array(TaskSchema, { description: 'Tasks this completion made ready' }),
});

const page = pageQuery(100, 1000);
const anyStatus = `(${TASK_STATUSES.join('|')})`;

/** GET /flows/{flowId}/tasks (CONTRACT §6): a page of a large flow's tasks, in flow order. */
export const TaskPageQuery = Type.Object({
  size: page.size,
  from: {
    ...page.from,
    description:
      'Where the page starts: 0 for the first, else the `next` of the page before (a place in flow order, not a count: a walk skips no task when others are deleted meanwhile)',
  },
  status: Type.Optional(
    Type.String({
      maxLength: 100,
      pattern: wordedPattern(
        `^${anyStatus}(,${anyStatus})*$`,
        `must be a comma list of task statuses: ${TASK_STATUSES.join(', ')}`,
      ),
      description: `Only tasks in these statuses (comma list of ${TASK_STATUSES.join(', ')})`,
    }),
  ),
  changedSince: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 2_147_483_647,
      description:
        "A flow `version` (a page's or the flow's): only tasks whose Task changed after it, derived fields (status, blockedBy, criticalPath, subtasks) included; created tasks too, deleted ones never (the event feed's task.deleted tells those). After the server loaded the flow afresh (a restart, another server's write), a version from before that load lists every task. One after the flow's version is 400 VALIDATION_FAILED",
    }),
  ),
});

export const TaskPageSchema = Type.Object({
  total: Type.Integer({ minimum: 0, description: 'Tasks that match, on every page' }),
  items: Type.Array(TaskSchema, { description: 'In flow order (creation order)' }),
  version: Type.Integer({
    description: "The flow's version this page was read at: keep it, to ask for what changed since",
  }),
  next: Nullable(Type.Integer({ minimum: 1 }), {
    description: '`from` of the next page; null on the last',
  }),
});

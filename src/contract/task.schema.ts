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
} from './common.schema.ts';
import { description, estimate, estimateRange, name, TaskSchema } from './flow.schema.ts';

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

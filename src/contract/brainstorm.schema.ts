/** BrainstormSummary, Brainstorm, Idea and IdeaComment (spec §2) and the brainstorm request bodies (CONTRACT §3). */
import { Type, type TSchema } from '@sinclair/typebox';
import {
  dateTime,
  Defaulted,
  freeText,
  idParam,
  nameText,
  Nullable,
  pageQuery,
  lookupId,
  pathParams,
  StringEnum,
  lineText,
} from './common.schema.ts';
import { description, name } from './flow.schema.ts';
import { SHARE_ROLES } from './vocabulary.ts';

/** The most ideas one brainstorm holds, and so one creation call takes (spec §8 leaves it open). */
export const MAX_IDEAS = 10_000;
const MAX_TAGS = 20;

const title = name(500);
const notes = { ...description, description: 'Never shown on the public view' };
const tags = Type.Array(nameText(50), {
  maxItems: MAX_TAGS,
  uniqueItems: true,
  description: `Up to ${MAX_TAGS} distinct labels; the public view shows them`,
});
const assigneeId = {
  ...idParam('usr'),
  description: 'A member of the workspace; never shown on the public view',
};
const orNull = <T extends TSchema>(schema: T, description?: string) =>
  Type.Union([schema, Type.Null()], description === undefined ? {} : { description });

const summaryProperties = {
  id: Type.String(),
  name: Type.String(),
  archived: Type.Boolean(),
  public: Type.Boolean(),
  publicUrl: Nullable(Type.String(), {
    description:
      '`{public_url}/brainstorms/{token}`; a fresh token on every publish, null when private',
  }),
  ideaCount: Type.Integer(),
  createdAt: dateTime,
  updatedAt: dateTime,
};

export const BrainstormSummarySchema = Type.Object(summaryProperties);

export const IdeaSchema = Type.Object({
  id: Type.String(),
  brainstormId: Type.String(),
  parentId: Nullable(Type.String({ description: 'Null for a root idea' })),
  title: Type.String(),
  notes: Nullable(Type.String()),
  tags: Type.Array(Type.String()),
  assigneeId: Nullable(Type.String()),
  commentCount: Type.Integer(),
  fileCount: Type.Integer(),
  createdAt: dateTime,
});

export const BrainstormSchema = Type.Object({
  ...summaryProperties,
  ideas: Type.Array(IdeaSchema, {
    description: 'Every idea on the board, in the order they were added',
  }),
});

export const IdeaCommentSchema = Type.Object({
  id: Type.String(),
  ideaId: Type.String(),
  authorId: Type.String(),
  authorName: Nullable(Type.String()),
  body: Type.String(),
  createdAt: dateTime,
});

export const BrainstormShareSchema = Type.Object({
  id: Type.String(),
  email: Type.String({ description: "The account's address" }),
  role: StringEnum(SHARE_ROLES, {
    description: '`viewer` reads; `commenter` also comments on ideas',
  }),
  brainstormId: Type.String(),
  createdAt: dateTime,
});

export const CreateBrainstormBody = Type.Object(
  {
    name: name(),
    ideas: Type.Optional(
      Type.Array(
        Type.Object(
          {
            title,
            notes: Type.Optional(orNull(notes)),
            tags: Type.Optional(tags),
            assigneeId: Type.Optional(orNull(assigneeId)),
            parent: Type.Optional(
              Type.Integer({
                minimum: 0,
                description: 'Index of the parent idea in this array; omit for a root idea',
              }),
            ),
          },
          { additionalProperties: false },
        ),
        { maxItems: MAX_IDEAS },
      ),
    ),
  },
  { additionalProperties: false },
);

export const PatchBrainstormBody = Type.Object({ name: name() }, { additionalProperties: false });

export const CreateIdeaBody = Type.Object(
  {
    title,
    notes: Type.Optional(orNull(notes)),
    tags: Type.Optional(tags),
    assigneeId: Type.Optional(orNull(assigneeId)),
    parentId: Type.Optional(
      orNull(idParam('ide'), 'An idea of this brainstorm; omit (or null) for a root idea'),
    ),
  },
  { additionalProperties: false },
);

export const PatchIdeaBody = Type.Object(
  {
    title: Type.Optional(title),
    notes: Type.Optional(orNull(notes)),
    tags: Type.Optional(tags),
    assigneeId: Type.Optional(orNull(assigneeId)),
    parentId: Type.Optional(
      orNull(
        idParam('ide'),
        'Re-parents the idea (null makes it a root); onto itself or a descendant is 400 CIRCULAR_DEPENDENCY',
      ),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const IdeaCommentBody = Type.Object(
  {
    body: freeText(20_000, { notBlank: true }),
  },
  { additionalProperties: false },
);

export const CreateBrainstormShareBody = Type.Object(
  {
    email: Type.String({
      maxLength: 254,
      description:
        'The address of an existing account; a malformed one is 400 INVALID_EMAIL, one with no account 404 NOT_FOUND (20 an hour per credential, then 429 RATE_LIMITED)',
    }),
    role: Defaulted(StringEnum(SHARE_ROLES, { default: 'viewer' })),
  },
  { additionalProperties: false },
);

export const IdeaFileQuery = Type.Object({ name: nameText(255, { description: 'The file name' }) });

export const ListBrainstormsQuery = Type.Object({
  archived: Defaulted(
    Type.Boolean({ default: false, description: 'Archived boards instead of live ones' }),
  ),
  q: Type.Optional(lineText(200, { description: 'Match on name' })),
  ...pageQuery(25),
});

export const BrainstormPageQuery = Type.Object(pageQuery(25));

// Path ids are opaque: one that names nothing is 404, whatever its shape.
export const BrainstormParams = pathParams({ brainstormId: lookupId() });
export const IdeaParams = pathParams({ brainstormId: lookupId(), ideaId: lookupId() });
export const IdeaFileParams = pathParams({
  brainstormId: lookupId(),
  ideaId: lookupId(),
  fileId: lookupId(),
});
export const BrainstormShareParams = pathParams({ brainstormId: lookupId(), shareId: lookupId() });

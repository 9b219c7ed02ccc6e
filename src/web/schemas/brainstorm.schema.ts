/** BrainstormSummary, Brainstorm, Idea and IdeaComment (spec §2) and the brainstorm request bodies (CONTRACT §3). */
import { MAX_IDEAS } from '../../services/brainstorms/ideas.service.ts';
import { Type, type TSchema } from '@sinclair/typebox';
import type { Schema } from '../http/route.ts';
import { dateTime, Defaulted, idParam, pageQuery, pathParams, StringEnum } from './common.schema.ts';
import { description, name } from './flow.schema.ts';
import { SHARE_ROLES } from './team.schema.ts';

const MAX_TAGS = 20;

const title = name(500);
const notes = { ...description, description: 'Never shown on the public view' };
const tags = Type.Array(Type.String({ minLength: 1, maxLength: 50, pattern: '\\S' }), {
  maxItems: MAX_TAGS, uniqueItems: true, description: `Up to ${MAX_TAGS} distinct labels; the public view shows them`,
});
const assigneeId = { ...idParam('usr'), description: 'A member of the workspace; never shown on the public view' };
const orNull = <T extends TSchema>(schema: T, description?: string) =>
  Type.Union([schema, Type.Null()], description === undefined ? {} : { description });

const summaryProperties: Record<string, Schema> = {
  id: { type: 'string' },
  name: { type: 'string' },
  archived: { type: 'boolean' },
  public: { type: 'boolean' },
  publicUrl: { type: ['string', 'null'], description: '`{public_url}/brainstorms/{token}`; a fresh token on every publish, null when private' },
  ideaCount: { type: 'integer' },
  createdAt: dateTime,
  updatedAt: dateTime,
};

export const BrainstormSummarySchema: Schema = { type: 'object', required: ['id', 'name', 'archived'], properties: summaryProperties };

export const IdeaSchema: Schema = {
  type: 'object',
  required: ['id', 'brainstormId', 'title'],
  properties: {
    id: { type: 'string' },
    brainstormId: { type: 'string' },
    parentId: { type: ['string', 'null'], description: 'Null for a root idea' },
    title: { type: 'string' },
    notes: { type: ['string', 'null'] },
    tags: { type: 'array', items: { type: 'string' } },
    assigneeId: { type: ['string', 'null'] },
    commentCount: { type: 'integer' },
    fileCount: { type: 'integer' },
    createdAt: dateTime,
  },
};

export const BrainstormSchema: Schema = {
  type: 'object',
  required: ['id', 'name', 'archived', 'ideas'],
  properties: { ...summaryProperties, ideas: { type: 'array', items: IdeaSchema, description: 'Every idea on the board, in the order they were added' } },
};

export const IdeaCommentSchema: Schema = {
  type: 'object',
  required: ['id', 'body', 'createdAt'],
  properties: {
    id: { type: 'string' }, ideaId: { type: 'string' }, authorId: { type: 'string' }, authorName: { type: ['string', 'null'] },
    body: { type: 'string' }, createdAt: dateTime,
  },
};

export const BrainstormShareSchema: Schema = {
  type: 'object',
  required: ['id', 'email', 'role', 'brainstormId'],
  properties: {
    id: { type: 'string' },
    email: { type: 'string', description: 'The account\'s address' },
    role: { type: 'string', enum: SHARE_ROLES, description: '`viewer` reads; `commenter` also comments on ideas' },
    brainstormId: { type: 'string' },
    createdAt: dateTime,
  },
};

export const CreateBrainstormBody = Type.Object({
  name: name(),
  ideas: Type.Optional(Type.Array(
    Type.Object({
      title, notes: Type.Optional(orNull(notes)), tags: Type.Optional(tags), assigneeId: Type.Optional(orNull(assigneeId)),
      parent: Type.Optional(Type.Integer({ minimum: 0, description: 'Index of the parent idea in this array; omit for a root idea' })),
    }, { additionalProperties: false }),
    { maxItems: MAX_IDEAS },
  )),
}, { additionalProperties: false });

export const PatchBrainstormBody = Type.Object({ name: name() }, { additionalProperties: false });

export const CreateIdeaBody = Type.Object({
  title, notes: Type.Optional(orNull(notes)), tags: Type.Optional(tags), assigneeId: Type.Optional(orNull(assigneeId)),
  parentId: Type.Optional(orNull(idParam('ide'), 'An idea of this brainstorm; omit (or null) for a root idea')),
}, { additionalProperties: false });

export const PatchIdeaBody = Type.Object({
  title: Type.Optional(title), notes: Type.Optional(orNull(notes)), tags: Type.Optional(tags), assigneeId: Type.Optional(orNull(assigneeId)),
  parentId: Type.Optional(orNull(idParam('ide'), 'Re-parents the idea (null makes it a root); onto itself or a descendant is 400 CIRCULAR_DEPENDENCY')),
}, { additionalProperties: false, minProperties: 1 });

export const IdeaCommentBody = Type.Object({
  body: Type.String({ minLength: 1, maxLength: 20_000, pattern: '\\S' }),
}, { additionalProperties: false });

export const CreateBrainstormShareBody = Type.Object({
  email: Type.String({ maxLength: 254, description: 'The address of an existing account; a malformed one is 400 INVALID_EMAIL, one with no account 404 NOT_FOUND (20 an hour per credential, then 429 RATE_LIMITED)' }),
  role: Defaulted(StringEnum(SHARE_ROLES, { default: 'viewer' })),
}, { additionalProperties: false });

export const IdeaFileQuery = Type.Object({ name: Type.String({ minLength: 1, maxLength: 255, description: 'The file name' }) });

export const ListBrainstormsQuery = Type.Object({
  archived: Defaulted(Type.Boolean({ default: false, description: 'Archived boards instead of live ones' })),
  q: Type.Optional(Type.String({ maxLength: 200, description: 'Match on name' })),
  ...pageQuery(25),
});

export const BrainstormPageQuery = Type.Object(pageQuery(25));

// Path ids are opaque: one that names nothing is 404, whatever its shape.
const pathId = Type.String({ minLength: 1, maxLength: 100 });
export const BrainstormParams = pathParams({ brainstormId: pathId });
export const IdeaParams = pathParams({ brainstormId: pathId, ideaId: pathId });
export const IdeaFileParams = pathParams({ brainstormId: pathId, ideaId: pathId, fileId: pathId });
export const BrainstormShareParams = pathParams({ brainstormId: pathId, shareId: pathId });

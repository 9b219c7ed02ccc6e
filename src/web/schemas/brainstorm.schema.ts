/** BrainstormSummary, Brainstorm, Idea and IdeaComment (spec §2) and the brainstorm request bodies (CONTRACT §3). */
import { MAX_IDEAS } from '../../services/brainstorms/ideas.service.ts';
import type { Schema } from '../http/route.ts';
import { dateTime, idParam, pageQuery, pathParams } from './common.schema.ts';
import { description, name } from './flow.schema.ts';
import { SHARE_ROLES } from './team.schema.ts';

const MAX_TAGS = 20;

const title = name(500);
const notes: Schema = { ...description, description: 'Never shown on the public view' };
const tags: Schema = {
  type: 'array', maxItems: MAX_TAGS, uniqueItems: true,
  items: { type: 'string', minLength: 1, maxLength: 50, pattern: '\\S' },
  description: `Up to ${MAX_TAGS} distinct labels; the public view shows them`,
};
const assigneeId: Schema = { ...idParam('usr'), description: 'A member of the workspace; never shown on the public view' };
const orNull = (schema: Schema): Schema => ({ anyOf: [schema, { type: 'null' }] });

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

export const CreateBrainstormBody: Schema = {
  type: 'object',
  required: ['name'],
  additionalProperties: false,
  properties: {
    name: name(),
    ideas: {
      type: 'array',
      maxItems: MAX_IDEAS,
      items: {
        type: 'object',
        required: ['title'],
        additionalProperties: false,
        properties: {
          title, notes: orNull(notes), tags, assigneeId: orNull(assigneeId),
          parent: { type: 'integer', minimum: 0, description: 'Index of the parent idea in this array; omit for a root idea' },
        },
      },
    },
  },
};

export const PatchBrainstormBody: Schema = {
  type: 'object', required: ['name'], additionalProperties: false, properties: { name: name() },
};

export const CreateIdeaBody: Schema = {
  type: 'object',
  required: ['title'],
  additionalProperties: false,
  properties: {
    title, notes: orNull(notes), tags, assigneeId: orNull(assigneeId),
    parentId: { ...orNull(idParam('ide')), description: 'An idea of this brainstorm; omit (or null) for a root idea' },
  },
};

export const PatchIdeaBody: Schema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    title, notes: orNull(notes), tags, assigneeId: orNull(assigneeId),
    parentId: { ...orNull(idParam('ide')), description: 'Re-parents the idea (null makes it a root); onto itself or a descendant is 400 CIRCULAR_DEPENDENCY' },
  },
};

export const IdeaCommentBody: Schema = {
  type: 'object', required: ['body'], additionalProperties: false,
  properties: { body: { type: 'string', minLength: 1, maxLength: 20_000, pattern: '\\S' } },
};

export const CreateBrainstormShareBody: Schema = {
  type: 'object',
  required: ['email'],
  additionalProperties: false,
  properties: {
    email: { type: 'string', maxLength: 254, description: 'The address of an existing account; a malformed one is 400 INVALID_EMAIL, one with no account 404 NOT_FOUND (20 an hour per credential, then 429 RATE_LIMITED)' },
    role: { type: 'string', enum: SHARE_ROLES, default: 'viewer' },
  },
};

export const IdeaFileQuery: Schema = {
  type: 'object', required: ['name'], properties: { name: { type: 'string', minLength: 1, maxLength: 255, description: 'The file name' } },
};

export const ListBrainstormsQuery: Schema = {
  type: 'object',
  properties: {
    archived: { type: 'boolean', default: false, description: 'Archived boards instead of live ones' },
    q: { type: 'string', maxLength: 200, description: 'Match on name' },
    ...pageQuery(25),
  },
};

export const BrainstormPageQuery: Schema = { type: 'object', properties: pageQuery(25) };

// Path ids are opaque: one that names nothing is 404, whatever its shape.
const pathId: Schema = { type: 'string', minLength: 1, maxLength: 100 };
export const BrainstormParams = pathParams({ brainstormId: pathId });
export const IdeaParams = pathParams({ brainstormId: pathId, ideaId: pathId });
export const IdeaFileParams = pathParams({ brainstormId: pathId, ideaId: pathId, fileId: pathId });
export const BrainstormShareParams = pathParams({ brainstormId: pathId, shareId: pathId });

/** Brainstorm routes (CONTRACT §3): boards, ideas, idea comments and files, shares; thin handlers over the brainstorm services. */
import { json, noContent, route, type Route } from '../http/route.ts';
import type { Principal } from '../../services/auth/principal.ts';
import {
  archiveBrainstorm,
  brainstormEtag,
  etagOf,
  createBrainstorm,
  getBrainstorm,
  listBrainstorms,
  publishBrainstorm,
  renameBrainstorm,
  restoreBrainstorm,
  unpublishBrainstorm,
  type BrainstormContext,
} from '../../services/brainstorms/brainstorms.service.ts';
import {
  addIdea,
  addIdeaComment,
  addIdeaFile,
  editIdea,
  ideaFile,
  listIdeaComments,
  listIdeaFiles,
  removeIdea,
} from '../../services/brainstorms/ideas.service.ts';
import {
  changeBrainstormShareRole,
  listBrainstormShares,
  revokeBrainstormShare,
  shareBrainstorm,
} from '../../services/brainstorms/shares.service.ts';
import { listOf } from '../../contract/common.schema.ts';
import {
  BrainstormPageQuery,
  BrainstormParams,
  BrainstormSchema,
  BrainstormShareParams,
  BrainstormShareSchema,
  BrainstormSummarySchema,
  CreateBrainstormBody,
  CreateBrainstormShareBody,
  CreateIdeaBody,
  IdeaCommentBody,
  IdeaCommentSchema,
  IdeaFileParams,
  IdeaFileQuery,
  IdeaParams,
  IdeaSchema,
  ListBrainstormsQuery,
  PatchBrainstormBody,
  PatchIdeaBody,
} from '../../contract/brainstorm.schema.ts';
import { AttachmentSchema } from '../../contract/task.schema.ts';
import { PatchShareBody } from '../../contract/team.schema.ts';
import { fileReply, quotaBeforeBody, uploadType } from './files.ts';
import type { Services } from '../deps.ts';

const BOARDS = '/v1/brainstorms';
const BOARD = `${BOARDS}/{brainstormId}`;
const IDEA = `${BOARD}/ideas/{ideaId}`;

export function brainstormRoutes(services: Services): Route[] {
  const { sql, config } = services;
  const context = (ctx: { principal: Principal }): BrainstormContext => ({
    sql,
    principal: ctx.principal,
    publicUrl: config.publicUrl,
  });
  const read = { auth: 'bearer', scopes: ['flows:read'], tags: ['Brainstorms'] } as const;
  const write = {
    auth: 'bearer',
    scopes: ['flows:write'],
    minRole: 'member',
    tags: ['Brainstorms'],
  } as const;
  const summary = (description: string) => ({
    200: { description, schema: BrainstormSummarySchema },
  });
  const board = async <const S extends number, T>(
    ctx: { params: { brainstormId: string } },
    status: S,
    result: Promise<{ view: T; version: number }>,
  ) => {
    const { view, version } = await result;
    return json(status, view, { etag: etagOf(ctx.params.brainstormId, version) });
  };

  return [
    route({
      ...read,
      method: 'GET',
      path: BOARDS,
      operationId: 'listBrainstorms',
      summary: 'Brainstorms of the workspace and those shared with the person acting, newest first',
      query: ListBrainstormsQuery,
      responses: {
        200: { description: 'A page of brainstorms', schema: listOf(BrainstormSummarySchema) },
      },
      handler: async (ctx) => json(200, await listBrainstorms(context(ctx), ctx.query)),
    }),
    route({
      ...write,
      method: 'POST',
      path: BOARDS,
      operationId: 'createBrainstorm',
      summary: 'Create a brainstorm with its idea tree (`parent` is an index into `ideas`)',
      body: CreateBrainstormBody,
      errors: ['CIRCULAR_DEPENDENCY'],
      responses: { 201: { description: 'The new brainstorm', schema: BrainstormSchema } },
      handler: async (ctx) => {
        const { view } = await createBrainstorm(context(ctx), ctx.body);
        return json(201, view);
      },
    }),
    route({
      ...read,
      method: 'GET',
      path: BOARD,
      operationId: 'getBrainstorm',
      summary: 'A brainstorm with every idea on it',
      params: BrainstormParams,
      errors: ['NOT_FOUND'],
      etag: (ctx) => brainstormEtag(context(ctx), ctx.params.brainstormId),
      responses: { 200: { description: 'The brainstorm', schema: BrainstormSchema } },
      handler: (ctx) => board(ctx, 200, getBrainstorm(context(ctx), ctx.params.brainstormId)),
    }),
    route({
      ...write,
      method: 'PATCH',
      path: BOARD,
      operationId: 'renameBrainstorm',
      summary: 'Rename a brainstorm',
      params: BrainstormParams,
      body: PatchBrainstormBody,
      errors: ['NOT_FOUND'],
      responses: summary('The brainstorm summary'),
      handler: async (ctx) =>
        json(200, await renameBrainstorm(context(ctx), ctx.params.brainstormId, ctx.body.name)),
    }),
    route({
      ...write,
      method: 'DELETE',
      path: BOARD,
      operationId: 'archiveBrainstorm',
      summary: 'Archive a brainstorm (it can be restored); one with no ideas is deleted outright',
      params: BrainstormParams,
      errors: ['NOT_FOUND'],
      responses: { 204: { description: 'Archived, or deleted when it had no ideas' } },
      handler: async (ctx) => (
        await archiveBrainstorm(context(ctx), ctx.params.brainstormId),
        noContent()
      ),
    }),
    route({
      ...write,
      method: 'POST',
      path: `${BOARD}/restore`,
      operationId: 'restoreBrainstorm',
      summary: 'Bring an archived brainstorm back',
      params: BrainstormParams,
      errors: ['NOT_FOUND', 'NOT_ARCHIVED'],
      responses: summary('The brainstorm summary'),
      handler: async (ctx) =>
        json(200, await restoreBrainstorm(context(ctx), ctx.params.brainstormId)),
    }),
    route({
      ...write,
      method: 'POST',
      path: `${BOARD}/publish`,
      operationId: 'publishBrainstorm',
      summary:
        'Publish the brainstorm at a fresh unguessable link (boxes, tree position and tags only); an earlier link stops working',
      params: BrainstormParams,
      errors: ['NOT_FOUND'],
      responses: summary('The brainstorm summary with publicUrl'),
      handler: async (ctx) =>
        json(200, await publishBrainstorm(context(ctx), ctx.params.brainstormId)),
    }),
    route({
      ...write,
      method: 'POST',
      path: `${BOARD}/unpublish`,
      operationId: 'unpublishBrainstorm',
      summary: 'Take the brainstorm off the public web at once',
      params: BrainstormParams,
      errors: ['NOT_FOUND'],
      responses: summary('The brainstorm summary, public false'),
      handler: async (ctx) =>
        json(200, await unpublishBrainstorm(context(ctx), ctx.params.brainstormId)),
    }),
    route({
      ...read,
      method: 'GET',
      path: `${BOARD}/shares`,
      operationId: 'listBrainstormShares',
      summary: 'Guests with access to this brainstorm, oldest first',
      params: BrainstormParams,
      query: BrainstormPageQuery,
      errors: ['NOT_FOUND'],
      responses: {
        200: { description: 'A page of shares', schema: listOf(BrainstormShareSchema) },
      },
      handler: async (ctx) =>
        json(200, await listBrainstormShares(context(ctx), ctx.params.brainstormId, ctx.query)),
    }),
    route({
      ...write,
      method: 'POST',
      path: `${BOARD}/shares`,
      operationId: 'shareBrainstorm',
      summary:
        'Give one existing account access to this brainstorm as a guest (no email is sent; never a seat); sharing again changes the role. ' +
        "Addresses without an account (404) spend a budget of 20 an hour for the workspace's keys and clients together, and 20 for each person; once spent, every share by address is 429 RATE_LIMITED with Retry-After",
      params: BrainstormParams,
      body: CreateBrainstormShareBody,
      errors: ['INVALID_EMAIL', 'NOT_FOUND', 'RATE_LIMITED'],
      responses: {
        201: {
          description: 'The share (the same id when the account already had one)',
          schema: BrainstormShareSchema,
        },
      },
      handler: async (ctx) =>
        json(201, await shareBrainstorm(context(ctx), ctx.params.brainstormId, ctx.body)),
    }),
    route({
      ...write,
      method: 'PATCH',
      path: `${BOARD}/shares/{shareId}`,
      operationId: 'updateBrainstormShare',
      summary:
        'Change what the guest may do (viewer reads; commenter also comments on ideas), from their next request on',
      params: BrainstormShareParams,
      body: PatchShareBody,
      errors: ['NOT_FOUND'],
      responses: {
        200: { description: 'The share with its new role', schema: BrainstormShareSchema },
      },
      handler: async (ctx) =>
        json(
          200,
          await changeBrainstormShareRole(
            context(ctx),
            ctx.params.brainstormId,
            ctx.params.shareId,
            ctx.body.role,
          ),
        ),
    }),
    route({
      ...write,
      method: 'DELETE',
      path: `${BOARD}/shares/{shareId}`,
      operationId: 'revokeBrainstormShare',
      summary: "End a guest's access at once",
      params: BrainstormShareParams,
      errors: ['NOT_FOUND'],
      responses: { 204: { description: 'Revoked' } },
      handler: async (ctx) => (
        await revokeBrainstormShare(context(ctx), ctx.params.brainstormId, ctx.params.shareId),
        noContent()
      ),
    }),
    route({
      ...write,
      method: 'POST',
      path: `${BOARD}/ideas`,
      operationId: 'addIdea',
      summary: 'Add an idea (under `parentId`, or as a root)',
      params: BrainstormParams,
      body: CreateIdeaBody,
      errors: ['NOT_FOUND'],
      responses: { 201: { description: 'The idea', schema: IdeaSchema } },
      handler: async (ctx) =>
        json(201, await addIdea(context(ctx), ctx.params.brainstormId, ctx.body)),
    }),
    route({
      ...write,
      method: 'PATCH',
      path: IDEA,
      operationId: 'updateIdea',
      summary: 'Change an idea; `parentId` re-parents it (never into its own subtree)',
      params: IdeaParams,
      body: PatchIdeaBody,
      errors: ['NOT_FOUND', 'CIRCULAR_DEPENDENCY'],
      responses: { 200: { description: 'The idea', schema: IdeaSchema } },
      handler: async (ctx) =>
        json(
          200,
          await editIdea(context(ctx), ctx.params.brainstormId, ctx.params.ideaId, ctx.body),
        ),
    }),
    route({
      ...write,
      method: 'DELETE',
      path: IDEA,
      operationId: 'deleteIdea',
      summary:
        'Delete an idea with its comments and files; its children move to its parent. Irreversible',
      params: IdeaParams,
      errors: ['NOT_FOUND'],
      responses: { 204: { description: 'Deleted' } },
      handler: async (ctx) => (
        await removeIdea(context(ctx), ctx.params.brainstormId, ctx.params.ideaId),
        noContent()
      ),
    }),
    route({
      ...read,
      method: 'GET',
      path: `${IDEA}/comments`,
      operationId: 'listIdeaComments',
      summary: 'Comments on an idea, oldest first',
      params: IdeaParams,
      query: BrainstormPageQuery,
      errors: ['NOT_FOUND'],
      responses: { 200: { description: 'Comments', schema: listOf(IdeaCommentSchema) } },
      handler: async (ctx) =>
        json(
          200,
          await listIdeaComments(
            context(ctx),
            ctx.params.brainstormId,
            ctx.params.ideaId,
            ctx.query,
          ),
        ),
    }),
    route({
      ...write,
      method: 'POST',
      path: `${IDEA}/comments`,
      operationId: 'addIdeaComment',
      summary: 'Comment on an idea (guests with the commenter role too)',
      params: IdeaParams,
      body: IdeaCommentBody,
      errors: ['NOT_FOUND'],
      responses: { 201: { description: 'The comment', schema: IdeaCommentSchema } },
      handler: async (ctx) =>
        json(
          201,
          await addIdeaComment(
            context(ctx),
            ctx.params.brainstormId,
            ctx.params.ideaId,
            ctx.body.body,
          ),
        ),
    }),
    route({
      ...read,
      method: 'GET',
      path: `${IDEA}/attachments`,
      operationId: 'listIdeaAttachments',
      summary: 'Files attached to an idea, oldest first',
      params: IdeaParams,
      query: BrainstormPageQuery,
      errors: ['NOT_FOUND'],
      responses: { 200: { description: 'Files', schema: listOf(AttachmentSchema) } },
      handler: async (ctx) =>
        json(
          200,
          await listIdeaFiles(context(ctx), ctx.params.brainstormId, ctx.params.ideaId, ctx.query),
        ),
    }),
    route({
      ...write,
      method: 'POST',
      path: `${IDEA}/attachments`,
      operationId: 'uploadIdeaAttachment',
      summary:
        "Attach a file to an idea (raw bytes with Content-Type); counted in the idea's fileCount",
      params: IdeaParams,
      query: IdeaFileQuery,
      bodyKind: 'upload',
      maxBodyBytes: config.maxUploadBytes,
      beforeBody: quotaBeforeBody(services.files),
      errors: ['NOT_FOUND', 'PAYLOAD_TOO_LARGE'],
      responses: { 201: { description: 'The file', schema: AttachmentSchema } },
      handler: async (ctx) =>
        json(
          201,
          await addIdeaFile(
            context(ctx),
            services.files,
            ctx.params.brainstormId,
            ctx.params.ideaId,
            {
              name: ctx.query.name,
              mimeType: uploadType(ctx.headers),
              blob: ctx.upload,
            },
          ),
        ),
    }),
    route({
      ...read,
      method: 'GET',
      path: `${IDEA}/attachments/{fileId}/content`,
      operationId: 'getIdeaAttachmentContent',
      summary: "The bytes of an idea's file",
      params: IdeaFileParams,
      errors: ['NOT_FOUND'],
      responses: {
        200: {
          description: 'The file',
          contentType: '*/*',
          schema: { type: 'string', contentMediaType: 'application/octet-stream' },
        },
      },
      handler: async (ctx) => {
        return fileReply(
          await ideaFile(
            context(ctx),
            ctx.params.brainstormId,
            ctx.params.ideaId,
            ctx.params.fileId,
          ),
          ctx.params.fileId,
        );
      },
    }),
  ];
}

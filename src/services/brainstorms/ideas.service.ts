/**
 * Ideas on a board: add, edit, re-parent (never into its own subtree), delete (children
 * move up to its parent; irreversible), and what hangs off an idea: comments and files.
 * Each write holds the board's row lock and bumps its version, the ETag of the board.
 */
import {
  circularDependency,
  DomainError,
  notFound,
  validationFailed,
} from '../../platform/errors.ts';
import type { Static } from '@sinclair/typebox';
import {
  MAX_IDEAS,
  type CreateIdeaBody,
  type IdeaCommentSchema,
  type PatchIdeaBody,
} from '../../contract/brainstorm.schema.ts';
import type { AttachmentSchema } from '../../contract/task.schema.ts';
import { newId } from '../../platform/ids.ts';
import { actorId } from '../flows/actor.ts';
import { checkAssignees } from '../flows/flows.service.ts';
import {
  deleteIdea,
  findIdea,
  ideaFileContent,
  ideaParents,
  insertIdeaComment,
  insertIdeaFile,
  insertIdeas,
  pageIdeaComments,
  pageIdeaFiles,
  touchBrainstorm,
  updateIdea,
  type IdeaCommentRow,
  type IdeaFileRow,
} from '../../storage/brainstorms.store.ts';
import type { Files } from '../files/files.service.ts';
import type { StagedBlob } from '../../storage/blobs.store.ts';
import type { Db } from '../../storage/db.ts';
import { personName } from '../../storage/members.store.ts';
import {
  ideaView,
  requireBoard,
  type Access,
  type BrainstormContext,
} from './brainstorms.service.ts';
import type { PageRequest } from '../../platform/paging.ts';

async function requireIdea(
  ctx: BrainstormContext,
  db: Db,
  brainstormId: string,
  ideaId: string,
  access: Access,
  lock = false,
) {
  const board = await requireBoard(ctx, db, brainstormId, access, lock);
  const idea = await findIdea(db, board.workspaceId, brainstormId, ideaId);
  if (!idea) throw notFound('Idea');
  // The board's workspace: a guest's principal names their own.
  return { ...idea, workspaceId: board.workspaceId };
}

async function checkAssignee(
  ctx: BrainstormContext,
  brainstormId: string,
  assigneeId: string | null | undefined,
): Promise<void> {
  if (!assigneeId) return;
  // The board first: another workspace's board is 404 whatever the body names.
  await requireBoard(ctx, ctx.sql, brainstormId, 'write');
  await checkAssignees(ctx.sql, ctx.principal.workspaceId, [
    { pointer: '/assigneeId', id: assigneeId },
  ]);
}

const unknownParent = () =>
  validationFailed([
    { in: 'body', pointer: '/parentId', message: 'names no idea of this brainstorm' },
  ]);

export async function addIdea(
  ctx: BrainstormContext,
  brainstormId: string,
  input: Static<typeof CreateIdeaBody>,
) {
  await checkAssignee(ctx, brainstormId, input.assigneeId);
  return ctx.sql.begin(async (tx) => {
    const board = await requireBoard(ctx, tx, brainstormId, 'write', true);
    if (board.ideaCount >= MAX_IDEAS) {
      throw new DomainError('VALIDATION_FAILED', `A brainstorm holds at most ${MAX_IDEAS} ideas`, {
        limit: MAX_IDEAS,
        errors: [
          { in: 'body', pointer: '', message: `the brainstorm already holds ${MAX_IDEAS} ideas` },
        ],
      });
    }
    if (input.parentId && !(await findIdea(tx, board.workspaceId, brainstormId, input.parentId)))
      throw unknownParent();
    const id = newId('ide');
    await insertIdeas(tx, board.workspaceId, brainstormId, [
      {
        id,
        parentId: input.parentId ?? null,
        title: input.title,
        notes: input.notes ?? null,
        tags: input.tags ?? [],
        assigneeId: input.assigneeId ?? null,
      },
    ]);
    await touchBrainstorm(tx, board.workspaceId, brainstormId, { visible: true });
    return ideaView((await findIdea(tx, board.workspaceId, brainstormId, id))!);
  });
}

/** Changes the idea; a new `parentId` inside its own subtree is refused with CIRCULAR_DEPENDENCY. */
export async function editIdea(
  ctx: BrainstormContext,
  brainstormId: string,
  ideaId: string,
  input: Static<typeof PatchIdeaBody>,
) {
  await checkAssignee(ctx, brainstormId, input.assigneeId);
  return ctx.sql.begin(async (tx) => {
    const { workspaceId } = await requireIdea(ctx, tx, brainstormId, ideaId, 'write', true);
    if (input.parentId) {
      const parents = await ideaParents(tx, workspaceId, brainstormId);
      if (!parents.has(input.parentId)) throw unknownParent();
      // Walking up from the new parent must never meet the idea itself.
      const path: string[] = [];
      for (let at: string | null | undefined = input.parentId; at; at = parents.get(at)?.parentId) {
        path.push(at);
        if (at === ideaId) {
          const members = path.map((id) => ({ id, name: parents.get(id)!.title }));
          throw circularDependency(
            input.parentId === ideaId
              ? 'An idea cannot be its own parent'
              : 'The new parent lies under this idea: that would make a cycle',
            members,
            'each is, or would become, the parent of the one before it',
            'ideas',
            { parentId: input.parentId },
          );
        }
      }
    }
    await updateIdea(tx, workspaceId, ideaId, input);
    await touchBrainstorm(tx, workspaceId, brainstormId, {
      visible:
        input.title !== undefined || input.tags !== undefined || input.parentId !== undefined,
    });
    return ideaView((await findIdea(tx, workspaceId, brainstormId, ideaId))!);
  });
}

export async function removeIdea(
  ctx: BrainstormContext,
  brainstormId: string,
  ideaId: string,
): Promise<void> {
  await ctx.sql.begin(async (tx) => {
    const idea = await requireIdea(ctx, tx, brainstormId, ideaId, 'write', true);
    await deleteIdea(tx, idea.workspaceId, brainstormId, ideaId, idea.parentId);
    await touchBrainstorm(tx, idea.workspaceId, brainstormId, { visible: true });
  });
}

const commentView = (row: IdeaCommentRow): Static<typeof IdeaCommentSchema> => ({
  id: row.id,
  ideaId: row.ideaId,
  authorId: row.authorId,
  authorName: row.authorName,
  body: row.body,
  createdAt: row.createdAt.toISOString(),
});

/** Guests with the commenter role may comment too. */
export async function addIdeaComment(
  ctx: BrainstormContext,
  brainstormId: string,
  ideaId: string,
  body: string,
) {
  const authorName = ctx.principal.userId
    ? await personName(ctx.sql, ctx.principal.userId)
    : ctx.principal.credentialName;
  return ctx.sql.begin(async (tx) => {
    const { workspaceId } = await requireIdea(ctx, tx, brainstormId, ideaId, 'comment', true);
    const row = await insertIdeaComment(tx, {
      id: newId('cmt'),
      workspaceId,
      ideaId,
      brainstormId,
      authorId: actorId(ctx.principal),
      authorName,
      body,
    });
    await touchBrainstorm(tx, workspaceId, brainstormId);
    return commentView(row);
  });
}

export async function listIdeaComments(
  ctx: BrainstormContext,
  brainstormId: string,
  ideaId: string,
  page: PageRequest,
) {
  const { workspaceId } = await requireIdea(ctx, ctx.sql, brainstormId, ideaId, 'read');
  const { total, items } = await pageIdeaComments(ctx.sql, workspaceId, ideaId, page);
  return { total, items: items.map(commentView) };
}

const fileView = (row: IdeaFileRow): Static<typeof AttachmentSchema> => ({
  id: row.id,
  name: row.name,
  mimeType: row.mimeType,
  sizeBytes: row.sizeBytes,
  kind: 'reference' as const,
  uploadedAt: row.uploadedAt.toISOString(),
});

/** `file.blob`: the bytes, already written to storage as they arrived; the file row takes them over. */
export async function addIdeaFile(
  ctx: BrainstormContext,
  files: Files,
  brainstormId: string,
  ideaId: string,
  file: { name: string; mimeType: string; blob: StagedBlob },
) {
  return ctx.sql.begin(async (tx) => {
    const { workspaceId } = await requireIdea(ctx, tx, brainstormId, ideaId, 'write', true);
    await files.claimRoom(tx, ctx.principal.workspaceId, file.blob.sizeBytes);
    const row = await insertIdeaFile(tx, {
      id: newId('att'),
      workspaceId,
      ideaId,
      brainstormId,
      name: file.name,
      mimeType: file.mimeType,
      sizeBytes: file.blob.sizeBytes,
      blobId: file.blob.blobId,
      uploadedBy: actorId(ctx.principal),
    });
    await touchBrainstorm(tx, workspaceId, brainstormId);
    return fileView(row);
  });
}

export async function listIdeaFiles(
  ctx: BrainstormContext,
  brainstormId: string,
  ideaId: string,
  page: PageRequest,
) {
  const { workspaceId } = await requireIdea(ctx, ctx.sql, brainstormId, ideaId, 'read');
  const { total, items } = await pageIdeaFiles(ctx.sql, workspaceId, ideaId, page);
  return { total, items: items.map(fileView) };
}

export async function ideaFile(
  ctx: BrainstormContext,
  brainstormId: string,
  ideaId: string,
  fileId: string,
) {
  const { workspaceId } = await requireIdea(ctx, ctx.sql, brainstormId, ideaId, 'read');
  const file = await ideaFileContent(ctx.sql, workspaceId, ideaId, fileId);
  if (!file) throw notFound('File');
  return file;
}

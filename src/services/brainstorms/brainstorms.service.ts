/**
 * Brainstorm boards: create (with an idea tree), list, read, rename, archive (deleted
 * outright when empty), restore, publish and unpublish. Every command runs in one
 * transaction holding the board's row lock, so checks and writes see the same board.
 */
import { randomBytes } from 'node:crypto';
import type { Static } from '@sinclair/typebox';
import type {
  BrainstormSummarySchema,
  CreateBrainstormBody,
  IdeaSchema,
  ListBrainstormsQuery,
} from '../../contract/brainstorm.schema.ts';
import {
  circularDependency,
  commenterRoleRequired,
  DomainError,
  notArchived,
  notFound,
  validationFailed,
  type ValidationProblem,
} from '../../platform/errors.ts';
import type { Principal } from '../auth/principal.ts';
import { newId } from '../../platform/ids.ts';
import { sha256 } from '../auth/secrets.ts';
import { checkAssignees } from '../flows/flows.service.ts';
import type { Db, Sql } from '../../storage/db.ts';
import {
  brainstormVersion,
  deleteBrainstorm,
  findBrainstorm,
  insertBrainstorm,
  insertIdeas,
  listIdeas,
  pageBrainstorms,
  touchBrainstorm,
  type BrainstormRow,
  type IdeaRow,
  type Viewer,
} from '../../storage/brainstorms.store.ts';

export interface BrainstormContext {
  readonly sql: Sql;
  readonly principal: Principal;
  /** `{public_url}`: published boards live under `{public_url}/brainstorms/{token}`. */
  readonly publicUrl: string;
}

type NewIdeaInput = NonNullable<Static<typeof CreateBrainstormBody>['ideas']>[number];
type BrainstormSummaryView = Static<typeof BrainstormSummarySchema>;

/** What the caller must be allowed: guests read, commenters also comment; only the workspace writes. */
export type Access = 'read' | 'comment' | 'write';

export const viewerOf = (principal: Principal): Viewer => ({
  workspaceId: principal.workspaceId,
  userId: principal.userId,
});

export const summaryView = (ctx: BrainstormContext, row: BrainstormRow): BrainstormSummaryView => ({
  id: row.id,
  name: row.name,
  archived: row.archived,
  public: row.publicToken !== null,
  publicUrl: row.publicToken ? `${ctx.publicUrl}/brainstorms/${row.publicToken}` : null,
  ideaCount: row.ideaCount,
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
});

export const ideaView = (row: IdeaRow): Static<typeof IdeaSchema> => ({
  id: row.id,
  brainstormId: row.brainstormId,
  parentId: row.parentId,
  title: row.title,
  notes: row.notes,
  tags: row.tags,
  assigneeId: row.assigneeId,
  commentCount: row.commentCount,
  fileCount: row.fileCount,
  createdAt: row.createdAt.toISOString(),
});

/**
 * The board, or 404 when the caller may not see it (another workspace's, not shared with
 * them). A guest who may see it but not do this gets 403. `lock` holds the row for the transaction.
 */
export async function requireBoard(
  ctx: BrainstormContext,
  db: Db,
  id: string,
  access: Access,
  lock = false,
): Promise<BrainstormRow> {
  const row = await findBrainstorm(db, viewerOf(ctx.principal), id, lock);
  if (!row) throw notFound('Brainstorm');
  if (
    row.guestRole !== null &&
    (access === 'write' || (access === 'comment' && row.guestRole !== 'commenter'))
  ) {
    throw access === 'comment'
      ? commenterRoleRequired('brainstorm', row.guestRole)
      : new DomainError(
          'FORBIDDEN',
          'This brainstorm is shared with you: only its own workspace can change it',
        );
  }
  return row;
}

/** Refuses parents out of range, and cycles (with the indexes of one cycle). */
function checkParents(ideas: readonly NewIdeaInput[]): void {
  const problems: ValidationProblem[] = [];
  ideas.forEach((idea, i) => {
    if (idea.parent !== undefined && idea.parent >= ideas.length) {
      problems.push({
        in: 'body',
        pointer: `/ideas/${i}/parent`,
        message: `refers to idea ${idea.parent}, but there are ${ideas.length}`,
      });
    }
  });
  if (problems.length > 0) throw validationFailed(problems);
  // Each idea has one parent, so walking up from every idea finds any cycle; 2 marks ideas known to reach a root.
  const state = new Uint8Array(ideas.length);
  for (let start = 0; start < ideas.length; start++) {
    const path: number[] = [];
    let at: number | undefined = start;
    while (at !== undefined && state[at] === 0) {
      state[at] = 1;
      path.push(at);
      at = ideas[at]!.parent;
    }
    if (at !== undefined && state[at] === 1) {
      const cycle = path.slice(path.indexOf(at));
      const members = cycle.map((index) => ({ index, name: ideas[index]!.title }));
      throw circularDependency(
        "These ideas are each other's parents in a cycle",
        members,
        "each is the parent of the one before it; #n is the idea's index in `ideas`",
        'ideas',
        { cycle },
      );
    }
    for (const i of path) state[i] = 2;
  }
}

export async function createBrainstorm(
  ctx: BrainstormContext,
  input: Static<typeof CreateBrainstormBody>,
) {
  const ideas = input.ideas ?? [];
  checkParents(ideas);
  await checkAssignees(
    ctx.sql,
    ctx.principal.workspaceId,
    ideas.flatMap((idea, i) =>
      idea.assigneeId ? [{ pointer: `/ideas/${i}/assigneeId`, id: idea.assigneeId }] : [],
    ),
  );
  const id = newId('brn');
  const ids = ideas.map(() => newId('ide'));
  return ctx.sql.begin(async (tx) => {
    await insertBrainstorm(tx, { id, workspaceId: ctx.principal.workspaceId, name: input.name });
    await insertIdeas(
      tx,
      ctx.principal.workspaceId,
      id,
      ideas.map((idea, i) => ({
        id: ids[i]!,
        parentId: idea.parent === undefined ? null : ids[idea.parent]!,
        title: idea.title,
        notes: idea.notes ?? null,
        tags: idea.tags ?? [],
        assigneeId: idea.assigneeId ?? null,
      })),
    );
    return boardView(ctx, tx, id);
  });
}

/** The whole board; read in one snapshot so the ideas match the version that tags them. */
async function boardView(ctx: BrainstormContext, db: Db, id: string) {
  const row = await requireBoard(ctx, db, id, 'read');
  const ideas = await listIdeas(db, row.workspaceId, id);
  return { view: { ...summaryView(ctx, row), ideas: ideas.map(ideaView) }, version: row.version };
}

export const etagOf = (id: string, version: number) => `${id}.v${version}`;

/** The board's current tag, checked before any read; null (no 304) when the caller may not see it. */
export async function brainstormEtag(ctx: BrainstormContext, id: string): Promise<string | null> {
  const version = await brainstormVersion(ctx.sql, viewerOf(ctx.principal), id);
  return version === null ? null : etagOf(id, version);
}

export function getBrainstorm(ctx: BrainstormContext, id: string) {
  return ctx.sql.begin('isolation level repeatable read read only', (tx) => boardView(ctx, tx, id));
}

export async function listBrainstorms(
  ctx: BrainstormContext,
  query: Static<typeof ListBrainstormsQuery>,
) {
  const { total, items } = await pageBrainstorms(ctx.sql, viewerOf(ctx.principal), query);
  return { total, items: items.map((row) => summaryView(ctx, row)) };
}

/** Runs `change` on the locked board and answers its summary as committed. */
async function changeBoard(
  ctx: BrainstormContext,
  id: string,
  change: (row: BrainstormRow, tx: Db) => Promise<void>,
): Promise<BrainstormSummaryView> {
  return ctx.sql.begin(async (tx) => {
    await change(await requireBoard(ctx, tx, id, 'write', true), tx);
    return summaryView(ctx, (await findBrainstorm(tx, viewerOf(ctx.principal), id))!);
  });
}

export function renameBrainstorm(ctx: BrainstormContext, id: string, name: string) {
  return changeBoard(ctx, id, async (row, tx) => {
    if (row.name !== name) await touchBrainstorm(tx, row.workspaceId, id, { name });
  });
}

/** Archives the board; one with no ideas is deleted outright (spec §3). */
export async function archiveBrainstorm(ctx: BrainstormContext, id: string): Promise<void> {
  await ctx.sql.begin(async (tx) => {
    const row = await requireBoard(ctx, tx, id, 'write', true);
    if (row.ideaCount === 0) await deleteBrainstorm(tx, row.workspaceId, id);
    // The public link goes with it, so a restore never brings a leaked one back (docs/security.md).
    else if (!row.archived)
      await touchBrainstorm(tx, row.workspaceId, id, { archived: true, publicToken: null });
  });
}

export function restoreBrainstorm(ctx: BrainstormContext, id: string) {
  return changeBoard(ctx, id, async (row, tx) => {
    if (!row.archived) throw notArchived('brainstorm');
    await touchBrainstorm(tx, row.workspaceId, id, { archived: false });
  });
}

/** A fresh unguessable link (192 random bits) each time; the old one stops working at once. */
export function publishBrainstorm(ctx: BrainstormContext, id: string) {
  return changeBoard(ctx, id, async (row, tx) => {
    const token = randomBytes(24).toString('base64url');
    await touchBrainstorm(tx, row.workspaceId, id, { publicToken: { token, hash: sha256(token) } });
  });
}

export function unpublishBrainstorm(ctx: BrainstormContext, id: string) {
  return changeBoard(ctx, id, async (row, tx) => {
    if (row.publicToken !== null)
      await touchBrainstorm(tx, row.workspaceId, id, { publicToken: null });
  });
}

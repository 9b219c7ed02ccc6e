/**
 * Brainstorm shares: one existing account gets access to one board, as a guest who sees it
 * from their own workspace with a person token. No invitation email; never a member or a seat.
 */
import type { Static } from '@sinclair/typebox';
import type {
  BrainstormShareSchema,
  CreateBrainstormShareBody,
} from '../../contract/brainstorm.schema.ts';
import { notFound } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import { findAccount } from '../team/account-lookup.ts';
import { emailAddress } from '../team/email.ts';
import {
  deleteBrainstormShare,
  pageBrainstormShares,
  setBrainstormShareRole,
  upsertBrainstormShare,
  type BrainstormShareRow,
} from '../../storage/brainstorms.store.ts';
import type { ShareRole } from '../../contract/vocabulary.ts';
import { requireBoard, type BrainstormContext } from './brainstorms.service.ts';
import type { PageRequest } from '../../platform/paging.ts';

const shareView = (row: BrainstormShareRow): Static<typeof BrainstormShareSchema> => ({
  id: row.id,
  email: row.email,
  role: row.role,
  brainstormId: row.brainstormId,
  createdAt: row.createdAt.toISOString(),
});

/**
 * Shares the board; sharing with the same account again changes the role of that share. An
 * address with no account is 404 and spends the caller's look-up budget (findAccount), so the
 * board is checked first: a refusal for the board spends nothing.
 */
export async function shareBrainstorm(
  ctx: BrainstormContext,
  brainstormId: string,
  input: Static<typeof CreateBrainstormShareBody>,
) {
  const email = emailAddress(input.email);
  await requireBoard(ctx, ctx.sql, brainstormId, 'write');
  const user = await findAccount(ctx.sql, ctx.principal, email);
  if (!user) throw notFound('Account');
  return ctx.sql.begin(async (tx) => {
    await requireBoard(ctx, tx, brainstormId, 'write', true);
    const row = await upsertBrainstormShare(tx, {
      id: newId('shr'),
      workspaceId: ctx.principal.workspaceId,
      brainstormId,
      userId: user.id,
      role: input.role,
    });
    return shareView(row);
  });
}

export async function listBrainstormShares(
  ctx: BrainstormContext,
  brainstormId: string,
  page: PageRequest,
) {
  const board = await requireBoard(ctx, ctx.sql, brainstormId, 'write');
  const { total, items } = await pageBrainstormShares(
    ctx.sql,
    board.workspaceId,
    brainstormId,
    page,
  );
  return { total, items: items.map(shareView) };
}

/** Changes what the guest may do; their next request (read from Postgres, in any process) has the new role. */
export async function changeBrainstormShareRole(
  ctx: BrainstormContext,
  brainstormId: string,
  shareId: string,
  role: ShareRole,
) {
  return ctx.sql.begin(async (tx) => {
    const board = await requireBoard(ctx, tx, brainstormId, 'write', true);
    const row = await setBrainstormShareRole(tx, board.workspaceId, brainstormId, shareId, role);
    if (!row) throw notFound('Share');
    return shareView(row);
  });
}

/** Ends a guest's access at once (their next request, in any process, reads the share from Postgres). */
export async function revokeBrainstormShare(
  ctx: BrainstormContext,
  brainstormId: string,
  shareId: string,
): Promise<void> {
  await ctx.sql.begin(async (tx) => {
    const board = await requireBoard(ctx, tx, brainstormId, 'write', true);
    if (!(await deleteBrainstormShare(tx, board.workspaceId, brainstormId, shareId)))
      throw notFound('Share');
  });
}

/** Flow shares: one address gets access to one flow, as a guest. Never a member, never a seat. */
import type { Static } from '@sinclair/typebox';
import type { CreateShareBody, ShareSchema } from '../../contract/team.schema.ts';
import type { ShareRole } from '../../contract/vocabulary.ts';
import type { Principal } from '../auth/principal.ts';
import { notFound } from '../../platform/errors.ts';
import { newId } from '../../platform/ids.ts';
import type { Sql } from '../../storage/db.ts';
import type { SessionRegistry } from '../flows/registry.ts';
import {
  flowShareOf,
  sharedFlowsOf,
  type FlowShareRow,
  type SharedFlowRow,
} from '../../storage/people.store.ts';
import {
  deleteShare,
  pageShares,
  setShareRole,
  upsertShare,
  type Page,
  type PageRequest,
  type ShareRow,
} from '../../storage/team.store.ts';
import { emailAddress } from './email.ts';

export interface ShareContext {
  readonly sql: Sql;
  readonly registry: SessionRegistry;
  readonly principal: Principal;
}

type ShareView = Static<typeof ShareSchema>;

const shareView = (row: ShareRow): ShareView => ({
  id: row.id,
  email: row.email,
  role: row.role,
  flowId: row.flowId,
  createdAt: row.createdAt.toISOString(),
});

/** 404 NOT_FOUND unless the flow is the caller's workspace's. */
async function requireFlow(ctx: ShareContext, flowId: string): Promise<void> {
  await ctx.registry.snapshot(ctx.principal.workspaceId, flowId);
}

export async function listShares(
  ctx: ShareContext,
  flowId: string,
  page: PageRequest,
): Promise<Page<ShareView>> {
  await requireFlow(ctx, flowId);
  const { total, items } = await pageShares(ctx.sql, ctx.principal.workspaceId, flowId, page);
  return { total, items: items.map(shareView) };
}

/** Shares the flow; sharing with the same address again changes the role of that share. */
export async function shareFlow(
  ctx: ShareContext,
  flowId: string,
  input: Static<typeof CreateShareBody>,
): Promise<ShareView> {
  await requireFlow(ctx, flowId);
  const email = emailAddress(input.email);
  const row = await upsertShare(ctx.sql, {
    id: newId('shr'),
    workspaceId: ctx.principal.workspaceId,
    flowId,
    email,
    role: input.role,
  });
  return shareView(row);
}

/**
 * Changes what the guest may do. Guest access is read from the share on every request
 * (Authenticator.asGuest), so the next request in any process has the new role.
 */
export async function changeShareRole(
  ctx: ShareContext,
  flowId: string,
  shareId: string,
  role: ShareRole,
): Promise<ShareView> {
  await requireFlow(ctx, flowId);
  const row = await setShareRole(ctx.sql, ctx.principal.workspaceId, flowId, shareId, role);
  if (!row) throw notFound('Share');
  return shareView(row);
}

/**
 * Ends the guest's access at once: nothing caches a share (asGuest reads it on every
 * request), so the guest's next request in any process is 404.
 */
export async function revokeShare(
  ctx: ShareContext,
  flowId: string,
  shareId: string,
): Promise<void> {
  await requireFlow(ctx, flowId);
  if (!(await deleteShare(ctx.sql, ctx.principal.workspaceId, flowId, shareId)))
    throw notFound('Share');
}

/** The live flows of other workspaces shared with a person: what a guest can open. */
export function flowsSharedWith(sql: Sql, userId: string): Promise<SharedFlowRow[]> {
  return sharedFlowsOf(sql, userId);
}

/** The workspace a flow belongs to and the person's share of it (null: no such flow). */
export function flowAccessOf(
  sql: Sql,
  flowId: string,
  userId: string,
): Promise<FlowShareRow | null> {
  return flowShareOf(sql, flowId, userId);
}

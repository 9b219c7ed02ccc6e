/**
 * Invitations. People with a membership and pending invites occupy the workspace's seats;
 * guests (shares) never do. Every seat decision runs under a lock on the workspace row.
 */
import type { Static } from '@sinclair/typebox';
import type {
  CreateInviteBody,
  InviteSchema,
  ListInvitesQuery,
} from '../../contract/team.schema.ts';
import { DomainError, inviteClosed, notFound } from '../../platform/errors.ts';
import type { Role } from '../auth/principal.ts';
import { newId } from '../../platform/ids.ts';
import { newSecret, sha256 } from '../auth/secrets.ts';
import type { Sql } from '../../storage/db.ts';
import { announceAuthChange } from '../../storage/credentials.store.ts';
import { setInviteToken } from '../../storage/people.store.ts';
import {
  addMember,
  findPendingInvite,
  insertInvite,
  isMemberEmail,
  lockInvite,
  lockSeats,
  pageInvites,
  seatsUsed,
  setInviteRole,
  setInviteStatus,
  type InviteRow,
  type Page,
} from '../../storage/team.store.ts';
import { emailAddress } from './email.ts';
import type { TeamContext } from './members.service.ts';

type InviteView = Static<typeof InviteSchema>;

const inviteView = (row: InviteRow): InviteView => ({
  id: row.id,
  email: row.email,
  role: row.role,
  status: row.status,
  createdAt: row.createdAt.toISOString(),
});

export async function listInvites(
  ctx: TeamContext,
  filter: Static<typeof ListInvitesQuery>,
): Promise<Page<InviteView>> {
  const { total, items } = await pageInvites(ctx.sql, ctx.principal.workspaceId, filter);
  return { total, items: items.map(inviteView) };
}

/** How long an invitation link works. */
export const INVITE_LINK_DAYS = 7;

/** Delivers an invitation's single-use link (the app's invite email); never throws. */
export type InviteDelivery = (invite: {
  email: string;
  role: Role;
  workspaceId: string;
  token: string;
  expiresAt: Date;
}) => Promise<void>;

/**
 * A pending invite for the address. `created` is false when one was already pending: that
 * invite is answered (with the role now asked for) instead of a duplicate, and it takes no
 * further seat. Either way the invitee gets a fresh single-use link (the previous one stops
 * working), mailed after the commit.
 */
export async function createInvite(
  ctx: TeamContext,
  input: Static<typeof CreateInviteBody>,
  deliver?: InviteDelivery,
): Promise<{ invite: InviteView; created: boolean }> {
  const email = emailAddress(input.email);
  const workspaceId = ctx.principal.workspaceId;
  const token = newSecret('inv');
  const expiresAt = new Date(Date.now() + INVITE_LINK_DAYS * 86_400_000);
  const result = await ctx.sql.begin(async (tx) => {
    const limit = await lockSeats(tx, workspaceId);
    if (limit === null) throw notFound('Workspace');
    if (await isMemberEmail(tx, workspaceId, email)) {
      throw new DomainError(
        'ALREADY_MEMBER',
        'This address belongs to a member of the workspace already',
      );
    }
    const pending = await findPendingInvite(tx, workspaceId, email);
    if (pending) {
      const row =
        pending.role === input.role ? pending : await setInviteRole(tx, pending.id, input.role);
      await setInviteToken(tx, row.id, sha256(token), expiresAt);
      return { invite: inviteView(row), created: false };
    }
    const used = await seatsUsed(tx, workspaceId);
    if (used >= limit) {
      throw new DomainError(
        'PLAN_LIMIT_REACHED',
        `Every seat of this workspace is taken (${used} of ${limit}); revoke a pending invite or add seats`,
        {
          limit,
          used,
        },
      );
    }
    const row = await insertInvite(tx, {
      id: newId('inv'),
      workspaceId,
      email,
      role: input.role,
      invitedBy: ctx.principal.credentialId,
    });
    await setInviteToken(tx, row.id, sha256(token), expiresAt);
    return { invite: inviteView(row), created: true };
  });
  await deliver?.({ email, role: result.invite.role, workspaceId, token, expiresAt });
  return result;
}

/** Revokes a pending invite, freeing its seat; revoking a revoked one answers it unchanged. */
export async function revokeInvite(ctx: TeamContext, inviteId: string): Promise<InviteView> {
  return ctx.sql.begin(async (tx) => {
    const row = await lockInvite(tx, ctx.principal.workspaceId, inviteId);
    if (!row) throw notFound('Invite');
    if (row.status === 'accepted') {
      throw new DomainError(
        'FORBIDDEN',
        'This invite was accepted: the person is a member now; change their role on /v1/team/members instead',
        {
          status: 'accepted',
        },
      );
    }
    if (row.status === 'revoked') return inviteView(row);
    return inviteView(await setInviteStatus(tx, row.id, 'revoked'));
  });
}

/**
 * Sign-up through an invite's link (done by the app, not the API): the person becomes a
 * member with the invited role, and the invite's seat becomes their membership's.
 */
export async function acceptInvite(
  sql: Sql,
  input: { workspaceId: string; inviteId: string; userId: string },
): Promise<InviteView> {
  return sql.begin(async (tx) => {
    await lockSeats(tx, input.workspaceId);
    const row = await lockInvite(tx, input.workspaceId, input.inviteId);
    if (!row) throw notFound('Invite');
    if (row.status !== 'pending') throw inviteClosed(row.status);
    await addMember(tx, input.workspaceId, input.userId, row.role);
    await announceAuthChange(tx);
    return inviteView(await setInviteStatus(tx, row.id, 'accepted'));
  });
}

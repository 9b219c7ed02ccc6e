/** Workspace members: the people with a membership (guests are shares, never members). */
import type { Static } from '@sinclair/typebox';
import type { MemberSchema } from '../../contract/team.schema.ts';
import { DomainError, notFound } from '../../platform/errors.ts';
import type { Authenticator } from '../auth/authenticate.ts';
import type { Principal, Role } from '../auth/principal.ts';
import type { Db, Sql } from '../../storage/db.ts';
import { announceAuthChange } from '../../storage/credentials.store.ts';
import { listOrgsOfUser, type OrgRow } from '../../storage/workspaces.store.ts';
import {
  lockMember,
  pageMembers,
  setMemberHours,
  setMemberRole,
  type MemberRow,
  type Page,
  type PageRequest,
} from '../../storage/team.store.ts';

export interface TeamContext {
  readonly sql: Sql;
  readonly auth: Authenticator;
  readonly principal: Principal;
}

type MemberView = Static<typeof MemberSchema>;

const memberView = (row: MemberRow): MemberView => ({
  id: row.id,
  name: row.name,
  email: row.email,
  role: row.role,
  hoursPerDay: row.hoursPerDay,
});

export async function listMembers(ctx: TeamContext, page: PageRequest): Promise<Page<MemberView>> {
  const { total, items } = await pageMembers(ctx.sql, ctx.principal.workspaceId, page);
  return { total, items: items.map(memberView) };
}

/**
 * Changes a member's role, working hours a day, or both, in one transaction: a refused role
 * change (the owner's) changes neither. Person tokens resolve their role from the membership,
 * so on a role change the cached principals are dropped: here at once, in other processes
 * through NOTIFY on commit. Hours are read by every levelled schedule, so nothing is cached.
 */
export async function updateMember(
  ctx: TeamContext,
  memberId: string,
  change: { role?: Role; hoursPerDay?: number },
): Promise<MemberView> {
  const { role, hoursPerDay } = change;
  const member = await ctx.sql.begin(async (tx) => {
    const row = await lockMember(tx, ctx.principal.workspaceId, memberId);
    if (!row) throw notFound('Member');
    if (role !== undefined && row.role === 'owner') {
      throw new DomainError(
        'FORBIDDEN',
        "The workspace owner's role cannot be changed through the API; ownership is transferred in the app",
        {
          memberId,
          role: 'owner',
        },
      );
    }
    const next = { ...row, role: role ?? row.role, hoursPerDay: hoursPerDay ?? row.hoursPerDay };
    if (next.hoursPerDay !== row.hoursPerDay)
      await setMemberHours(tx, ctx.principal.workspaceId, memberId, next.hoursPerDay);
    if (next.role !== row.role) {
      await setMemberRole(tx, ctx.principal.workspaceId, memberId, next.role);
      await announceAuthChange(tx);
    }
    return next;
  });
  if (role !== undefined) ctx.auth.invalidate();
  return memberView(member);
}

/** The workspaces a person belongs to, oldest first, with their role in each (`orgs` of /v1/me; the app's picker). */
export function workspacesOf(db: Db, userId: string): Promise<OrgRow[]> {
  return listOrgsOfUser(db, userId);
}

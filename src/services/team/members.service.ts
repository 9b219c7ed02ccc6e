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
});

export async function listMembers(ctx: TeamContext, page: PageRequest): Promise<Page<MemberView>> {
  const { total, items } = await pageMembers(ctx.sql, ctx.principal.workspaceId, page);
  return { total, items: items.map(memberView) };
}

/**
 * Changes a member's role. Person tokens resolve their role from the membership, so the
 * cached principals are dropped: here at once, in other processes through NOTIFY on commit.
 */
export async function changeMemberRole(
  ctx: TeamContext,
  memberId: string,
  role: Role,
): Promise<MemberView> {
  const member = await ctx.sql.begin(async (tx) => {
    const row = await lockMember(tx, ctx.principal.workspaceId, memberId);
    if (!row) throw notFound('Member');
    if (row.role === 'owner') {
      throw new DomainError(
        'FORBIDDEN',
        "The workspace owner's role cannot be changed through the API; ownership is transferred in the app",
        {
          memberId,
          role: 'owner',
        },
      );
    }
    if (row.role === role) return row;
    await setMemberRole(tx, ctx.principal.workspaceId, memberId, role);
    await announceAuthChange(tx);
    return { ...row, role };
  });
  ctx.auth.invalidate();
  return memberView(member);
}

/** The workspaces a person belongs to, oldest first, with their role in each (`orgs` of /v1/me; the app's picker). */
export function workspacesOf(db: Db, userId: string): Promise<OrgRow[]> {
  return listOrgsOfUser(db, userId);
}

/** Members, invitations, seats and flow shares. */
import type { Db } from './db.ts';
import type { InviteStatus, MemberRole, Role, ShareRole } from '../contract/vocabulary.ts';
import type { Page, PageRequest } from '../platform/paging.ts';
import { pageOf } from './paging.ts';

export interface MemberRow {
  id: string;
  name: string;
  email: string;
  role: MemberRole;
  /** Working hours a day (quarter hours, 0–24): what levelling turns a task's hours into days by. */
  hoursPerDay: number;
}

// numeric(4, 2) arrives as a string: quarter hours are exact as a float8.
const memberColumns = (sql: Db) =>
  sql`u.id, u.name, u.email, m.role, m.hours_per_day::float8 as hours_per_day`;

export interface InviteRow {
  id: string;
  email: string;
  role: Role;
  status: InviteStatus;
  createdAt: Date;
}

export interface ShareRow {
  id: string;
  email: string;
  role: ShareRole;
  flowId: string;
  createdAt: Date;
}

export type { Page, PageRequest };

// ── members ──────────────────────────────────────────────────────────────────────────

/** People with a membership in the workspace, in the order they joined. */
export async function pageMembers(
  sql: Db,
  workspaceId: string,
  page: PageRequest,
): Promise<Page<MemberRow>> {
  return pageOf<MemberRow>(
    sql,
    {
      columns: memberColumns(sql),
      source: sql`from memberships m join users u on u.id = m.user_id where m.workspace_id = ${workspaceId}`,
      order: sql`m.created_at, m.user_id`,
    },
    page,
  );
}

/** The membership, locked until the transaction ends; null when the person is not a member there. */
export async function lockMember(
  sql: Db,
  workspaceId: string,
  userId: string,
): Promise<MemberRow | null> {
  const [row] = await sql<MemberRow[]>`
    select ${memberColumns(sql)}
    from memberships m join users u on u.id = m.user_id
    where m.workspace_id = ${workspaceId} and m.user_id = ${userId}
    for update of m`;
  return row ?? null;
}

export async function setMemberRole(
  sql: Db,
  workspaceId: string,
  userId: string,
  role: MemberRole,
): Promise<void> {
  await sql`update memberships set role = ${role} where workspace_id = ${workspaceId} and user_id = ${userId}`;
}

/** The member's working hours a day (levelling). */
export async function setMemberHours(
  sql: Db,
  workspaceId: string,
  userId: string,
  hoursPerDay: number,
): Promise<void> {
  await sql`update memberships set hours_per_day = ${hoursPerDay} where workspace_id = ${workspaceId} and user_id = ${userId}`;
}

/** Makes the person a member with this role; one who already is keeps the role they have. */
export async function addMember(
  sql: Db,
  workspaceId: string,
  userId: string,
  role: MemberRole,
): Promise<void> {
  await sql`insert into memberships (workspace_id, user_id, role) values (${workspaceId}, ${userId}, ${role})
    on conflict (workspace_id, user_id) do nothing`;
}

export async function isMemberEmail(sql: Db, workspaceId: string, email: string): Promise<boolean> {
  const [row] = await sql`select 1 from memberships m join users u on u.id = m.user_id
    where m.workspace_id = ${workspaceId} and lower(u.email) = lower(${email})`;
  return row !== undefined;
}

// ── seats ────────────────────────────────────────────────────────────────────────────

/**
 * The workspace's seat limit, with its row locked until the transaction ends: every
 * change to who occupies a seat serializes here, so two requests cannot both take the last one.
 */
export async function lockSeats(sql: Db, workspaceId: string): Promise<number | null> {
  const [row] = await sql<
    { seats: number }[]
  >`select seats from workspaces where id = ${workspaceId} for update`;
  return row?.seats ?? null;
}

/** Members plus pending invites (a pending invite to someone already a member is not counted twice). Guests never count. */
export async function seatsUsed(sql: Db, workspaceId: string): Promise<number> {
  const [row] = await sql<{ used: number }[]>`select
      (select count(*) from memberships where workspace_id = ${workspaceId})::int
    + (select count(*) from invites i
        where i.workspace_id = ${workspaceId} and i.status = 'pending'
          and not exists (select 1 from memberships m join users u on u.id = m.user_id
                          where m.workspace_id = ${workspaceId} and lower(u.email) = lower(i.email)))::int as used`;
  return row!.used;
}

// ── invites ──────────────────────────────────────────────────────────────────────────

export async function pageInvites(
  sql: Db,
  workspaceId: string,
  filter: PageRequest & { status?: InviteStatus | undefined },
): Promise<Page<InviteRow>> {
  const status = filter.status ? sql`and status = ${filter.status}` : sql``;
  return pageOf<InviteRow>(
    sql,
    {
      columns: sql`id, email, role, status, created_at`,
      source: sql`from invites where workspace_id = ${workspaceId} ${status}`,
      order: sql`created_at desc, id desc`,
    },
    filter,
  );
}

export async function findPendingInvite(
  sql: Db,
  workspaceId: string,
  email: string,
): Promise<InviteRow | null> {
  const [row] = await sql<InviteRow[]>`select id, email, role, status, created_at from invites
    where workspace_id = ${workspaceId} and lower(email) = lower(${email}) and status = 'pending'`;
  return row ?? null;
}

export async function insertInvite(
  sql: Db,
  row: { id: string; workspaceId: string; email: string; role: Role; invitedBy: string | null },
): Promise<InviteRow> {
  const [created] = await sql<
    InviteRow[]
  >`insert into invites (id, workspace_id, email, role, invited_by)
    values (${row.id}, ${row.workspaceId}, ${row.email}, ${row.role}, ${row.invitedBy})
    returning id, email, role, status, created_at`;
  return created!;
}

/** The invite, locked until the transaction ends; null when it is not this workspace's. */
export async function lockInvite(
  sql: Db,
  workspaceId: string,
  id: string,
): Promise<(InviteRow & { workspaceId: string }) | null> {
  const [row] = await sql<
    (InviteRow & { workspaceId: string })[]
  >`select id, workspace_id, email, role, status, created_at from invites
    where id = ${id} and workspace_id = ${workspaceId} for update`;
  return row ?? null;
}

export async function setInviteRole(sql: Db, id: string, role: Role): Promise<InviteRow> {
  const [row] = await sql<InviteRow[]>`update invites set role = ${role} where id = ${id}
    returning id, email, role, status, created_at`;
  return row!;
}

export async function setInviteStatus(
  sql: Db,
  id: string,
  status: Exclude<InviteStatus, 'pending'>,
): Promise<InviteRow> {
  const [row] = await sql<InviteRow[]>`update invites set status = ${status},
      accepted_at = case when ${status} = 'accepted' then now() else accepted_at end,
      revoked_at = case when ${status} = 'revoked' then now() else revoked_at end
    where id = ${id}
    returning id, email, role, status, created_at`;
  return row!;
}

// ── shares ───────────────────────────────────────────────────────────────────────────

export async function pageShares(
  sql: Db,
  workspaceId: string,
  flowId: string,
  page: PageRequest,
): Promise<Page<ShareRow>> {
  return pageOf<ShareRow>(
    sql,
    {
      columns: sql`id, email, role, flow_id, created_at`,
      source: sql`from shares where flow_id = ${flowId} and workspace_id = ${workspaceId}`,
      order: sql`created_at, id`,
    },
    page,
  );
}

/** Shares the flow with the address, or changes the role of its existing share (same id). */
export async function upsertShare(
  sql: Db,
  row: { id: string; workspaceId: string; flowId: string; email: string; role: ShareRole },
): Promise<ShareRow> {
  const [share] = await sql<ShareRow[]>`insert into shares (id, workspace_id, flow_id, email, role)
    values (${row.id}, ${row.workspaceId}, ${row.flowId}, ${row.email}, ${row.role})
    on conflict (flow_id, lower(email), workspace_id) do update set role = excluded.role, updated_at = now()
    returning id, email, role, flow_id, created_at`;
  return share!;
}

/** Changes the role of the flow's share; null when the flow has no share with this id. */
export async function setShareRole(
  sql: Db,
  workspaceId: string,
  flowId: string,
  id: string,
  role: ShareRole,
): Promise<ShareRow | null> {
  const [share] = await sql<ShareRow[]>`update shares set role = ${role}, updated_at = now()
    where id = ${id} and flow_id = ${flowId} and workspace_id = ${workspaceId}
    returning id, email, role, flow_id, created_at`;
  return share ?? null;
}

/** Removes the flow's share; false when the flow has no share with this id. */
export async function deleteShare(
  sql: Db,
  workspaceId: string,
  flowId: string,
  id: string,
): Promise<boolean> {
  const rows = await sql`delete from shares
    where id = ${id} and flow_id = ${flowId} and workspace_id = ${workspaceId} returning id`;
  return rows.length > 0;
}

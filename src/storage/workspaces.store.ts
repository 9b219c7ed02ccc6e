/** Workspaces, people and their memberships. */
import type { Db } from './db.ts';
import type { MemberRole, Plan } from '../contract/vocabulary.ts';

export interface WorkspaceRow {
  id: string;
  name: string;
  plan: Plan;
  pastDue: boolean;
  seats: number;
  createdAt: Date;
}

export const DEFAULT_SEATS: Record<Plan, number> = { free: 2, pro: 25 };

export async function insertWorkspace(
  sql: Db,
  row: { id: string; name: string; plan: Plan; seats: number },
): Promise<void> {
  await sql`insert into workspaces (id, name, plan, seats) values (${row.id}, ${row.name}, ${row.plan}, ${row.seats})`;
}

export async function updateWorkspace(
  sql: Db,
  id: string,
  changes: { plan?: Plan; pastDue?: boolean; seats?: number },
): Promise<WorkspaceRow | null> {
  const [row] = await sql<WorkspaceRow[]>`update workspaces set
      plan = coalesce(${changes.plan ?? null}, plan),
      past_due = coalesce(${changes.pastDue ?? null}, past_due),
      seats = coalesce(${changes.seats ?? null}, seats)
    where id = ${id}
    returning id, name, plan, past_due, seats, created_at`;
  return row ?? null;
}

/** Whether the database has any workspace yet (a first start's question). */
export async function anyWorkspace(sql: Db): Promise<boolean> {
  const [row] = await sql`select 1 from workspaces limit 1`;
  return Boolean(row);
}

export async function findWorkspace(sql: Db, id: string): Promise<WorkspaceRow | null> {
  const [row] = await sql<
    WorkspaceRow[]
  >`select id, name, plan, past_due, seats, created_at from workspaces where id = ${id}`;
  return row ?? null;
}

export interface UserRow {
  id: string;
  email: string;
  name: string;
  passwordHash: string;
}

export async function findUserByEmail(sql: Db, email: string): Promise<UserRow | null> {
  const [row] = await sql<
    UserRow[]
  >`select id, email, name, password_hash from users where lower(email) = lower(${email})`;
  return row ?? null;
}

export async function insertUser(sql: Db, row: UserRow): Promise<void> {
  await sql`insert into users (id, email, name, password_hash) values (${row.id}, ${row.email}, ${row.name}, ${row.passwordHash})`;
}

/** Adds the person to the workspace, or changes their role there. */
export async function upsertMembership(
  sql: Db,
  workspaceId: string,
  userId: string,
  role: MemberRole,
): Promise<void> {
  await sql`insert into memberships (workspace_id, user_id, role) values (${workspaceId}, ${userId}, ${role})
    on conflict (workspace_id, user_id) do update set role = excluded.role`;
}

export interface OrgRow {
  id: string;
  name: string;
  role: MemberRole;
  plan: Plan;
  pastDue: boolean;
}

export async function listOrgsOfUser(sql: Db, userId: string): Promise<OrgRow[]> {
  return sql<
    OrgRow[]
  >`select w.id, w.name, m.role, w.plan, w.past_due from memberships m join workspaces w on w.id = m.workspace_id
    where m.user_id = ${userId} order by w.created_at, w.id`;
}

// ── the operator's lists (flowplan workspace list, user list) ─────────────────────────

export interface WorkspaceListRow extends WorkspaceRow {
  members: number;
}

export async function listWorkspaces(sql: Db): Promise<WorkspaceListRow[]> {
  return sql<WorkspaceListRow[]>`select w.id, w.name, w.plan, w.past_due, w.seats, w.created_at,
      (select count(*)::int from memberships m where m.workspace_id = w.id) as members
    from workspaces w order by w.created_at, w.id`;
}

export interface PersonListRow {
  id: string;
  email: string;
  name: string;
  createdAt: Date;
  /** Their memberships, oldest first (only the one asked for when listing one workspace). */
  workspaces: { id: string; role: MemberRole }[];
}

/** Every account, or the members of one workspace; never the password hash. */
export async function listPeople(sql: Db, workspaceId?: string): Promise<PersonListRow[]> {
  return sql<PersonListRow[]>`select u.id, u.email, u.name, u.created_at,
      coalesce(json_agg(json_build_object('id', m.workspace_id, 'role', m.role) order by m.created_at, m.workspace_id)
        filter (where m.user_id is not null), '[]') as workspaces
    from users u left join memberships m on m.user_id = u.id ${workspaceId ? sql`and m.workspace_id = ${workspaceId}` : sql``}
    ${workspaceId ? sql`where exists (select 1 from memberships x where x.user_id = u.id and x.workspace_id = ${workspaceId})` : sql``}
    group by u.id order by u.created_at, u.id`;
}

/** False when there is no such account. */
export async function setPasswordHash(
  sql: Db,
  userId: string,
  passwordHash: string,
): Promise<boolean> {
  const rows =
    await sql`update users set password_hash = ${passwordHash} where id = ${userId} returning id`;
  return rows.length > 0;
}

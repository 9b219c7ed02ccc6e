/** Workspace membership look-ups: check assignees, name authors, address mail, level schedules. */
import type { Db } from './db.ts';

/** The subset of `ids` that are members (people) of the workspace. */
export async function existingMembers(
  sql: Db,
  workspaceId: string,
  ids: readonly string[],
): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await sql<{ userId: string }[]>`select user_id from memberships
    where workspace_id = ${workspaceId} and user_id in ${sql([...new Set(ids)])}`;
  return new Set(rows.map((r) => r.userId));
}

export async function personName(sql: Db, userId: string): Promise<string | null> {
  const [row] = await sql<{ name: string }[]>`select name from users where id = ${userId}`;
  return row?.name ?? null;
}

/** Names of the given people, for reports. */
export async function memberNames(sql: Db, ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map();
  const rows = await sql<
    { id: string; name: string }[]
  >`select id, name from users where id in ${sql([...new Set(ids)])}`;
  return new Map(rows.map((r) => [r.id, r.name]));
}

/**
 * Working hours a day of those of `ids` who are members of the workspace (levelling); read
 * on every levelled schedule, so a change shows on the next one.
 */
export async function memberHours(
  sql: Db,
  workspaceId: string,
  ids: readonly string[],
): Promise<Map<string, number>> {
  if (ids.length === 0) return new Map();
  const rows = await sql<{ userId: string; hoursPerDay: number }[]>`
    select user_id, hours_per_day::float8 as hours_per_day from memberships
    where workspace_id = ${workspaceId} and user_id in ${sql([...new Set(ids)])}`;
  return new Map(rows.map((r) => [r.userId, r.hoursPerDay]));
}

/** A member's address and name, for mail (null: not a member of the workspace). */
export async function memberEmail(
  sql: Db,
  workspaceId: string,
  memberId: string,
): Promise<{ email: string; name: string } | null> {
  const [row] = await sql<
    { email: string; name: string }[]
  >`select u.email, u.name from memberships m join users u on u.id = m.user_id
    where m.workspace_id = ${workspaceId} and m.user_id = ${memberId}`;
  return row ?? null;
}

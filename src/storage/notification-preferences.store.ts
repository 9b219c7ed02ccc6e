/**
 * A member's notification preferences: their settings (email on or off, which kinds, the
 * digest's hour and time zone) and the flows they muted, with the look-ups those answers need.
 */
import type { Db, Tx } from './db.ts';

export interface SettingsRow {
  email: boolean;
  assigned: boolean;
  unlocked: boolean;
  digest: boolean;
  timezone: string;
  digestHour: number;
}

export const DEFAULT_SETTINGS: SettingsRow = {
  email: true,
  assigned: true,
  unlocked: true,
  digest: true,
  timezone: 'UTC',
  digestHour: 8,
};

export async function loadSettings(
  sql: Db,
  workspaceId: string,
  memberId: string,
): Promise<SettingsRow> {
  const [row] = await sql<
    SettingsRow[]
  >`select email, assigned, unlocked, digest, timezone, digest_hour from notification_settings
    where workspace_id = ${workspaceId} and member_id = ${memberId}`;
  return row ?? DEFAULT_SETTINGS;
}

export async function saveSettings(
  sql: Db,
  workspaceId: string,
  memberId: string,
  s: SettingsRow,
): Promise<void> {
  await sql`insert into notification_settings (workspace_id, member_id, email, assigned, unlocked, digest, timezone, digest_hour)
    values (${workspaceId}, ${memberId}, ${s.email}, ${s.assigned}, ${s.unlocked}, ${s.digest}, ${s.timezone}, ${s.digestHour})
    on conflict (workspace_id, member_id) do update set email = excluded.email, assigned = excluded.assigned,
      unlocked = excluded.unlocked, digest = excluded.digest, timezone = excluded.timezone,
      digest_hour = excluded.digest_hour, updated_at = now()`;
}

/** Locks the member's settings row (created with defaults if missing) so read-modify-write is safe. */
export async function lockSettings(
  tx: Tx,
  workspaceId: string,
  memberId: string,
): Promise<SettingsRow> {
  await tx`insert into notification_settings (workspace_id, member_id) values (${workspaceId}, ${memberId}) on conflict do nothing`;
  const [row] = await tx<
    SettingsRow[]
  >`select email, assigned, unlocked, digest, timezone, digest_hour from notification_settings
    where workspace_id = ${workspaceId} and member_id = ${memberId} for update`;
  return row!;
}

export async function flowMuted(
  sql: Db,
  workspaceId: string,
  memberId: string,
  flowId: string,
): Promise<boolean | null> {
  const [row] = await sql<{ muted: boolean }[]>`select muted from notification_flow_settings
    where workspace_id = ${workspaceId} and member_id = ${memberId} and flow_id = ${flowId}`;
  return row?.muted ?? null;
}

export async function mutedFlows(
  sql: Db,
  workspaceId: string,
  memberId: string,
): Promise<Set<string>> {
  const rows = await sql<{ flowId: string }[]>`select flow_id from notification_flow_settings
    where workspace_id = ${workspaceId} and member_id = ${memberId} and muted`;
  return new Set(rows.map((r) => r.flowId));
}

/** The live flows of a workspace a member may mute, by name (at most `limit`). */
export function liveFlowNames(
  sql: Db,
  workspaceId: string,
  limit: number,
): Promise<{ id: string; name: string }[]> {
  return sql<
    { id: string; name: string }[]
  >`select id, name from flows where workspace_id = ${workspaceId} and not archived order by lower(name), id limit ${limit}`;
}

export async function setFlowMuted(
  sql: Db,
  workspaceId: string,
  memberId: string,
  flowId: string,
  muted: boolean,
): Promise<void> {
  await sql`insert into notification_flow_settings (workspace_id, member_id, flow_id, muted) values (${workspaceId}, ${memberId}, ${flowId}, ${muted})
    on conflict (workspace_id, member_id, flow_id) do update set muted = excluded.muted, updated_at = now()`;
}

/** Whether the flow is one of the workspace's: a member sets preferences on those only. */
export async function flowInWorkspace(
  sql: Db,
  workspaceId: string,
  flowId: string,
): Promise<boolean> {
  const [row] =
    await sql`select 1 from flows where id = ${flowId} and workspace_id = ${workspaceId}`;
  return row !== undefined;
}

/** Whether Postgres's tz database knows the zone (the digest schedule converts with it). */
export async function postgresKnowsZone(sql: Db, zone: string): Promise<boolean> {
  try {
    await sql`select now() at time zone ${zone}`;
    return true;
  } catch {
    return false;
  }
}

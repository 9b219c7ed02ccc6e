/** The daily digest: whose is due now, by each member's own clock, and what goes in it. */
import type { Db } from './db.ts';

export interface DigestCandidate {
  workspaceId: string;
  memberId: string;
  digestHour: number;
  /** The member's wall clock at the tick, and its date. */
  localNow: string;
  localDate: string;
}

/** A digest goes out within this many hours after the digest hour (a restart catches up; a day-long outage skips a day). */
export const DIGEST_CATCH_UP_HOURS = 3;

/**
 * Members whose local time at `at` is past their digest hour today (by less than the
 * catch-up window), who were members before that hour began (someone who joins later gets
 * their first digest the next day), and who have no digest row for that local day yet.
 * Postgres converts with its tz database, so DST is exact.
 */
export async function digestCandidates(sql: Db, at: Date): Promise<DigestCandidate[]> {
  return sql<DigestCandidate[]>`with members as (
      select m.workspace_id, m.user_id as member_id, m.created_at as joined_at,
        coalesce(s.timezone, 'UTC') as timezone, coalesce(s.digest_hour, 8) as digest_hour
      from memberships m left join notification_settings s on s.workspace_id = m.workspace_id and s.member_id = m.user_id
      where coalesce(s.digest, true) and coalesce(s.email, true)
    ), local as (
      select workspace_id, member_id, joined_at, timezone, digest_hour, (${at}::timestamptz at time zone timezone) as local_now from members
    ), due as (
      select *, local_now::date + make_interval(hours => digest_hour) as local_hour_start from local
    )
    select l.workspace_id, l.member_id, l.digest_hour, to_char(l.local_now, 'YYYY-MM-DD"T"HH24:MI:SS') as local_now,
      l.local_now::date::text as local_date
    from due l
    where l.local_now >= l.local_hour_start
      and l.local_now < l.local_hour_start + make_interval(hours => ${DIGEST_CATCH_UP_HOURS})
      and l.joined_at < (l.local_hour_start at time zone l.timezone)
      and not exists (select 1 from notification_deliveries d where d.workspace_id = l.workspace_id and d.member_id = l.member_id
        and d.kind = 'digest' and d.attempt = 1 and d.digest_date = l.local_now::date)`;
}

export interface VisibleFlow {
  workspaceId: string;
  flowId: string;
}

/** Live flows of the workspace, and live flows shared with the person's address from other workspaces. */
export async function visibleFlows(
  sql: Db,
  workspaceId: string,
  memberId: string,
): Promise<VisibleFlow[]> {
  return sql<
    VisibleFlow[]
  >`select workspace_id, id as flow_id from flows where workspace_id = ${workspaceId} and not archived
    union
    select f.workspace_id, f.id from shares s join users u on lower(u.email) = lower(s.email) join flows f on f.id = s.flow_id
    where u.id = ${memberId} and not f.archived and f.workspace_id <> ${workspaceId}
    order by 1, 2`;
}

export async function completedSince(
  sql: Db,
  flowIds: readonly string[],
  since: Date,
): Promise<{ id: string; flowId: string; completedAt: Date }[]> {
  if (flowIds.length === 0) return [];
  return sql`select id, flow_id, completed_at from tasks where flow_id in ${sql([...flowIds])} and parent_id is null
    and progress = 2 and completed_at >= ${since} order by completed_at desc, id`;
}

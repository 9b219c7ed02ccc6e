/** The levelled schedule with its assignees' hours a day, read from the memberships per request. */
import { createHash } from 'node:crypto';
import type { Db } from '../../storage/db.ts';
import { memberHours } from '../../storage/members.store.ts';
import { buildLevelledSchedule, levelledAssignees, type LevelledScheduleView } from './levelled.ts';
import { scheduleStart } from './schedule.ts';
import type { Snapshot } from './snapshot.ts';

/**
 * Hours are read on every request rather than cached with the session: a PATCH of a member's
 * hoursPerDay changes no flow version, and must show in the next levelled schedule.
 */
function assigneeHours(db: Db, snapshot: Snapshot): Promise<Map<string, number>> {
  return memberHours(db, snapshot.flow.workspaceId, levelledAssignees(snapshot));
}

/** The version, the start and the hours it was levelled with: what the answer depends on. */
function tagOf(snapshot: Snapshot, start: string, hours: ReadonlyMap<string, number>): string {
  const said = [...hours].sort(([a], [b]) => (a < b ? -1 : 1)).join(';');
  const digest = createHash('sha256').update(said).digest('base64url').slice(0, 16);
  return `${snapshot.flow.id}.v${snapshot.version}.${start}.level.${digest}`;
}

/** The ETag of the levelled schedule, without levelling (a 304 stays cheap). */
export async function levelledTag(
  db: Db,
  snapshot: Snapshot,
  startDate: string | undefined,
): Promise<string> {
  return tagOf(snapshot, scheduleStart(startDate), await assigneeHours(db, snapshot));
}

export async function levelledSchedule(
  db: Db,
  snapshot: Snapshot,
  startDate: string | undefined,
): Promise<{ schedule: LevelledScheduleView; tag: string }> {
  const start = scheduleStart(startDate);
  const hours = await assigneeHours(db, snapshot);
  return {
    schedule: buildLevelledSchedule(snapshot, start, hours, startDate !== undefined),
    tag: tagOf(snapshot, start, hours),
  };
}

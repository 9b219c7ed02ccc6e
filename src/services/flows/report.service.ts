/** The delivery report of a flow with its assignees' names (the arithmetic is pure: report.ts). */
import type { Db } from '../../storage/db.ts';
import { memberNames } from '../../storage/members.store.ts';
import { buildReport, type ReportView } from './report.ts';
import type { Snapshot } from './snapshot.ts';

export async function flowReport(db: Db, snapshot: Snapshot): Promise<ReportView> {
  const assignees = snapshot.state.tasks.flatMap((t) => (t.assigneeId ? [t.assigneeId] : []));
  return buildReport(snapshot, await memberNames(db, assignees));
}

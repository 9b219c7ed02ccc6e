/**
 * Issue 54, item 1: resources matched to members, by email (any case), else by a name exactly
 * one member has; a resource no member is leaves its tasks unassigned, with one warning for it.
 */
import t from 'tap';
import { matchAssignees } from '../../../src/services/plans/assignees.ts';
import type { ImportedTask, PlanResource } from '../../../src/services/plans/plan.ts';

const task = (uid: number, resource: PlanResource | null): ImportedTask => ({
  uid,
  name: `Task ${uid}`,
  estimateHours: null,
  milestone: false,
  constraint: null,
  progress: 'open',
  remainingHours: null,
  startedAt: null,
  completedAt: null,
  links: [],
  resource,
});

const members = [
  { id: 'usr_ann', name: 'Ann Lee', email: 'Ann@Example.com' },
  { id: 'usr_bo', name: 'Bo', email: 'bo@example.com' },
  { id: 'usr_sam1', name: 'Sam', email: 'sam1@example.com' },
  { id: 'usr_sam2', name: 'sam', email: 'sam2@example.com' },
];

t.test(
  'by email, then by a name one member has; the rest unassigned with one warning each',
  async (t) => {
    const { assigneeIds, warnings } = matchAssignees(
      [
        task(1, { uid: 1, name: 'Someone else', email: ' ann@example.COM ' }),
        task(2, { uid: 2, name: 'bo', email: null }),
        task(3, { uid: 3, name: 'Sam', email: null }),
        task(4, null),
        task(5, { uid: 3, name: 'Sam', email: null }),
        task(6, { uid: null, name: null, email: 'cy@example.com' }),
        task(7, { uid: 7, name: 'Bo', email: 'unknown@example.com' }),
      ],
      members,
    );
    t.strictSame(assigneeIds, ['usr_ann', 'usr_bo', null, null, null, null, 'usr_bo']);
    t.strictSame(warnings, [
      {
        code: 'RESOURCE_NOT_MATCHED',
        message: 'No member of the workspace is "Sam": their tasks are imported unassigned',
        uid: 3,
      },
      {
        code: 'RESOURCE_NOT_MATCHED',
        message:
          'No member of the workspace is "cy@example.com": their tasks are imported unassigned',
      },
    ]);
    t.strictSame(matchAssignees([], members), { assigneeIds: [], warnings: [] });
  },
);

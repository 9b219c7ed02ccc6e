/**
 * The members a plan's resources are: by email (any case), else by name when exactly one member
 * has it. A resource no member matches leaves its tasks unassigned, with one RESOURCE_NOT_MATCHED
 * warning for it (however many tasks it has).
 */
import type { ImportedTask, ImportWarning } from './plan.ts';

export interface Member {
  readonly id: string;
  readonly name: string;
  readonly email: string;
}

const key = (text: string) => text.trim().toLowerCase();

/** Each task's assignee (a member's id, or null), by index, and the warnings. */
export function matchAssignees(
  tasks: readonly ImportedTask[],
  members: readonly Member[],
): { assigneeIds: (string | null)[]; warnings: ImportWarning[] } {
  const byEmail = new Map(members.map((m) => [key(m.email), m.id]));
  const byName = new Map<string, string | null>();
  for (const m of members) byName.set(key(m.name), byName.has(key(m.name)) ? null : m.id);
  const warnings: ImportWarning[] = [];
  const unmatched = new Set<string>();
  const assigneeIds = tasks.map(({ resource }) => {
    if (resource === null) return null;
    const id =
      (resource.email === null ? undefined : byEmail.get(key(resource.email))) ??
      (resource.name === null ? undefined : byName.get(key(resource.name))) ??
      null;
    const label = resource.email ?? resource.name ?? '';
    if (id === null && !unmatched.has(label)) {
      unmatched.add(label);
      const message = `No member of the workspace is "${label}": their tasks are imported unassigned`;
      warnings.push(
        resource.uid === null
          ? { code: 'RESOURCE_NOT_MATCHED', message }
          : { code: 'RESOURCE_NOT_MATCHED', message, uid: resource.uid },
      );
    }
    return id;
  });
  return { assigneeIds, warnings };
}

/**
 * The closed lists of words the API speaks and the bounds of its dates, as plain constants (no
 * TypeBox), so the engine and storage take them from here as the schemas do: one list each.
 * Storage's check constraints (sql/) hold the same scopes, roles and plans.
 */

/** A task's derived status (the engine's status codes are indexes into this list). */
export const TASK_STATUSES = ['blocked', 'ready', 'in_progress', 'done'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

export const SCOPES = [
  'flows:read',
  'flows:write',
  'work:write',
  'team:read',
  'team:write',
  'templates:read',
  'notifications:read',
  'notifications:write',
] as const;
export type Scope = (typeof SCOPES)[number];

/** A credential's roles, least first: each may do what those before it may. */
export const ROLES = ['viewer', 'member', 'admin'] as const;
export type Role = (typeof ROLES)[number];

/** A member's roles, most first: `owner` acts as `admin` on the API. */
export const MEMBER_ROLES = ['owner', 'admin', 'member', 'viewer'] as const;
export type MemberRole = (typeof MEMBER_ROLES)[number];

export const INVITE_STATUSES = ['pending', 'accepted', 'revoked'] as const;
export type InviteStatus = (typeof INVITE_STATUSES)[number];

/** A guest's role on a shared flow or brainstorm: `commenter` also comments. */
export const SHARE_ROLES = ['viewer', 'commenter'] as const;
export type ShareRole = (typeof SHARE_ROLES)[number];

export const PLANS = ['free', 'pro'] as const;
export type Plan = (typeof PLANS)[number];

/** What search finds: the schema's enum and storage's queries both follow this list. */
export const SEARCH_TYPES = ['flow', 'task', 'template'] as const;
export type SearchType = (typeof SEARCH_TYPES)[number];

/**
 * The days a date may name: inputs outside are refused, and a schedule day past the last
 * reads as the last (a YYYY-MM-DD has four year digits; 9999-12-31 is a Friday, so a start
 * within the range stays within it).
 */
export const FIRST_DAY = '1970-01-01';
export const LAST_DAY = '9999-12-31';

/**
 * What a stored scope, role and plan may be: the check constraints of the credential, member
 * and workspace tables, as types. The auth service gives them their meaning (principal.ts).
 */
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

export const ROLES = ['viewer', 'member', 'admin'] as const;
export type Role = (typeof ROLES)[number];
export type MemberRole = Role | 'owner';

export type Plan = 'free' | 'pro';

/** Who is calling: the principal a bearer credential resolves to, with its role and scopes. */

import {
  ROLES,
  SCOPES,
  type MemberRole,
  type Plan,
  type Role,
  type Scope,
} from '../../contract/vocabulary.ts';

// The vocabulary is the contract's (the tables' check constraints hold the same lists); the
// auth code gives it its meaning here, and callers in services take it from here.
export {
  SCOPES,
  ROLES,
  type Scope,
  type Role,
  type MemberRole,
  type Plan,
} from '../../contract/vocabulary.ts';

export interface Principal {
  workspaceId: string;
  workspaceName: string;
  plan: Plan;
  pastDue: boolean;
  /** The key or client; for person tokens, the first-party client that issued them. */
  credentialId: string;
  credentialName: string | null;
  kind: 'key' | 'client' | 'person';
  /** What this call may do: a person token's is the lesser of the person's and the client's role. */
  role: Role;
  /** The key's or client's own role: the most any token it issued can do, whoever signed in. */
  credentialRole: Role;
  scopes: Scope[];
  /** Set for person tokens: the person acting. */
  userId: string | null;
  /** The access token row, when the bearer is an `fpa_` token. */
  tokenId: string | null;
  /** Epoch ms after which the bearer stops working; null for API keys. */
  expiresAt: number | null;
}

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/** A person's `owner` role acts as `admin` on the API. */
export function apiRole(role: MemberRole): Role {
  return role === 'owner' ? 'admin' : role;
}

/** The lower of two roles: a person token acts with the lesser of the person's and its client's. */
export function lesserRole(a: Role, b: Role): Role {
  return ROLES.indexOf(a) <= ROLES.indexOf(b) ? a : b;
}

export function roleAtLeast(role: Role, least: Role): boolean {
  return ROLES.indexOf(role) >= ROLES.indexOf(least);
}

/** Parses a space-separated scope list (or `all`); null when any name is unknown. */
export function parseScopes(text: string): Scope[] | null {
  if (text.trim() === 'all') return [...SCOPES];
  const names = text.split(/[\s,]+/).filter(Boolean);
  if (!names.every(isScope)) return null;
  return [...new Set(names)].sort((a, b) => SCOPES.indexOf(a) - SCOPES.indexOf(b));
}

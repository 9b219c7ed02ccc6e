/**
 * Bearer credential → principal. Lookups are cached (the edge must not hit Postgres on
 * every poll); the cache is dropped at once on revocation or plan change, in this process
 * directly and in every other one through LISTEN/NOTIFY.
 */
import { LRUCache } from 'lru-cache';
import { commenterRoleRequired, credentialRevoked, DomainError } from '../../platform/errors.ts';
import type { Sql } from '../../storage/db.ts';
import { listenDurably } from '../../storage/listen.ts';
import {
  AUTH_CHANNEL,
  findKeyPrincipal,
  findTokenPrincipal,
  personTokenState,
  type PrincipalRow,
} from '../../storage/credentials.store.ts';
import { flowShareOf } from '../../storage/people.store.ts';
import { apiRole, lesserRole, type Principal, type Scope } from './principal.ts';
import { sha256 } from './secrets.ts';

type Resolution = { principal: Principal } | { refusal: 'UNAUTHORIZED' | 'CREDENTIAL_REVOKED' };

const CHALLENGE = { challenge: 'Bearer' } as const;

export function unauthorized(message = 'A valid bearer credential is required'): DomainError {
  return new DomainError('UNAUTHORIZED', message, undefined, CHALLENGE);
}

/** `Bearer <token>`, scheme case-insensitive (RFC 6750); null for anything else. */
export function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const match = /^Bearer +([A-Za-z0-9._~+/-]+=*) *$/i.exec(header);
  return match ? match[1]! : null;
}

export class Authenticator {
  private readonly cache = new LRUCache<string, Resolution>({ max: 50_000, ttl: 5 * 60_000 });
  private unlisten: (() => Promise<void>) | null = null;

  constructor(private readonly sql: Sql) {}

  async listen(): Promise<void> {
    this.unlisten = await listenDurably(
      this.sql,
      AUTH_CHANNEL,
      () => this.invalidate(),
      () => this.invalidate(),
    );
  }

  async close(): Promise<void> {
    await this.unlisten?.();
  }

  invalidate(): void {
    this.cache.clear();
  }

  async authenticate(header: string | undefined): Promise<Principal> {
    const token = bearerToken(header);
    if (!token) throw unauthorized(header ? 'Authorization must be "Bearer <token>"' : undefined);
    const hash = sha256(token);
    let resolution = this.cache.get(hash);
    if (!resolution) {
      resolution = await this.resolve(token, hash);
      this.cache.set(hash, resolution);
    }
    if ('refusal' in resolution) {
      throw resolution.refusal === 'CREDENTIAL_REVOKED'
        ? credentialRevoked()
        : unauthorized('Unknown or expired credential');
    }
    const { principal } = resolution;
    if (principal.expiresAt !== null && principal.expiresAt <= Date.now()) {
      throw unauthorized('Unknown or expired credential');
    }
    return principal.kind === 'person' ? this.livePerson(principal) : principal;
  }

  /**
   * A person reaching a flow of another workspace through a share (a guest): on the routes a
   * guest may use, the principal becomes one of the flow's workspace, bounded by the share —
   * a viewer reads, a commenter also comments, and the token's own scopes still narrow it.
   * Without a share nothing changes, so the flow stays 404 like any other workspace's.
   */
  async asGuest(
    principal: Principal,
    flowId: string,
    need: 'read' | 'comment',
  ): Promise<Principal> {
    if (!principal.userId || flowId.length > 64) return principal;
    const share = await flowShareOf(this.sql, flowId, principal.userId);
    if (!share || share.workspaceId === principal.workspaceId || !share.role) return principal;
    if (need === 'comment' && share.role !== 'commenter') {
      throw commenterRoleRequired('flow', share.role);
    }
    const allowed: Scope[] =
      share.role === 'commenter' ? ['flows:read', 'work:write'] : ['flows:read'];
    return {
      ...principal,
      workspaceId: share.workspaceId,
      workspaceName: share.workspaceName,
      plan: share.plan,
      pastDue: share.pastDue,
      // A commenter's comment is a write: `member` lets it through on the one route that allows guests to write,
      // unless the client the person signed in through may not write at all.
      role: lesserRole(
        share.role === 'commenter' && need === 'comment' ? 'member' : 'viewer',
        principal.credentialRole,
      ),
      scopes: principal.scopes.filter((scope) => allowed.includes(scope)),
    };
  }

  /**
   * A person token is re-checked on every request (one primary-key lookup): the NOTIFY that
   * drops other processes' caches can trail a commit, and a person removed from a workspace,
   * or whose sign-in was revoked, must be refused on the very next request everywhere.
   */
  private async livePerson(principal: Principal): Promise<Principal> {
    const state = await personTokenState(this.sql, principal.tokenId!);
    if (!state || state.revoked || !state.memberRole) {
      throw credentialRevoked();
    }
    const role = lesserRole(apiRole(state.memberRole), principal.credentialRole);
    return role === principal.role ? principal : { ...principal, role };
  }

  private async resolve(token: string, hash: string): Promise<Resolution> {
    let row: PrincipalRow | null = null;
    if (token.startsWith('fpk_')) row = await findKeyPrincipal(this.sql, hash);
    else if (token.startsWith('fpa_')) row = await findTokenPrincipal(this.sql, hash);
    if (!row) return { refusal: 'UNAUTHORIZED' };
    if (row.credentialRevokedAt || row.tokenRevokedAt) return { refusal: 'CREDENTIAL_REVOKED' };
    // A person who left the workspace keeps no access through old tokens.
    if (row.userId && !row.memberRole) return { refusal: 'CREDENTIAL_REVOKED' };
    const principal: Principal = {
      workspaceId: row.workspaceId,
      workspaceName: row.workspaceName,
      plan: row.plan,
      pastDue: row.pastDue,
      credentialId: row.credentialId,
      credentialName: row.credentialName,
      kind: row.userId ? 'person' : row.credentialKind,
      // A person acts as themselves, but never beyond what the client they signed in through may do.
      role:
        row.userId && row.memberRole
          ? lesserRole(apiRole(row.memberRole), row.credentialRole)
          : row.credentialRole,
      credentialRole: row.credentialRole,
      scopes: row.scopes,
      userId: row.userId,
      tokenId: row.tokenId,
      expiresAt: row.expiresAt ? row.expiresAt.getTime() : null,
    };
    return { principal };
  }
}

/**
 * Who a signed-in person is on a flow's pages: the same principal a person token of theirs
 * would be (their role in the flow's workspace, or a guest bounded by their share), checked
 * by the same rules the API's head applies (plan, scopes, viewers, roles, past due). The app
 * is first-party, so the session carries every scope; the person's role still bounds it.
 */
import { DomainError, notFound } from '../../platform/errors.ts';
import { apiRole, SCOPES, type Principal } from '../../services/auth/principal.ts';
import type { FlowContext } from '../../services/flows/flows.service.ts';
import type { OrgRow } from '../../services/account/signin.service.ts';
import { flowAccessOf } from '../../services/team/shares.service.ts';
import { authorize } from '../http/edge.ts';
import type { AppDeps } from './render.ts';

/** What a page or form needs: read a flow, move its work, or comment (which a guest commenter may). */
export type Need = 'read' | 'work' | 'comment';

const RULES: Record<Need, Parameters<typeof authorize>[0]> = {
  read: { method: 'GET', scopes: ['flows:read'] },
  work: { method: 'POST', scopes: ['work:write'], minRole: 'member' },
  comment: { method: 'POST', scopes: ['work:write'], minRole: 'member' },
};

/** A person acting through the app in one of their workspaces. */
export function memberPrincipal(org: OrgRow, userId: string): Principal {
  return {
    workspaceId: org.id,
    workspaceName: org.name,
    plan: org.plan,
    pastDue: org.pastDue,
    credentialId: 'app',
    credentialName: 'flowplan app',
    kind: 'person',
    role: apiRole(org.role),
    credentialRole: 'admin',
    scopes: [...SCOPES],
    userId,
    tokenId: null,
    expiresAt: null,
  };
}

/** The plan gate in the app's words; the rest of the head's rules in the API's. */
export function permit(principal: Principal, need: Need): void {
  if (principal.plan === 'free')
    throw new DomainError(
      'PLAN_REQUIRED',
      `Flows need the pro plan: ask an owner of ${principal.workspaceName} to upgrade`,
      { plan: principal.plan },
    );
  authorize(RULES[need], principal);
}

/**
 * The context a person acts on a flow with: as a member of its workspace when they are one,
 * else as its guest when it is shared with them; anything else is 404, as on the API.
 */
export async function flowActor(
  deps: AppDeps,
  person: { userId: string; orgs: readonly OrgRow[] },
  flowId: string,
  need: Need,
): Promise<FlowContext & { guest: boolean }> {
  const access = flowId.length > 64 ? null : await flowAccessOf(deps.sql, flowId, person.userId);
  if (!access) throw notFound('Flow');
  const org = person.orgs.find((o) => o.id === access.workspaceId);
  let principal: Principal;
  if (org) principal = memberPrincipal(org, person.userId);
  else {
    if (!access.role) throw notFound('Flow');
    // Based on no workspace of theirs: asGuest makes it the flow's, bounded by the share.
    const base = memberPrincipal(
      { id: '', name: '', role: 'viewer', plan: access.plan, pastDue: false },
      person.userId,
    );
    principal = await deps.auth.asGuest(base, flowId, need === 'comment' ? 'comment' : 'read');
  }
  permit(principal, need);
  return { sql: deps.sql, registry: deps.registry, principal, guest: !org };
}

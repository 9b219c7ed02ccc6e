/** Team routes (spec §4, CONTRACT §3): members, their roles, and invitations with seats. */
import { json, route, type Route } from '../http/route.ts';
import type { Principal } from '../../services/auth/principal.ts';
import {
  listMembers,
  updateMember,
  type TeamContext,
} from '../../services/team/members.service.ts';
import { createInvite, listInvites, revokeInvite } from '../../services/team/invites.service.ts';
import { inviteDelivery } from '../../services/team/invite-mail.ts';
import { listOf } from '../../contract/common.schema.ts';
import {
  CreateInviteBody,
  InviteParams,
  InviteSchema,
  ListInvitesQuery,
  ListMembersQuery,
  MemberParams,
  MemberSchema,
  PatchMemberBody,
} from '../../contract/team.schema.ts';
import type { Services } from '../deps.ts';

export function teamRoutes(services: Services): Route[] {
  const { sql, auth } = services;
  const deliverInvite = inviteDelivery(services);
  const context = (ctx: { principal: Principal }): TeamContext => ({
    sql,
    auth,
    principal: ctx.principal,
  });
  const read = { auth: 'bearer', scopes: ['team:read'], tags: ['Team'] } as const;
  const write = {
    auth: 'bearer',
    scopes: ['team:write'],
    minRole: 'admin',
    tags: ['Team'],
  } as const;

  return [
    route({
      ...read,
      method: 'GET',
      path: '/v1/team/members',
      operationId: 'listMembers',
      summary:
        'People with a membership in the workspace, in the order they joined (guests are not listed)',
      query: ListMembersQuery,
      responses: { 200: { description: 'A page of members', schema: listOf(MemberSchema) } },
      handler: async (ctx) => json(200, await listMembers(context(ctx), ctx.query)),
    }),
    route({
      ...write,
      method: 'PATCH',
      path: '/v1/team/members/{memberId}',
      operationId: 'updateMember',
      summary:
        "Change a member's role (not the owner's) or working hours a day; person tokens see a role change on their next request, the next levelled schedule the hours",
      params: MemberParams,
      body: PatchMemberBody,
      errors: ['FORBIDDEN', 'NOT_FOUND'],
      responses: { 200: { description: 'The member', schema: MemberSchema } },
      handler: async (ctx) =>
        json(200, await updateMember(context(ctx), ctx.params.memberId, ctx.body)),
    }),
    route({
      ...read,
      method: 'GET',
      path: '/v1/team/invites',
      operationId: 'listInvites',
      summary: 'Invitations, newest first',
      query: ListInvitesQuery,
      responses: { 200: { description: 'A page of invitations', schema: listOf(InviteSchema) } },
      handler: async (ctx) => json(200, await listInvites(context(ctx), ctx.query)),
    }),
    route({
      ...write,
      method: 'POST',
      path: '/v1/team/invites',
      operationId: 'createInvite',
      summary:
        'Invite a person by email; a pending invite occupies a seat until accepted or revoked',
      body: CreateInviteBody,
      errors: ['INVALID_EMAIL', 'ALREADY_MEMBER', 'PLAN_LIMIT_REACHED'],
      responses: {
        201: { description: 'The new invitation (status pending)', schema: InviteSchema },
        200: {
          description:
            'An invitation to this address (case-insensitive) was already pending: that one, with the role asked for now',
          schema: InviteSchema,
        },
      },
      handler: async (ctx) => {
        const { invite, created } = await createInvite(context(ctx), ctx.body, deliverInvite);
        return created ? json(201, invite) : json(200, invite);
      },
    }),
    route({
      ...write,
      method: 'DELETE',
      path: '/v1/team/invites/{inviteId}',
      operationId: 'revokeInvite',
      summary:
        'Revoke a pending invitation, freeing its seat (an accepted one cannot be revoked; revoking twice is harmless)',
      params: InviteParams,
      errors: ['FORBIDDEN', 'NOT_FOUND'],
      responses: { 200: { description: 'The invitation, status revoked', schema: InviteSchema } },
      handler: async (ctx) => json(200, await revokeInvite(context(ctx), ctx.params.inviteId)),
    }),
  ];
}

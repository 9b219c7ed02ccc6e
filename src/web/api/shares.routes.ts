/** Flow shares (spec §4): guests with access to one flow, who never occupy a seat. */
import { json, noContent, route, type Route } from '../http/route.ts';
import type { Principal } from '../../services/auth/principal.ts';
import {
  changeShareRole,
  listShares,
  revokeShare,
  shareFlow,
  type ShareContext,
} from '../../services/team/shares.service.ts';
import { listOf } from '../../contract/common.schema.ts';
import { FlowParams } from '../../contract/flow.schema.ts';
import {
  CreateShareBody,
  ListSharesQuery,
  PatchShareBody,
  ShareParams,
  ShareSchema,
} from '../../contract/team.schema.ts';
import type { Services } from '../deps.ts';

export function shareRoutes(services: Services): Route[] {
  const { sql, registry } = services;
  const context = (ctx: { principal: Principal }): ShareContext => ({
    sql,
    registry,
    principal: ctx.principal,
  });

  return [
    route({
      method: 'GET',
      path: '/v1/flows/{flowId}/shares',
      operationId: 'listShares',
      summary: 'Guests with access to this flow, oldest first',
      tags: ['Shares'],
      auth: 'bearer',
      scopes: ['flows:read'],
      params: FlowParams,
      query: ListSharesQuery,
      errors: ['NOT_FOUND'],
      responses: { 200: { description: 'A page of shares', schema: listOf(ShareSchema) } },
      handler: async (ctx) =>
        json(200, await listShares(context(ctx), ctx.params.flowId, ctx.query)),
    }),
    route({
      method: 'POST',
      path: '/v1/flows/{flowId}/shares',
      operationId: 'createShare',
      summary:
        'Give one person access to this flow only, as a guest (never a member, never a seat); sharing again with the same address changes the role',
      tags: ['Shares'],
      auth: 'bearer',
      scopes: ['flows:write'],
      minRole: 'member',
      params: FlowParams,
      body: CreateShareBody,
      errors: ['INVALID_EMAIL', 'NOT_FOUND'],
      responses: {
        201: {
          description: 'The share (the same id when the address already had one)',
          schema: ShareSchema,
        },
      },
      handler: async (ctx) => json(201, await shareFlow(context(ctx), ctx.params.flowId, ctx.body)),
    }),
    route({
      method: 'PATCH',
      path: '/v1/flows/{flowId}/shares/{shareId}',
      operationId: 'updateShare',
      summary:
        'Change what the guest may do (viewer reads; commenter also comments), from their next request on',
      tags: ['Shares'],
      auth: 'bearer',
      scopes: ['flows:write'],
      minRole: 'member',
      params: ShareParams,
      body: PatchShareBody,
      errors: ['NOT_FOUND'],
      responses: { 200: { description: 'The share with its new role', schema: ShareSchema } },
      handler: async (ctx) =>
        json(
          200,
          await changeShareRole(context(ctx), ctx.params.flowId, ctx.params.shareId, ctx.body.role),
        ),
    }),
    route({
      method: 'DELETE',
      path: '/v1/flows/{flowId}/shares/{shareId}',
      operationId: 'revokeShare',
      summary:
        "End a guest's access at once: their next request for the flow is 404, in every process",
      tags: ['Shares'],
      auth: 'bearer',
      scopes: ['flows:write'],
      minRole: 'member',
      params: ShareParams,
      errors: ['NOT_FOUND'],
      responses: { 204: { description: 'Revoked' } },
      handler: async (ctx) => (
        await revokeShare(context(ctx), ctx.params.flowId, ctx.params.shareId),
        noContent()
      ),
    }),
  ];
}

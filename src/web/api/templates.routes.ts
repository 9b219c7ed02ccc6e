/** Template routes (spec §4): the catalogue with per-workspace use counts, and flows started from it. */
import { json, route, type Route } from '../http/route.ts';
import type { Principal } from '../../services/auth/principal.ts';
import { listOf } from '../../contract/common.schema.ts';
import { FlowSchema } from '../../contract/flow.schema.ts';
import {
  ListTemplatesQuery,
  StartFlowFromTemplateBody,
  TemplateDetailSchema,
  TemplateParams,
  TemplateSchema,
} from '../../contract/template.schema.ts';
import {
  getTemplate,
  listTemplates,
  startFlowFromTemplate,
} from '../../services/templates/templates.service.ts';
import { flowReply } from './flows.routes.ts';
import type { Services } from '../deps.ts';

export function templateRoutes(services: Services): Route[] {
  const { sql, registry } = services;
  const workspace = (ctx: { principal: Principal }) => ctx.principal.workspaceId;
  return [
    route({
      method: 'GET',
      path: '/v1/templates',
      operationId: 'listTemplates',
      summary: 'The template catalogue, with how often this workspace used each',
      tags: ['Templates'],
      auth: 'bearer',
      scopes: ['templates:read'],
      query: ListTemplatesQuery,
      responses: {
        200: {
          description: 'Every template (of the category, when given)',
          schema: listOf(TemplateSchema),
        },
      },
      handler: async (ctx) => json(200, await listTemplates(sql, workspace(ctx), ctx.query)),
    }),
    route({
      method: 'GET',
      path: '/v1/templates/{templateId}',
      operationId: 'getTemplate',
      summary: 'A template with the task graph and schedule shape it would produce',
      tags: ['Templates'],
      auth: 'bearer',
      scopes: ['templates:read'],
      params: TemplateParams,
      errors: ['NOT_FOUND'],
      responses: { 200: { description: 'The template', schema: TemplateDetailSchema } },
      handler: async (ctx) =>
        json(200, await getTemplate(sql, workspace(ctx), ctx.params.templateId)),
    }),
    route({
      method: 'POST',
      path: '/v1/templates/{templateId}/flows',
      operationId: 'startFlowFromTemplate',
      summary: 'Start a flow with the task graph of a template',
      tags: ['Templates'],
      auth: 'bearer',
      scopes: ['flows:write', 'templates:read'],
      minRole: 'member',
      params: TemplateParams,
      body: StartFlowFromTemplateBody,
      bodyOptional: true,
      errors: ['NOT_FOUND', 'SUBSCRIPTION_PAST_DUE'],
      responses: { 201: { description: 'The new flow', schema: FlowSchema } },
      handler: async (ctx) =>
        flowReply(
          await startFlowFromTemplate(
            { sql, registry, principal: ctx.principal },
            ctx.params.templateId,
            ctx.body,
          ),
          201,
        ),
    }),
  ];
}

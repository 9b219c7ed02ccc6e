/** Baselines under /v1/flows/{flowId} (CONTRACT §5): keep the schedule, list, compare. */
import { json, route, type Route } from '../http/route.ts';
import type { Principal } from '../../services/auth/principal.ts';
import type { FlowContext } from '../../services/flows/flows.service.ts';
import {
  baselineVariance,
  createBaseline,
  listBaselines,
} from '../../services/flows/baselines.service.ts';
import { listOf } from '../../contract/common.schema.ts';
import { FlowParams } from '../../contract/flow.schema.ts';
import {
  BaselineParams,
  BaselineSchema,
  BaselinesQuery,
  CreateBaselineBody,
  VarianceQuery,
  VarianceSchema,
} from '../../contract/baseline.schema.ts';
import type { Services } from '../deps.ts';

const BASELINES = '/v1/flows/{flowId}/baselines';

export function baselineRoutes(services: Services): Route[] {
  const { sql, registry } = services;
  const context = (ctx: { principal: Principal }): FlowContext => ({
    sql,
    registry,
    principal: ctx.principal,
  });
  // A guest who may read the flow's schedule may read how it moved (and sees the event anyway).
  const read = { auth: 'bearer', scopes: ['flows:read'], tags: ['Flows'], guest: 'read' } as const;
  return [
    route({
      auth: 'bearer',
      scopes: ['flows:write'],
      minRole: 'member',
      tags: ['Flows'],
      method: 'POST',
      path: BASELINES,
      operationId: 'createBaseline',
      summary: 'Keep the schedule as it stands (from today), to compare against later',
      params: FlowParams,
      body: CreateBaselineBody,
      responses: { 201: { description: 'The baseline', schema: BaselineSchema } },
      handler: async (ctx) =>
        json(201, await createBaseline(context(ctx), ctx.params.flowId, ctx.body.name)),
    }),
    route({
      ...read,
      method: 'GET',
      path: BASELINES,
      operationId: 'listBaselines',
      summary: 'The flow’s baselines, newest first',
      params: FlowParams,
      query: BaselinesQuery,
      responses: { 200: { description: 'A page of baselines', schema: listOf(BaselineSchema) } },
      handler: async (ctx) =>
        json(200, await listBaselines(context(ctx), ctx.params.flowId, ctx.query)),
    }),
    route({
      ...read,
      method: 'GET',
      path: `${BASELINES}/{baselineId}/variance`,
      operationId: 'getBaselineVariance',
      summary:
        'How the schedule moved since the baseline: the finish’s and each task’s slip in working days, tasks added and removed',
      params: BaselineParams,
      query: VarianceQuery,
      responses: { 200: { description: 'The variance', schema: VarianceSchema } },
      handler: async (ctx) =>
        json(
          200,
          await baselineVariance(
            context(ctx),
            ctx.params.flowId,
            ctx.params.baselineId,
            ctx.query.startDate,
          ),
        ),
    }),
  ];
}

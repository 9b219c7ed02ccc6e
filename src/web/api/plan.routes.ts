/**
 * Planning under /v1/flows/{flowId}: commands as data (a batch, a what-if), and the forecast.
 * Each costs rate budget by the work it asks for (its `cost`), not one request alone.
 */
import { json, route, type Route } from '../http/route.ts';
import type { Principal } from '../../services/auth/principal.ts';
import type { FlowContext } from '../../services/flows/flows.service.ts';
import { CommandLists } from '../../services/flows/commands.service.ts';
import { commandsCost } from '../../services/flows/commands.ts';
import { FlowParams } from '../../contract/flow.schema.ts';
import { BatchBody, BatchSchema, WhatIfBody, WhatIfSchema } from '../../contract/plan.schema.ts';
import { ForecastQuery, ForecastSchema } from '../../contract/forecast.schema.ts';
import { forecastCost, forecastOf } from '../../services/flows/forecast.ts';
import { scheduleStart } from '../../services/flows/schedule.ts';
import type { Services } from '../deps.ts';

/** Every refusal a single command's route may answer, each with the command's `details.index`. */
const COMMAND_REFUSALS = [
  'CIRCULAR_DEPENDENCY',
  'DOWNSTREAM_STARTED',
  'TASK_STARTED',
  'TASK_BLOCKED',
  'INVALID_TRANSITION',
  'SUBTASKS_OUTSTANDING',
  'DELIVERABLE_MISSING',
] as const;

const JSON_TYPE = 'application/json; charset=utf-8';

export function planRoutes(services: Services): Route[] {
  const { sql, registry, pool, config } = services;
  const context = (ctx: { principal: Principal }): FlowContext => ({
    sql,
    registry,
    principal: ctx.principal,
  });
  const lists = new CommandLists(pool, {
    whatIfsAtOnce: config.whatIfConcurrency,
    offloadWork: config.commandsOffloadWork,
  });
  /** A list's price, from the flow as it stands (404 for a flow that is not the caller's). */
  const listCost = async (ctx: {
    principal: Principal;
    params: { flowId: string };
    body: { commands: Parameters<typeof commandsCost>[1] };
  }) =>
    commandsCost(
      await registry.snapshot(ctx.principal.workspaceId, ctx.params.flowId),
      ctx.body.commands,
    );
  return [
    route({
      auth: 'bearer',
      scopes: ['flows:write'],
      minRole: 'member',
      tags: ['Tasks'],
      method: 'POST',
      path: '/v1/flows/{flowId}/batch',
      operationId: 'runBatch',
      summary:
        'Apply commands as one change: all or none, one version step, each command’s events in order (moving work needs work:write too)',
      params: FlowParams,
      body: BatchBody,
      indexedList: '/commands',
      // A large list runs on the pool's commands lane: SERVICE_UNAVAILABLE when that is full.
      errors: [...COMMAND_REFUSALS, 'VERSION_MISMATCH', 'SERVICE_UNAVAILABLE'],
      cost: listCost,
      responses: {
        200: { description: 'The version committed, and each command’s task', schema: BatchSchema },
      },
      handler: async (ctx) =>
        json(200, await lists.batch(context(ctx), ctx.params.flowId, ctx.body)),
    }),
    route({
      auth: 'bearer',
      scopes: ['flows:read'],
      tags: ['Tasks'],
      method: 'POST',
      // A read: it commits nothing, so a viewer may ask.
      write: false,
      path: '/v1/flows/{flowId}/what-if',
      operationId: 'whatIf',
      summary:
        'What the commands would do to the plan, beside the plan as it is; nothing is committed',
      params: FlowParams,
      body: WhatIfBody,
      indexedList: '/commands',
      // A large list runs on the pool's commands lane: SERVICE_UNAVAILABLE when that is full.
      errors: [...COMMAND_REFUSALS, 'SERVICE_UNAVAILABLE'],
      cost: listCost,
      responses: {
        200: { description: 'The current and the scenario outlooks', schema: WhatIfSchema },
      },
      handler: async (ctx) => {
        const answer = await lists.whatIf(context(ctx), ctx.params.flowId, ctx.body);
        // A large list's answer is the JSON its worker made.
        return Buffer.isBuffer(answer)
          ? { status: 200, body: answer, contentType: JSON_TYPE }
          : json(200, answer);
      },
    }),
    route({
      auth: 'bearer',
      scopes: ['flows:read'],
      guest: 'read',
      tags: ['Flows'],
      method: 'GET',
      path: '/v1/flows/{flowId}/forecast',
      operationId: 'getForecast',
      summary:
        'How sure the finish is: schedules drawn from the ranged estimates, their finish quantiles, the chance of meeting the due date and how often each task was critical',
      params: FlowParams,
      query: ForecastQuery,
      // Its samples run on the pool when many: SERVICE_UNAVAILABLE when that is full.
      errors: ['SERVICE_UNAVAILABLE'],
      // Only a seeded forecast is the same answer again.
      etag: async (ctx) => {
        if (ctx.query.seed === undefined) return null;
        const { version } = await registry.snapshot(ctx.principal.workspaceId, ctx.params.flowId);
        return forecastTag(ctx.params.flowId, version, ctx.query);
      },
      cost: async (ctx) =>
        forecastCost(
          await registry.snapshot(ctx.principal.workspaceId, ctx.params.flowId),
          ctx.query.samples,
        ),
      responses: { 200: { description: 'The forecast', schema: ForecastSchema } },
      handler: async (ctx) => {
        const snapshot = await registry.snapshot(ctx.principal.workspaceId, ctx.params.flowId);
        const forecast = await forecastOf(pool, snapshot, ctx.query);
        return json(200, forecast, {
          etag: forecastTag(ctx.params.flowId, snapshot.version, forecast),
        });
      },
    }),
  ];
}

const forecastTag = (
  flowId: string,
  version: number,
  query: { samples?: number; seed?: number; startDate?: string },
) =>
  `${flowId}.v${version}.${scheduleStart(query.startDate)}.${query.samples ?? 2000}.${query.seed}`;

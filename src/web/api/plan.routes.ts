/** Commands as data under /v1/flows/{flowId} (CONTRACT §5): a batch, and a what-if. */
import { json, route, type Route } from '../http/route.ts';
import type { Principal } from '../../services/auth/principal.ts';
import type { FlowContext } from '../../services/flows/flows.service.ts';
import { runBatch, whatIf } from '../../services/flows/commands.service.ts';
import { FlowParams } from '../../contract/flow.schema.ts';
import { BatchBody, BatchSchema, WhatIfBody, WhatIfSchema } from '../../contract/plan.schema.ts';
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

export function planRoutes(services: Services): Route[] {
  const { sql, registry } = services;
  const context = (ctx: { principal: Principal }): FlowContext => ({
    sql,
    registry,
    principal: ctx.principal,
  });
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
      errors: [...COMMAND_REFUSALS, 'VERSION_MISMATCH'],
      responses: {
        200: { description: 'The version committed, and each command’s task', schema: BatchSchema },
      },
      handler: async (ctx) => json(200, await runBatch(context(ctx), ctx.params.flowId, ctx.body)),
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
      errors: [...COMMAND_REFUSALS],
      responses: {
        200: { description: 'The current and the scenario outlooks', schema: WhatIfSchema },
      },
      handler: async (ctx) => json(200, await whatIf(context(ctx), ctx.params.flowId, ctx.body)),
    }),
  ];
}

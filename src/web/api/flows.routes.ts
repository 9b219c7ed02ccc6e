/** Flow routes (spec §4 and CONTRACT §3): thin handlers over the flow service and snapshots. */
import { json, noContent, route, type Route } from '../http/route.ts';
import type { Principal } from '../../services/auth/principal.ts';
import {
  archiveFlow,
  createFlow,
  listFlows,
  publishFlow,
  restoreFlow,
  unpublishFlow,
  updateFlow,
  type FlowContext,
} from '../../services/flows/flows.service.ts';
import { flowReport } from '../../services/flows/report.service.ts';
import { levelledSchedule, levelledTag } from '../../services/flows/levelled.service.ts';
import { requestedSchedule, scheduleStart } from '../../services/flows/schedule.ts';
import type { Snapshot } from '../../services/flows/snapshot.ts';
import { listOf } from '../../contract/common.schema.ts';
import {
  CreateFlowBody,
  FlowParams,
  FlowSchema,
  FlowSummarySchema,
  ListFlowsQuery,
  PatchFlowBody,
} from '../../contract/flow.schema.ts';
import { ReportSchema, ScheduleQuery, ScheduleSchema } from '../../contract/schedule.schema.ts';
import type { Services } from '../deps.ts';

const JSON_TYPE = 'application/json; charset=utf-8';

/** The Flow of a snapshot: bytes serialized once per version, tagged with the version. */
export const flowReply = (snapshot: Snapshot, status = 200) => ({
  status,
  body: snapshot.flowJson(),
  contentType: JSON_TYPE,
  etag: `${snapshot.flow.id}.v${snapshot.version}`,
});

export function flowRoutes(services: Services): Route[] {
  const { sql, registry } = services;
  const context = (ctx: { principal: Principal }): FlowContext => ({
    sql,
    registry,
    principal: ctx.principal,
  });
  const versionTag = async (ctx: { principal: Principal; params: { flowId: string } }) =>
    `${ctx.params.flowId}.v${(await registry.snapshot(ctx.principal.workspaceId, ctx.params.flowId)).version}`;
  const summary = (snapshot: Snapshot) => json(200, snapshot.summary());

  const flows: Route[] = [
    route({
      method: 'GET',
      path: '/v1/flows',
      operationId: 'listFlows',
      summary: 'List flows, newest first',
      tags: ['Flows'],
      auth: 'bearer',
      scopes: ['flows:read'],
      query: ListFlowsQuery,
      responses: { 200: { description: 'A page of flows', schema: listOf(FlowSummarySchema) } },
      handler: async (ctx) => json(200, await listFlows(context(ctx), ctx.query)),
    }),
    route({
      method: 'POST',
      path: '/v1/flows',
      operationId: 'createFlow',
      summary: 'Create a flow with its task graph',
      tags: ['Flows'],
      auth: 'bearer',
      scopes: ['flows:write'],
      minRole: 'member',
      body: CreateFlowBody,
      errors: ['CIRCULAR_DEPENDENCY'],
      responses: { 201: { description: 'The new flow', schema: FlowSchema } },
      handler: async (ctx) => flowReply(await createFlow(context(ctx), ctx.body), 201),
    }),
    route({
      method: 'GET',
      path: '/v1/flows/{flowId}',
      guest: 'read',
      operationId: 'getFlow',
      summary: 'A flow with its whole task graph and derived state',
      tags: ['Flows'],
      auth: 'bearer',
      scopes: ['flows:read'],
      params: FlowParams,
      etag: versionTag,
      responses: { 200: { description: 'The flow', schema: FlowSchema } },
      handler: async (ctx) =>
        flowReply(await registry.snapshot(ctx.principal.workspaceId, ctx.params.flowId)),
    }),
    route({
      method: 'PATCH',
      path: '/v1/flows/{flowId}',
      operationId: 'updateFlow',
      summary: 'Change name, description or due date',
      tags: ['Flows'],
      auth: 'bearer',
      scopes: ['flows:write'],
      minRole: 'member',
      params: FlowParams,
      body: PatchFlowBody,
      responses: { 200: { description: 'The flow summary', schema: FlowSummarySchema } },
      handler: async (ctx) => summary(await updateFlow(context(ctx), ctx.params.flowId, ctx.body)),
    }),
    route({
      method: 'DELETE',
      path: '/v1/flows/{flowId}',
      operationId: 'archiveFlow',
      summary: 'Archive a flow (it can be restored)',
      tags: ['Flows'],
      auth: 'bearer',
      scopes: ['flows:write'],
      minRole: 'member',
      params: FlowParams,
      responses: { 204: { description: 'Archived' } },
      handler: async (ctx) => (await archiveFlow(context(ctx), ctx.params.flowId), noContent()),
    }),
    route({
      method: 'POST',
      path: '/v1/flows/{flowId}/restore',
      operationId: 'restoreFlow',
      summary: 'Bring an archived flow back',
      tags: ['Flows'],
      auth: 'bearer',
      scopes: ['flows:write'],
      minRole: 'member',
      params: FlowParams,
      errors: ['NOT_ARCHIVED'],
      responses: { 200: { description: 'The flow summary', schema: FlowSummarySchema } },
      handler: async (ctx) => summary(await restoreFlow(context(ctx), ctx.params.flowId)),
    }),
    route({
      method: 'POST',
      path: '/v1/flows/{flowId}/publish',
      operationId: 'publishFlow',
      summary: 'Publish the flow at a fresh unguessable link',
      tags: ['Flows'],
      auth: 'bearer',
      scopes: ['flows:write'],
      minRole: 'member',
      params: FlowParams,
      responses: {
        200: { description: 'The flow summary with publicUrl', schema: FlowSummarySchema },
      },
      handler: async (ctx) => summary(await publishFlow(context(ctx), ctx.params.flowId)),
    }),
    route({
      method: 'POST',
      path: '/v1/flows/{flowId}/unpublish',
      operationId: 'unpublishFlow',
      summary: 'Take the flow off the public web at once',
      tags: ['Flows'],
      auth: 'bearer',
      scopes: ['flows:write'],
      minRole: 'member',
      params: FlowParams,
      responses: {
        200: { description: 'The flow summary, public false', schema: FlowSummarySchema },
      },
      handler: async (ctx) => summary(await unpublishFlow(context(ctx), ctx.params.flowId)),
    }),
    route({
      method: 'GET',
      path: '/v1/flows/{flowId}/schedule',
      guest: 'read',
      operationId: 'getSchedule',
      summary: 'Working-day schedule and projected finish, levelled by person with level=true',
      tags: ['Flows'],
      auth: 'bearer',
      scopes: ['flows:read'],
      params: FlowParams,
      query: ScheduleQuery,
      etag: async (ctx) =>
        ctx.query.level === true
          ? levelledTag(
              sql,
              await registry.snapshot(ctx.principal.workspaceId, ctx.params.flowId),
              ctx.query.startDate,
            )
          : `${await versionTag(ctx)}.${scheduleStart(ctx.query.startDate)}`,
      responses: {
        200: {
          description: 'The schedule; with level=true, the levelled schedule',
          schema: ScheduleSchema,
        },
      },
      handler: async (ctx) => {
        const snapshot = await registry.snapshot(ctx.principal.workspaceId, ctx.params.flowId);
        if (ctx.query.level === true) {
          const { schedule, tag } = await levelledSchedule(sql, snapshot, ctx.query.startDate);
          return json(200, schedule, { etag: tag });
        }
        const schedule = requestedSchedule(snapshot, ctx.query.startDate);
        return json(200, schedule, {
          etag: `${ctx.params.flowId}.v${snapshot.version}.${schedule.startDate}`,
        });
      },
    }),
    route({
      method: 'GET',
      path: '/v1/flows/{flowId}/report',
      guest: 'read',
      operationId: 'getReport',
      summary: 'Delivery report: progress, hours, workload, blockers',
      tags: ['Flows'],
      auth: 'bearer',
      scopes: ['flows:read'],
      params: FlowParams,
      responses: { 200: { description: 'The report', schema: ReportSchema } },
      handler: async (ctx) => {
        const snapshot = await registry.snapshot(ctx.principal.workspaceId, ctx.params.flowId);
        return json(200, await flowReport(sql, snapshot));
      },
    }),
  ];
  return flows;
}

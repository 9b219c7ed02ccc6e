/** Notification routes (CONTRACT §3): preferences, deliveries and the digest, per member. */
import { json, type RequestContext, type Route } from '../http/route.ts';
import { getPreferences, updatePreferences, type PreferencesPatch, type PreferencesTarget } from '../notifications/preferences.service.ts';
import {
  DeliveriesQuery, DeliveriesSchema, DigestQuery, DigestSchema, PatchPreferencesBody, PreferencesQuery, PreferencesSchema,
} from '../schemas/notification.schema.ts';
import type { Services } from './services.ts';

export function notificationRoutes(services: Services): Route[] {
  const { sql, notifications } = services;
  const read = { auth: 'bearer', scopes: ['notifications:read'], tags: ['Notifications'] } as const;

  return [
    {
      ...read, method: 'GET', path: '/v1/notifications/preferences', operationId: 'getNotificationPreferences',
      summary: "A member's notification preferences, resolved: account level, or with `flowId` that flow's override applied",
      query: PreferencesQuery, errors: ['NOT_FOUND'],
      responses: { 200: { description: 'The resolved preferences', schema: PreferencesSchema } },
      handler: async (ctx: RequestContext<{}, PreferencesTarget>) => json(200, await getPreferences(sql, ctx.principal!, ctx.query)),
    },
    {
      auth: 'bearer', scopes: ['notifications:write'], tags: ['Notifications'],
      method: 'PATCH', path: '/v1/notifications/preferences', operationId: 'updateNotificationPreferences',
      summary: "Change a member's notification preferences (account level), or with `flowId` mute or unmute one flow; another member's needs admin",
      query: PreferencesQuery, body: PatchPreferencesBody, errors: ['FORBIDDEN', 'NOT_FOUND'],
      responses: { 200: { description: 'The resolved preferences after the change', schema: PreferencesSchema } },
      handler: async (ctx: RequestContext<{}, PreferencesTarget, PreferencesPatch>) =>
        json(200, await updatePreferences(sql, ctx.principal!, ctx.query, ctx.body)),
    },
    {
      ...read, method: 'GET', path: '/v1/notifications/deliveries', operationId: 'listNotificationDeliveries',
      summary: 'Emails sent to a member, or deliberately not sent, one row per attempt, newest first',
      query: DeliveriesQuery, errors: ['NOT_FOUND'],
      responses: { 200: { description: 'A page of deliveries', schema: DeliveriesSchema } },
      handler: async (ctx: RequestContext<{}, { memberId: string; size: number; from: number }>) =>
        json(200, await notifications.deliveriesOf(ctx.principal!, ctx.query.memberId, ctx.query.size, ctx.query.from)),
    },
    {
      ...read, method: 'GET', path: '/v1/notifications/digest', operationId: 'getNotificationDigest',
      summary: "A member's digest as it would be mailed now, built by the real builder and delivered to nobody",
      query: DigestQuery, errors: ['NOT_FOUND'],
      responses: { 200: { description: 'The digest', schema: DigestSchema } },
      handler: async (ctx: RequestContext<{}, { memberId: string }>) => json(200, await notifications.digestOf(ctx.principal!, ctx.query.memberId)),
    },
  ];
}

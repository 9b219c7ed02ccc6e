/** Notification routes (CONTRACT §3): preferences, deliveries and the digest, per member. */
import { json, route, type Route } from '../http/route.ts';
import { notFound } from '../../platform/errors.ts';
import { describeUnsubscribe, unsubscribe } from '../../services/notifications/unsubscribe.ts';
import { confirmPage, donePage, errorPage } from './unsubscribe.views.ts';
import {
  digestPreview,
  getPreferences,
  memberDeliveries,
  updatePreferences,
  type NotificationContext,
} from '../../services/notifications/preferences.service.ts';
import type { Principal } from '../../services/auth/principal.ts';
import {
  DeliveriesQuery,
  DeliveriesSchema,
  UnsubscribeParams,
  DigestQuery,
  DigestSchema,
  PatchPreferencesBody,
  PreferencesQuery,
  PreferencesSchema,
} from '../../contract/notification.schema.ts';
import type { Services } from '../deps.ts';

export function notificationRoutes(services: Services): Route[] {
  const { sql, registry } = services;
  const context = (ctx: { principal: Principal }): NotificationContext => ({
    sql,
    registry,
    principal: ctx.principal,
  });
  const read = { auth: 'bearer', scopes: ['notifications:read'], tags: ['Notifications'] } as const;
  const unsubscribeRoute = {
    path: '/unsubscribe/{token}',
    auth: 'none',
    hidden: true,
    rateLimit: 'address',
    tags: ['Notifications'],
    params: UnsubscribeParams,
    renderError: errorPage,
    responses: { 200: { description: 'HTML page', contentType: 'text/html' } },
  } as const;

  return [
    route({
      ...read,
      method: 'GET',
      path: '/v1/notifications/preferences',
      operationId: 'getNotificationPreferences',
      summary:
        "A member's notification preferences, resolved: account level, or with `flowId` that flow's override applied",
      query: PreferencesQuery,
      errors: ['NOT_FOUND'],
      responses: { 200: { description: 'The resolved preferences', schema: PreferencesSchema } },
      handler: async (ctx) => json(200, await getPreferences(context(ctx), ctx.query)),
    }),
    route({
      auth: 'bearer',
      scopes: ['notifications:write'],
      tags: ['Notifications'],
      method: 'PATCH',
      path: '/v1/notifications/preferences',
      operationId: 'updateNotificationPreferences',
      summary:
        "Change a member's notification preferences (account level), or with `flowId` mute or unmute one flow; another member's needs admin",
      query: PreferencesQuery,
      body: PatchPreferencesBody,
      errors: ['FORBIDDEN', 'NOT_FOUND'],
      responses: {
        200: {
          description: 'The resolved preferences after the change',
          schema: PreferencesSchema,
        },
      },
      handler: async (ctx) => json(200, await updatePreferences(context(ctx), ctx.query, ctx.body)),
    }),
    route({
      ...read,
      method: 'GET',
      path: '/v1/notifications/deliveries',
      operationId: 'listNotificationDeliveries',
      summary:
        "Emails sent to a member, or deliberately not sent, one row per attempt, newest first; another member's needs admin",
      query: DeliveriesQuery,
      errors: ['FORBIDDEN', 'NOT_FOUND'],
      responses: { 200: { description: 'A page of deliveries', schema: DeliveriesSchema } },
      handler: async (ctx) =>
        json(200, await memberDeliveries(context(ctx), ctx.query.memberId, ctx.query)),
    }),
    route({
      ...read,
      method: 'GET',
      path: '/v1/notifications/digest',
      operationId: 'getNotificationDigest',
      summary:
        "A member's digest as it would be mailed now, built by the real builder and delivered to nobody; another member's needs admin",
      query: DigestQuery,
      errors: ['FORBIDDEN', 'NOT_FOUND'],
      responses: { 200: { description: 'The digest', schema: DigestSchema } },
      handler: async (ctx) => json(200, await digestPreview(context(ctx), ctx.query.memberId)),
    }),
    // The link in every email's List-Unsubscribe header: no credential, the token is the key.
    // Hidden from the OpenAPI document: pages for people, not part of the v1 interface.
    route({
      ...unsubscribeRoute,
      method: 'GET',
      operationId: 'unsubscribePage',
      summary: 'Asks whether to unsubscribe (never unsubscribes by itself)',
      handler: async (ctx) => {
        const found = await describeUnsubscribe(sql, ctx.params.token);
        if (!found) throw notFound('Unsubscribe link');
        return confirmPage(found.kind, found.email);
      },
    }),
    route({
      ...unsubscribeRoute,
      method: 'POST',
      operationId: 'unsubscribe',
      summary: 'Unsubscribes (RFC 8058 one-click, or the confirmation button)',
      bodyKind: 'bytes',
      maxBodyBytes: 16 * 1024,
      handler: async (ctx) => {
        const done = await unsubscribe(sql, ctx.params.token);
        if (!done) throw notFound('Unsubscribe link');
        return donePage(done.kind, done.email);
      },
    }),
  ];
}

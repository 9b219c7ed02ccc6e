/** Webhook routes (CONTRACT §3): endpoints, secret rotation, the delivery log and manual retries. */
import { json, noContent, route, type Route } from '../http/route.ts';
import {
  CreateWebhookBody,
  DeliveriesSchema,
  DeliveryParams,
  DeliverySchema,
  UpdateWebhookBody,
  WebhookParams,
  WebhookSchema,
  WebhooksQuery,
  WebhooksSchema,
  WebhookWithSecretSchema,
} from '../../contract/webhook.schema.ts';
import type { Services } from '../deps.ts';
import type { Principal } from '../../services/auth/principal.ts';
import {
  changeWebhook,
  createWebhook,
  listDeliveries,
  listWebhooks,
  readWebhook,
  removeWebhook,
  retryDelivery,
  rotateSecret,
  type WebhookContext,
} from '../../services/webhooks/webhooks.service.ts';

export function webhookRoutes(services: Services): Route[] {
  const context = (ctx: { principal: Principal }): WebhookContext => ({
    ...services.webhooks,
    principal: ctx.principal,
  });
  const read = { auth: 'bearer', scopes: ['flows:read'], tags: ['Webhooks'] } as const;
  const write = {
    auth: 'bearer',
    scopes: ['flows:write'],
    minRole: 'admin',
    tags: ['Webhooks'],
  } as const;

  return [
    route({
      ...write,
      method: 'POST',
      path: '/v1/webhooks',
      operationId: 'createWebhook',
      summary:
        'Register an endpoint for events (Standard Webhooks 1.0); the answer holds the signing secret, shown only this once',
      body: CreateWebhookBody,
      errors: ['PLAN_LIMIT_REACHED'],
      responses: {
        201: { description: 'The endpoint, with its secret', schema: WebhookWithSecretSchema },
      },
      handler: async (ctx) => json(201, await createWebhook(context(ctx), ctx.body)),
    }),
    route({
      ...read,
      method: 'GET',
      path: '/v1/webhooks',
      operationId: 'listWebhooks',
      summary:
        "The workspace's webhook endpoints, newest first (no secrets; a URL's path and query only to an admin with flows:write)",
      query: WebhooksQuery,
      responses: { 200: { description: 'A page of endpoints', schema: WebhooksSchema } },
      handler: async (ctx) => json(200, await listWebhooks(context(ctx), ctx.query)),
    }),
    route({
      ...read,
      method: 'GET',
      path: '/v1/webhooks/{webhookId}',
      operationId: 'getWebhook',
      summary:
        "One webhook endpoint (no secret; the URL's path and query only to an admin with flows:write)",
      params: WebhookParams,
      responses: { 200: { description: 'The endpoint', schema: WebhookSchema } },
      handler: async (ctx) => json(200, await readWebhook(context(ctx), ctx.params.webhookId)),
    }),
    route({
      ...write,
      method: 'PATCH',
      path: '/v1/webhooks/{webhookId}',
      operationId: 'updateWebhook',
      summary:
        'Change the URL (checked again), events, description, or switch the endpoint off and on',
      params: WebhookParams,
      body: UpdateWebhookBody,
      responses: { 200: { description: 'The endpoint', schema: WebhookSchema } },
      handler: async (ctx) =>
        json(200, await changeWebhook(context(ctx), ctx.params.webhookId, ctx.body)),
    }),
    route({
      ...write,
      method: 'DELETE',
      path: '/v1/webhooks/{webhookId}',
      operationId: 'deleteWebhook',
      summary: 'Remove an endpoint and its delivery log; nothing more is sent to it',
      params: WebhookParams,
      responses: { 204: { description: 'Removed' } },
      handler: async (ctx) => {
        await removeWebhook(context(ctx), ctx.params.webhookId);
        return noContent();
      },
    }),
    route({
      ...write,
      method: 'POST',
      path: '/v1/webhooks/{webhookId}/rotate-secret',
      operationId: 'rotateWebhookSecret',
      summary:
        'A new signing secret, shown once; for 24 hours deliveries carry signatures by both the new and the previous secret',
      params: WebhookParams,
      responses: {
        200: { description: 'The endpoint, with its new secret', schema: WebhookWithSecretSchema },
      },
      handler: async (ctx) => json(200, await rotateSecret(context(ctx), ctx.params.webhookId)),
    }),
    route({
      ...read,
      method: 'GET',
      path: '/v1/webhooks/{webhookId}/deliveries',
      operationId: 'listWebhookDeliveries',
      summary:
        'Deliveries to an endpoint, newest first, each with its attempts (status code, duration, error)',
      params: WebhookParams,
      query: WebhooksQuery,
      responses: { 200: { description: 'A page of deliveries', schema: DeliveriesSchema } },
      handler: async (ctx) =>
        json(200, await listDeliveries(context(ctx), ctx.params.webhookId, ctx.query)),
    }),
    route({
      ...write,
      method: 'POST',
      path: '/v1/webhooks/{webhookId}/deliveries/{deliveryId}/retry',
      operationId: 'retryWebhookDelivery',
      summary:
        'Attempt a finished delivery (delivered, failed or skipped) once more, with the same webhook-id; 409 while it is still being attempted',
      params: DeliveryParams,
      errors: ['INVALID_TRANSITION'],
      responses: {
        202: { description: 'The delivery, pending its new attempt', schema: DeliverySchema },
      },
      handler: async (ctx) =>
        json(202, await retryDelivery(context(ctx), ctx.params.webhookId, ctx.params.deliveryId)),
    }),
  ];
}

/**
 * The webhook event types (CONTRACT §3) that the flows code writes to the outbox in the change's own
 * transaction; what each carries is described in src/web/schemas/webhook-events.schema.ts.
 */
export const WEBHOOK_EVENT_TYPES = [
  'flow.created',
  'flow.updated',
  'flow.archived',
  'flow.restored',
  'flow.published',
  'flow.unpublished',
  'task.created',
  'task.updated',
  'task.deleted',
  'task.started',
  'task.completed',
  'task.reopened',
  'task.unblocked',
  'task.assigned',
  'comment.created',
] as const;

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

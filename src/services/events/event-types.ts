/**
 * The event types (CONTRACT §3) that the flows code writes to the outbox in the change's own
 * transaction, and that every reader of the log knows: the feed and the live streams, webhook
 * endpoints and notification jobs. What each carries is described in
 * src/web/schemas/webhook-events.schema.ts; the names keep their webhook spelling, which the
 * webhook API introduced.
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

const EVENT_TYPES: ReadonlySet<string> = new Set(WEBHOOK_EVENT_TYPES);

function isWebhookEventType(value: string): value is WebhookEventType {
  return EVENT_TYPES.has(value);
}

/** A stored event type, as its type: only these are ever stored (events are validated on the way in), so another is a bug. */
export function webhookEventType(value: string): WebhookEventType {
  if (!isWebhookEventType(value)) throw new Error(`not a webhook event type: ${value}`);
  return value;
}

/**
 * The webhook event types as the webhooks service reads them back from the outbox; the list
 * itself and what each type carries are the contract's (src/contract/webhook-events.schema.ts).
 */
import {
  WEBHOOK_EVENT_TYPES,
  type WebhookEventType,
} from '../../contract/webhook-events.schema.ts';

const EVENT_TYPES: ReadonlySet<string> = new Set(WEBHOOK_EVENT_TYPES);

function isWebhookEventType(value: string): value is WebhookEventType {
  return EVENT_TYPES.has(value);
}

/** A stored event type, as its type: only these are ever stored (events are validated on the way in), so another is a bug. */
export function webhookEventType(value: string): WebhookEventType {
  if (!isWebhookEventType(value)) throw new Error(`not a webhook event type: ${value}`);
  return value;
}

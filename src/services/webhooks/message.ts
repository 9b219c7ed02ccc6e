/**
 * What a receiver gets for an event: the `webhook-id` and the body, both derived from the
 * endpoint and the event alone, so every attempt (and a retry after a crash) sends the same
 * id and the same bytes without a row per delivery to keep them.
 */

/**
 * `msg_<endpoint>_<position>`: the endpoint's id without its prefix, then the event's position
 * in the log (given once, never reused). Another endpoint's delivery of the same event has
 * another id.
 */
export function deliveryId(webhookId: string, position: string): string {
  return `msg_${webhookId.slice('whk_'.length)}_${position}`;
}

/** The position of a delivery id of this endpoint; null for anything else. */
export function positionOf(webhookId: string, id: string): string | null {
  const prefix = `msg_${webhookId.slice('whk_'.length)}_`;
  if (!id.startsWith(prefix)) return null;
  const position = id.slice(prefix.length);
  return /^[1-9][0-9]{0,18}$/.test(position) ? position : null;
}

/** The body: the event as Standard Webhooks payload (jsonb gives its keys in one order, so the bytes are the same on every attempt). */
export function deliveryBody(event: {
  type: string;
  createdAt: Date;
  workspaceId: string;
  data: Record<string, unknown>;
}): string {
  return JSON.stringify({
    type: event.type,
    timestamp: event.createdAt.toISOString(),
    workspaceId: event.workspaceId,
    data: event.data,
  });
}

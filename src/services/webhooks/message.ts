/**
 * What a receiver gets for an event: the `webhook-id` and the body, both derived from the
 * endpoint and the event alone, so every attempt (and a retry after a crash, in any process) sends
 * the same id and the same bytes without a row per delivery to keep them.
 */
import type { Db } from '../../storage/db.ts';
import type { WebhookRow } from '../../storage/webhooks.store.ts';
import { CursorKeys } from '../events/cursor.ts';

/** What an endpoint's ids depend on. */
export type IdEndpoint = Pick<WebhookRow, 'id' | 'positionIdsThrough'>;

const NUMBERED = /^[1-9][0-9]{0,18}$/;

/**
 * `msg_<endpoint>_<sealed>`: the endpoint's id without its prefix, then the event's position in
 * the log sealed for that endpoint (one AES block under the server's key with a MAC, as event
 * cursors are: 22 characters). The position is the installation's order of every workspace's
 * events; sealed, an id tells nothing of it, nor of how many events came between two. Another
 * endpoint's delivery of the same event has another id. The key is kept in the database, so
 * every process and every restart gives the same id.
 *
 * Events that had their position before ids were sealed keep `msg_<endpoint>_<position>`, the id
 * their attempts were sent with (sql/0031_webhook_sealed_ids.sql: `positionIdsThrough`).
 */
export class DeliveryIds {
  private constructor(private readonly keys: CursorKeys) {}

  static async load(sql: Db): Promise<DeliveryIds> {
    return new DeliveryIds(await CursorKeys.load(sql));
  }

  of(endpoint: IdEndpoint, position: string): string {
    const suffix = numbered(endpoint, position)
      ? position
      : this.keys.seal('delivery', position, endpoint.id);
    return `${prefix(endpoint)}${suffix}`;
  }

  /** The position of a delivery id of this endpoint; null for anything else (another endpoint's, forged, garbage). */
  positionOf(endpoint: IdEndpoint, id: string): string | null {
    if (!id.startsWith(prefix(endpoint))) return null;
    const suffix = id.slice(prefix(endpoint).length);
    if (NUMBERED.test(suffix)) return numbered(endpoint, suffix) ? suffix : null;
    return this.keys.open('delivery', suffix, endpoint.id);
  }
}

function prefix(endpoint: IdEndpoint): string {
  return `msg_${endpoint.id.slice('whk_'.length)}_`;
}

/** Whether the event had its position before this endpoint's ids were sealed. */
function numbered(endpoint: IdEndpoint, position: string): boolean {
  return (
    endpoint.positionIdsThrough !== null && BigInt(position) <= BigInt(endpoint.positionIdsThrough)
  );
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

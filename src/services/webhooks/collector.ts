/**
 * Collecting: follows the event log by position with one cursor of its own and tells lanes
 * they have work. Only a lane that is idle (or new) when an event for it arrives is written
 * (made due); a busy lane is left alone, because whoever finishes its head looks for its next
 * event past its cursor. So an event costs no write per endpoint here, and nothing at all in
 * the outbox drain's transaction (the drain's NOTIFY at commit wakes this). One process
 * collects at a time; the dispatcher (delivery.job.ts) runs it when nothing is due and
 * advances the lanes it woke in the same transaction.
 */
import type { Tx } from '../../storage/db.ts';
import {
  collectorPosition,
  endpointsOf,
  eventsToCollect,
  setCollectorPosition,
  tryCollectLock,
  wakeLanes,
  type CollectableEvent,
  type EndpointFilter,
  type Lane,
} from '../../storage/webhook-lanes.store.ts';
import { WEBHOOK_EVENT_TYPES } from '../../contract/webhook-events.schema.ts';

const EVENT_TYPES = new Set<string>(WEBHOOK_EVENT_TYPES);

/**
 * Reads up to `limit` events past the collector's cursor and wakes their lanes. Returns how
 * many events it read (-1: another process is collecting) and the lanes made due, locked until
 * `tx` ends, for the caller to advance.
 */
export async function collectEvents(
  tx: Tx,
  limit: number,
): Promise<{ events: number; lanes: Lane[] }> {
  if (!(await tryCollectLock(tx))) return { events: -1, lanes: [] };
  const events = await eventsToCollect(tx, await collectorPosition(tx), limit);
  if (events.length === 0) return { events: 0, lanes: [] };
  await setCollectorPosition(tx, events.at(-1)!.position);
  const relevant = events.filter((e) => EVENT_TYPES.has(e.type));
  // Most workspaces have no webhook: their events cost one lookup per batch.
  const hooks =
    relevant.length === 0
      ? []
      : await endpointsOf(tx, [...new Set(relevant.map((e) => e.workspaceId))]);
  const lanes = new Map<string, Lane & { first: string; last: string }>();
  for (const event of relevant) {
    for (const hook of hooks) {
      if (!forEndpoint(hook, event)) continue;
      const flowKey = event.flowId ?? '';
      const key = `${hook.id}:${flowKey}`;
      const lane = lanes.get(key);
      if (lane) lane.last = event.position;
      else
        lanes.set(key, {
          webhookId: hook.id,
          flowKey,
          first: event.position,
          last: event.position,
        });
    }
  }
  return { events: events.length, lanes: await wakeLanes(tx, [...lanes.values()]) };
}

/**
 * The rule the lanes' own reads apply in SQL (webhook-lanes.store.ts): the workspace, a
 * subscribed type, after registration, not while switched off. Times here have milliseconds
 * where Postgres has microseconds: a millisecond's doubt wakes the lane (its read decides).
 */
function forEndpoint(hook: EndpointFilter, event: CollectableEvent): boolean {
  if (hook.workspaceId !== event.workspaceId || !hook.events.includes(event.type)) return false;
  const at = event.createdAt.getTime();
  if (at < hook.createdAt.getTime() - 1) return false;
  return !(
    hook.pausedFrom &&
    at > hook.pausedFrom.getTime() + 1 &&
    (!hook.pausedUntil || at < hook.pausedUntil.getTime() - 1)
  );
}

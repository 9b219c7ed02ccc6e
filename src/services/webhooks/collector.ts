/**
 * Collecting: turns domain events (the outbox, written in each command's own transaction) into
 * one delivery row per matching endpoint and event, and marks each event collected in the same
 * transaction, so each event reaches each endpoint exactly once as a delivery. This is not
 * done in the outbox drain: there, 20 endpoints made every event 20 inserts inside the
 * transaction the next commits wait behind (the drain only marks the events no enabled
 * endpoint wants, and wakes the collector for the others). One process collects at a time, in
 * id order (a flow's commits are serialised, so that is commit order). The dispatcher
 * (delivery.job.ts) runs it when nothing is due, and promotes the lanes it filled.
 */
import { newId } from '../../platform/ids.ts';
import type { Tx } from '../../storage/db.ts';
import type { OutboxRow } from '../../storage/jobs.store.ts';
import {
  enabledWebhooks, insertDeliveries, lockLanes, markCollected, tryCollectLock, uncollectedEvents, type Lane, type WebhookRow,
} from '../../storage/webhooks.store.ts';
import { WEBHOOK_EVENT_TYPES } from './events.ts';
import { MAX_ATTEMPTS } from './outcome.ts';

const EVENT_TYPES = new Set<string>(WEBHOOK_EVENT_TYPES);

type Endpoint = Pick<WebhookRow, 'id' | 'workspaceId' | 'events' | 'createdAt'>;

/**
 * For the outbox drain, in its transaction: events no enabled endpoint wants are marked
 * collected at once (most workspaces have no webhook: their commits then cost the collector
 * nothing). True when the collector has the rest to collect (committed already: it reads
 * them itself).
 */
export async function siftEvents(tx: Tx, events: readonly OutboxRow[]): Promise<boolean> {
  const { hooks } = await endpointsFor(tx, events);
  const unwanted = events.filter((e) => !EVENT_TYPES.has(e.type) || !hooks.some((h) => subscribed(h, e)));
  if (unwanted.length > 0) await markCollected(tx, unwanted.map((e) => e.id));
  return unwanted.length < events.length;
}

/**
 * Collects up to `limit` events into deliveries (one per enabled endpoint that wants the
 * event). Returns how many events it took (-1: another process is collecting) and the lanes
 * that got deliveries, locked until `tx` ends, for the caller to promote.
 */
export async function collectEvents(tx: Tx, limit: number): Promise<{ events: number; lanes: Lane[] }> {
  if (!(await tryCollectLock(tx))) return { events: -1, lanes: [] };
  const events = await uncollectedEvents(tx, limit);
  if (events.length === 0) return { events: 0, lanes: [] };
  await markCollected(tx, events.map((e) => e.id));
  const { relevant, hooks } = await endpointsFor(tx, events);
  const rows = [];
  for (const event of relevant) {
    const body = JSON.stringify({ type: event.type, timestamp: event.createdAt.toISOString(), workspaceId: event.workspaceId, data: event.data });
    for (const hook of hooks) {
      // An endpoint hears of events committed after it was registered.
      if (!subscribed(hook, event) || hook.createdAt > event.createdAt) continue;
      rows.push({
        id: newId('msg'), webhookId: hook.id, workspaceId: event.workspaceId, eventId: event.id, flowKey: event.flowId ?? '',
        type: event.type, body, attemptLimit: MAX_ATTEMPTS,
      });
    }
  }
  if (rows.length === 0) return { events: events.length, lanes: [] };
  const lanes = uniqueLanes(rows);
  await lockLanes(tx, lanes);
  await insertDeliveries(tx, rows);
  return { events: events.length, lanes };
}

export function uniqueLanes(rows: readonly Lane[]): Lane[] {
  const lanes = new Map<string, Lane>();
  for (const { webhookId, flowKey } of rows) lanes.set(`${webhookId}:${flowKey}`, { webhookId, flowKey });
  return [...lanes.values()];
}

/** The events of a type endpoints hear of, and the enabled endpoints of their workspaces (not looked up when there are none). */
async function endpointsFor(tx: Tx, events: readonly OutboxRow[]): Promise<{ relevant: OutboxRow[]; hooks: Endpoint[] }> {
  const relevant = events.filter((e) => EVENT_TYPES.has(e.type));
  const hooks = relevant.length === 0 ? [] : await enabledWebhooks(tx, [...new Set(relevant.map((e) => e.workspaceId))]);
  return { relevant, hooks };
}

function subscribed(hook: Endpoint, event: OutboxRow): boolean {
  return hook.workspaceId === event.workspaceId && hook.events.includes(event.type);
}

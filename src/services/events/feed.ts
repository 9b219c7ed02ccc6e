/**
 * The event feed: the event log read by cursor, as each credential may see it. An event is a
 * webhook payload (type, timestamp, workspaceId, data) with its id and cursor. A cursor is a
 * log position (given after commit by the outbox drain), so reading `after` a cursor never
 * skips an event that committed late, sealed for its audience (cursor.ts): clients see
 * neither positions nor ids of the log. List, then follow: no cursor answers the cursor of now.
 */
import type { Static } from '@sinclair/typebox';
import type { EventFeedQuery, EventPageSchema, EventSchema } from '../../contract/event.schema.ts';
import { DomainError, validationFailed } from '../../platform/errors.ts';
import type { Db } from '../../storage/db.ts';
import {
  droppedThrough,
  latestMarks,
  latestPosition,
  readEvents,
  sharedFlowIds,
  type EventAudience,
  type EventFilter,
  type LoggedEvent,
} from '../../storage/event-log.store.ts';
import type { Principal } from '../auth/principal.ts';
import { advance, type CursorKeys, type CursorSeal, type Marks } from './cursor.ts';
import {
  WEBHOOK_EVENT_TYPES,
  type WebhookEventType,
} from '../../contract/webhook-events.schema.ts';
import { webhookEventType } from './event-types.ts';

export type FeedEvent = Static<typeof EventSchema>;
type FeedPage = Static<typeof EventPageSchema>;
type FeedQuery = Static<typeof EventFeedQuery>;

/** What the feed waits on for a long poll: the process's live view of the log (hub.ts). */
export interface LogWatch {
  /** Resolves once an event after `position` that this audience and filter read is known here, after `ms`, or when the process stops. */
  waitBeyond(
    position: string,
    ms: number,
    audience: EventAudience,
    filter: EventFilter,
  ): Promise<void>;
}

export interface FeedContext {
  sql: Db;
  watch: LogWatch;
  /** Checks the request's credential again (throws its 401): a long poll answers only a credential still valid. */
  recheck: () => Promise<unknown>;
  cursors: CursorKeys;
}

/** Cursors and event ids as this principal is given them: its workspace's, and its person's for a person token. */
export function sealFor(keys: CursorKeys, principal: Principal): CursorSeal {
  return keys.for({ workspaceId: principal.workspaceId, userId: principal.userId });
}

/** An event as the feed gives it; `marks`: where its reader stands once given it (its cursor). */
export function feedEvent(row: LoggedEvent, seal: CursorSeal, marks: Marks): FeedEvent {
  return {
    id: seal.eventId(row.id),
    cursor: seal.cursor(marks),
    type: webhookEventType(row.type),
    timestamp: row.createdAt.toISOString(),
    workspaceId: row.workspaceId,
    data: row.data,
  };
}

/** The event types a `types` list names (all of them when absent); an unknown name is refused. */
export function parseTypes(
  text: string | undefined,
  where: 'query' | 'body' = 'query',
): WebhookEventType[] {
  if (text === undefined || text.trim() === '') return [...WEBHOOK_EVENT_TYPES];
  const names = [
    ...new Set(
      text
        .split(',')
        .map((t) => t.trim())
        .filter(Boolean),
    ),
  ];
  const unknown = names.filter((n) => !(WEBHOOK_EVENT_TYPES as readonly string[]).includes(n));
  if (unknown.length > 0) {
    throw validationFailed([
      {
        in: where,
        pointer: '/types',
        message: `unknown event type ${unknown.join(', ')}; known: ${WEBHOOK_EVENT_TYPES.join(', ')}`,
      },
    ]);
  }
  return names.map(webhookEventType);
}

/** Whose events a credential reads: its workspace's, and a person's flows shared from other workspaces (as shared now). */
export async function audienceOf(sql: Db, principal: Principal): Promise<EventAudience> {
  return {
    workspaceId: principal.workspaceId,
    sharedFlowIds: principal.userId
      ? await sharedFlowIds(sql, principal.userId, principal.workspaceId)
      : [],
  };
}

/** Whether a reader of this audience and filter is given an event of this workspace, flow and type. */
export function reads(
  audience: EventAudience,
  filter: EventFilter,
  workspaceId: string,
  flowId: string | null,
  type: string,
): boolean {
  const visible =
    workspaceId === audience.workspaceId ||
    (flowId !== null && audience.sharedFlowIds.includes(flowId));
  return (
    visible && filter.types.includes(type) && (filter.flowId === null || filter.flowId === flowId)
  );
}

/**
 * Where a cursor to read after stands. One this audience was not given (forged, another
 * workspace's or person's, garbage) is a bad request, the same on the feed and the streams;
 * one behind events of a workspace it reads that retention dropped is CURSOR_EXPIRED (410),
 * with the oldest cursor that loses nothing.
 */
export async function checkCursor(
  sql: Db,
  cursor: string,
  audience: EventAudience,
  seal: CursorSeal,
  where: 'query' | 'header' = 'query',
): Promise<Marks> {
  const pointer = where === 'query' ? '/after' : '/last-event-id';
  const marks = seal.marks(cursor);
  if (marks === null) {
    throw validationFailed([
      {
        in: where,
        pointer,
        message:
          "must be a cursor this API gave to this credential (an event's cursor, or a page's next)",
      },
    ]);
  }
  const dropped = await droppedThrough(sql, [audience.workspaceId, ...marks.others.keys()]);
  let oldest = marks;
  for (const [workspaceId, seq] of dropped) {
    const mark =
      workspaceId === audience.workspaceId ? marks.own : (marks.others.get(workspaceId) ?? null);
    if (mark !== null && BigInt(mark) < BigInt(seq))
      oldest = advance(oldest, audience.workspaceId, workspaceId, seq);
  }
  if (oldest !== marks) {
    const cursorOfOldest = seal.cursor(oldest);
    throw new DomainError(
      'CURSOR_EXPIRED',
      `Events after this cursor are past retention; start again from the cursor ${cursorOfOldest} (or with no cursor, from now)`,
      { oldest: cursorOfOldest },
    );
  }
  return marks;
}

/** Each event of `rows` as the feed gives it, its cursor where the reader stands once given it. */
export function feedEvents(
  rows: readonly LoggedEvent[],
  seal: CursorSeal,
  audience: EventAudience,
  marks: Marks,
): FeedEvent[] {
  return rows.map((row) => {
    marks = advance(marks, audience.workspaceId, row.workspaceId, row.seq);
    return feedEvent(row, seal, marks);
  });
}

/**
 * A page of events after `after` (none: the cursor of now). `next` is the last event's cursor,
 * or `after` itself when there was none: cursors move with the reader's own events only, so
 * they say nothing of other workspaces' activity.
 */
export async function readFeed(
  ctx: FeedContext,
  principal: Principal,
  query: FeedQuery,
): Promise<FeedPage> {
  const filter: EventFilter = { types: parseTypes(query.types), flowId: query.flowId ?? null };
  const audience = await audienceOf(ctx.sql, principal);
  const seal = sealFor(ctx.cursors, principal);
  if (query.after === undefined)
    return {
      items: [],
      next: seal.cursor(await latestMarks(ctx.sql, audience)),
      hasMore: false,
    };
  let latest = await latestPosition(ctx.sql);
  const marks = await checkCursor(ctx.sql, query.after, audience, seal, 'query');
  const deadline = Date.now() + query.wait * 1000;
  let reader = audience;
  let waited = false;
  for (;;) {
    // Bounded by the newest drain position seen first: every event up to it is committed and
    // numbered, so none can appear later behind the cursor this page hands out.
    const rows = await readEvents(ctx.sql, marks, query.size + 1, reader, filter, latest);
    const hasMore = rows.length > query.size;
    const items = feedEvents(rows.slice(0, query.size), seal, reader, marks);
    const left = deadline - Date.now();
    if (items.length > 0 || left <= 0) {
      // A credential revoked while the request waited gets its 401, not the events.
      if (waited) await ctx.recheck();
      return {
        items,
        next: items.length > 0 ? items[items.length - 1]!.cursor : query.after,
        hasMore,
      };
    }
    await ctx.watch.waitBeyond(latest, left, reader, filter);
    waited = true;
    const now = await latestPosition(ctx.sql);
    // Nothing new in the log: the wait ran out (or the process is stopping).
    if (now === latest) {
      await ctx.recheck();
      return { items: [], next: query.after, hasMore: false };
    }
    latest = now;
    // A person's shares as they are now: a revoked share reads nothing more.
    reader = await audienceOf(ctx.sql, principal);
  }
}

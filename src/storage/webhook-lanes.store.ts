/**
 * Webhook delivery state (sql/0017_webhook_lanes.sql): a lane per endpoint and flow keeps a
 * cursor into the event log (the last position it finished) and its head's attempts; a log row
 * per finished attempt; the collector's cursor. Events are read from the outbox by position;
 * nothing is written per event until an attempt finishes.
 *
 * Locking: every change that decides a lane has nothing more to send, and the collector's check
 * that a lane is idle, hold the lane's row lock (taken in a statement of its own, in key order),
 * and the reads that follow run on a snapshot taken after it. So a lane the collector saw busy
 * is advanced by a statement that sees the event the collector saw, and a lane set idle is seen
 * idle by the collector: no event is left behind an idle lane.
 */
import type postgres from 'postgres';
import { tryTransactionLock, type Db, type Sql, type Tx } from './db.ts';
import type { Page, PageRequest } from '../platform/paging.ts';

/** One collector at a time: it reads the log by position with one cursor. */
const COLLECT_LOCK = 7_046_231_908;
/**
 * One claim at a time, until its transaction ends: each counts the attempts in flight against the
 * caps, which a concurrent claim would not see yet. Taken last (no row lock is waited for after
 * it), and sent in the same round trip as the statement that counts (which starts once it holds).
 */
const CLAIM_LOCK = 7_046_231_909;

async function afterClaimLock<T>(tx: Tx, query: Promise<T>): Promise<T> {
  const [, result] = await Promise.all([tx`select pg_advisory_xact_lock(${CLAIM_LOCK})`, query]);
  return result;
}

export interface Lane {
  webhookId: string;
  flowKey: string;
}

/** An event as the collector reads it (no payload). */
export interface CollectableEvent {
  position: string;
  workspaceId: string;
  flowId: string | null;
  type: string;
  createdAt: Date;
}

/** What decides whether an event is for an endpoint. */
export interface EndpointFilter {
  id: string;
  workspaceId: string;
  events: string[];
  createdAt: Date;
  pausedFrom: Date | null;
  pausedUntil: Date | null;
}

/** An event of the endpoint's workspace and types, committed after it was registered and not while it was switched off (`o`: outbox, `h`: webhooks). */
function forEndpoint(sql: Db): postgres.Fragment {
  return sql`o.workspace_id = h.workspace_id and o.type = any(h.events) and o.created_at >= h.created_at
    and not (h.paused_from is not null and o.created_at >= h.paused_from and (h.paused_until is null or o.created_at < h.paused_until))`;
}

const keys = (lanes: readonly Lane[]) => ({
  w: lanes.map((l) => l.webhookId),
  f: lanes.map((l) => l.flowKey),
});

// ── collecting ───────────────────────────────────────────────────────────────────────

export function tryCollectLock(tx: Tx): Promise<boolean> {
  return tryTransactionLock(tx, COLLECT_LOCK);
}

export async function collectorPosition(tx: Db): Promise<string> {
  const [row] = await tx<{ position: string }[]>`select position::text from webhook_collector`;
  return row!.position;
}

export async function setCollectorPosition(tx: Tx, position: string): Promise<void> {
  await tx`update webhook_collector set position = ${position}::bigint`;
}

/** Events with a position after `after`, in position order. */
export function eventsToCollect(tx: Tx, after: string, limit: number): Promise<CollectableEvent[]> {
  // Ordered by the column, not the text it is returned as.
  return tx<
    CollectableEvent[]
  >`select o.position::text, o.workspace_id, o.flow_id, o.type, o.created_at from outbox o
    where o.position > ${after}::bigint order by o.position limit ${limit}`;
}

/** The endpoints of these workspaces, switched on or off (events from before a switch-off are still theirs, to skip). */
export function endpointsOf(tx: Db, workspaceIds: readonly string[]): Promise<EndpointFilter[]> {
  return tx<
    EndpointFilter[]
  >`select id, workspace_id, events, created_at, paused_from, paused_until from webhooks
    where workspace_id = any(${workspaceIds as string[]})`;
}

/** Serialises every change to these lanes until the transaction ends (in key order: no deadlock between holders of several). */
export async function lockLanes(tx: Tx, lanes: readonly Lane[]): Promise<void> {
  if (lanes.length === 0) return;
  const { w, f } = keys(lanes);
  await tx`select 1 from webhook_lanes l join unnest(${w}::text[], ${f}::text[]) as k(w, f) on l.webhook_id = k.w and l.flow_key = k.f
    order by l.webhook_id, l.flow_key for update of l`;
}

/**
 * Lanes that have events from `first` through `last` (positions): a new lane starts just
 * before its first event; an idle one whose cursor is behind `last` becomes due now. A busy
 * lane is left alone (no write): whoever finishes its head looks for its next event. Returns
 * the lanes made due, locked until `tx` ends.
 */
export async function wakeLanes(
  tx: Tx,
  lanes: readonly (Lane & { first: string; last: string })[],
): Promise<Lane[]> {
  if (lanes.length === 0) return [];
  const { w, f } = keys(lanes);
  const created = await tx<
    Lane[]
  >`insert into webhook_lanes (webhook_id, workspace_id, flow_key, done_through, state, next_attempt_at)
    select k.w, h.workspace_id, k.f, k.first - 1, 'queued', now()
    from unnest(${w}::text[], ${f}::text[], ${lanes.map((l) => l.first)}::bigint[]) as k(w, f, first)
    join webhooks h on h.id = k.w
    order by k.w, k.f
    on conflict do nothing returning webhook_id, flow_key`;
  await lockLanes(tx, lanes);
  const woken = await tx<
    Lane[]
  >`update webhook_lanes l set state = 'queued', next_attempt_at = now()
    from unnest(${w}::text[], ${f}::text[], ${lanes.map((l) => l.last)}::bigint[]) as k(w, f, last)
    where l.webhook_id = k.w and l.flow_key = k.f and l.state = 'idle' and l.done_through < k.last
    returning l.webhook_id, l.flow_key`;
  return [...created, ...woken];
}

// ── claiming ─────────────────────────────────────────────────────────────────────────

/**
 * Shares of the attempts in flight (counted from the lanes in `sending`, so across processes):
 * one workspace's slow endpoints hold at most its share, and all lanes of one endpoint count
 * as one.
 */
export interface Fairness {
  workspaceInFlight: number;
  endpointInFlight: number;
}

/**
 * Ranks the lanes of a `due_lanes` relation (webhook_id, flow_key, workspace_id, due_at, and
 * `tripped`: its endpoint's circuit has opened, so it gets one attempt at a time) into `fair`:
 * what fits under the caps beside the attempts in flight, numbered round-robin, first across
 * endpoints within each workspace, then across workspaces (each workspace's first lane, then
 * each one's second, …; among equals the lane waiting longest first), so that a workspace with
 * a large backlog does not go before one with a single event.
 */
function fairRanks(sql: Db, caps: Fairness): postgres.Fragment {
  return sql`busy as (
      select l.webhook_id, h.workspace_id, count(*)::int as n from webhook_lanes l join webhooks h on h.id = l.webhook_id
      where l.state = 'sending' and l.next_attempt_at > now() group by l.webhook_id, h.workspace_id
    ),
    by_endpoint as (
      select d.*, row_number() over (partition by d.webhook_id order by d.due_at, d.flow_key) as er,
        coalesce((select b.n from busy b where b.webhook_id = d.webhook_id), 0) as ep_busy,
        coalesce((select sum(b.n) from busy b where b.workspace_id = d.workspace_id), 0) as ws_busy
      from due_lanes d
    ),
    by_workspace as (
      select e.*, row_number() over (partition by e.workspace_id order by e.er, e.due_at, e.webhook_id, e.flow_key) as wr from by_endpoint e
      where e.ep_busy + e.er <= case when e.tripped then 1 else ${caps.endpointInFlight} end
    ),
    fair as (
      select w.webhook_id, w.flow_key, row_number() over (order by w.wr, w.due_at, w.webhook_id, w.flow_key) as n from by_workspace w
      where w.ws_busy + w.wr <= ${caps.workspaceInFlight}
    )`;
}

/** An attempt taken for one event in its lane: what the sender needs. */
export interface ClaimedAttempt {
  webhookId: string;
  flowKey: string;
  position: string;
  /** This attempt's number. */
  attempts: number;
  /** A manual retry (its one more attempt). */
  manual: boolean;
  /** The event, unless retention dropped it meanwhile. */
  event: {
    id: string;
    workspaceId: string;
    type: string;
    data: Record<string, unknown>;
    createdAt: Date;
  } | null;
}

export interface Advanced {
  claimed: ClaimedAttempt[];
  /** Lanes left waiting with something to send, and when it is due. */
  queued: { nextAttemptAt: Date; due: boolean }[];
}

/**
 * Moves these lanes (locked by the caller, or picked with a lock) on: each one's next attempt
 * is its oldest manual retry, else its head, else the next event past its cursor (none: the
 * lane goes idle). Up to `claim` of the due ones are claimed (`sending`, with a lease that is
 * also its next_attempt_at: a claim whose process died is due again once it lapses).
 */
export async function advanceLanes(
  tx: Tx,
  lanes: readonly Lane[],
  claim: number,
  leaseSeconds: number,
  caps: Fairness,
): Promise<Advanced> {
  if (lanes.length === 0) return { claimed: [], queued: [] };
  const { w, f } = keys(lanes);
  const advance = tx<
    {
      webhookId: string;
      flowKey: string;
      position: string | null;
      manual: boolean;
      take: boolean;
      attempts: number;
      nextAttemptAt: Date | null;
      due: boolean;
    }[]
  >`
    with cand as (
      select l.webhook_id, l.flow_key, h.workspace_id, coalesce(l.retry_positions[1], l.head_position, nf.position, nw.position) as position,
        l.retry_positions[1] is not null as manual, h.circuit_open_until is not null as tripped,
        -- An open circuit defers the endpoint's attempts (not failed) until its cool-down ends.
        greatest(case when l.retry_positions[1] is null and l.head_position is not null then coalesce(l.head_due_at, now()) else now() end,
          h.circuit_open_until) as due_at
      from webhook_lanes l
      join unnest(${w}::text[], ${f}::text[]) as k(w, f) on l.webhook_id = k.w and l.flow_key = k.f
      join webhooks h on h.id = l.webhook_id
      left join lateral (
        select o.position from outbox o
        where l.flow_key <> '' and l.head_position is null and cardinality(l.retry_positions) = 0
          and o.flow_id = l.flow_key and o.position > l.done_through and ${forEndpoint(tx)}
        order by o.position limit 1
      ) nf on true
      left join lateral (
        select o.position from outbox o
        where l.flow_key = '' and l.head_position is null and cardinality(l.retry_positions) = 0
          and o.workspace_id = h.workspace_id and o.flow_id is null and o.position > l.done_through and ${forEndpoint(tx)}
        order by o.position limit 1
      ) nw on true
      where l.state = 'queued' or (l.state = 'sending' and l.next_attempt_at <= now())
    ),
    ranked as (
      select c.*, c.position is not null and c.due_at <= now() as due from cand c
    ),
    due_lanes as (select * from ranked where due),
    ${fairRanks(tx, caps)},
    -- Due lanes past the caps stay queued and due: the next claim after an attempt ends takes them.
    taken as (
      select r.*, coalesce(f.n <= ${claim}, false) as take from ranked r left join fair f on f.webhook_id = r.webhook_id and f.flow_key = r.flow_key
    )
    update webhook_lanes l set
      state = case when t.position is null then 'idle' when t.take then 'sending' else 'queued' end,
      head_position = case when t.manual then l.head_position else t.position end,
      attempts = case when t.take and not t.manual then l.attempts + 1 else l.attempts end,
      head_due_at = case when t.take and not t.manual then null else l.head_due_at end,
      sending_position = case when t.take then t.position end,
      next_attempt_at = case when t.position is null then null when t.take then now() + make_interval(secs => ${leaseSeconds}) else t.due_at end
    from taken t where l.webhook_id = t.webhook_id and l.flow_key = t.flow_key
    returning l.webhook_id, l.flow_key, t.position::text, t.manual, t.take, l.attempts, l.next_attempt_at, t.due`;
  const rows = claim > 0 ? await afterClaimLock(tx, advance) : await advance;
  const taken = rows.filter((r) => r.take);
  const queued = rows
    .filter((r) => !r.take && r.position !== null)
    .map((r) => ({ nextAttemptAt: r.nextAttemptAt!, due: r.due }));
  return { claimed: await claimedAttempts(tx, taken), queued };
}

/** The events of claimed attempts, and a manual retry's attempt number (one past its last). */
async function claimedAttempts(
  tx: Tx,
  taken: readonly {
    webhookId: string;
    flowKey: string;
    position: string | null;
    manual: boolean;
    attempts: number;
  }[],
): Promise<ClaimedAttempt[]> {
  if (taken.length === 0) return [];
  const positions = taken.map((t) => t.position!);
  const events = await tx<
    {
      position: string;
      id: string;
      workspaceId: string;
      type: string;
      data: Record<string, unknown>;
      createdAt: Date;
    }[]
  >`
    select position::text, id, workspace_id, type, data, created_at from outbox where position = any(${positions}::bigint[])`;
  const byPosition = new Map(events.map(({ position, ...event }) => [position, event]));
  const manual = taken.filter((t) => t.manual);
  const previous = new Map<string, number>();
  if (manual.length > 0) {
    const rows = await tx<
      { webhookId: string; position: string; n: number }[]
    >`select g.webhook_id, g.position::text, max(g.attempt)::int as n from webhook_log g
      join unnest(${manual.map((m) => m.webhookId)}::text[], ${manual.map((m) => m.position!)}::bigint[]) as k(w, p) on g.webhook_id = k.w and g.position = k.p
      group by g.webhook_id, g.position`;
    for (const r of rows) previous.set(`${r.webhookId}:${r.position}`, r.n);
  }
  return taken.map((t) => ({
    webhookId: t.webhookId,
    flowKey: t.flowKey,
    position: t.position!,
    manual: t.manual,
    attempts: t.manual ? (previous.get(`${t.webhookId}:${t.position}`) ?? 0) + 1 : t.attempts,
    event: byPosition.get(t.position!) ?? null,
  }));
}

/**
 * Claims up to `limit` due lanes (queued and due, or claims whose lease lapsed) for this
 * process, fairly under the caps (`fairRanks`); lanes another is handling are skipped, not
 * waited for, and so are endpoints whose circuit is open. `heldBack`: due lanes were left for
 * the caps, to claim again once an attempt ends.
 */
export function claimDue(
  sql: Sql,
  limit: number,
  leaseSeconds: number,
  caps: Fairness,
): Promise<Advanced & { heldBack: boolean }> {
  return sql.begin(async (tx) => {
    const picked = await afterClaimLock(
      tx,
      tx<(Lane & { heldBack: boolean })[]>`
      with due_lanes as (
        select l.webhook_id, l.flow_key, h.workspace_id, l.next_attempt_at as due_at, h.circuit_open_until is not null as tripped
        from webhook_lanes l join webhooks h on h.id = l.webhook_id
        where l.state <> 'idle' and l.next_attempt_at <= now() and (h.circuit_open_until is null or h.circuit_open_until <= now())
      ),
      ${fairRanks(tx, caps)}
      select l.webhook_id, l.flow_key, (select count(*) from due_lanes) > (select count(*) from fair) as held_back
      from webhook_lanes l join fair c on c.webhook_id = l.webhook_id and c.flow_key = l.flow_key
      where l.state <> 'idle' and l.next_attempt_at <= now()
      order by c.n limit ${limit} for update of l skip locked`,
    );
    // Nothing claimed: due lanes may all be over the caps (or none due); a claim after the next attempt ends tells.
    const heldBack = picked.length === 0 || picked[0]!.heldBack;
    return { ...(await advanceLanes(tx, picked, limit, leaseSeconds, caps)), heldBack };
  });
}

// ── outcomes ─────────────────────────────────────────────────────────────────────────

/** How an attempt ended: `retry` keeps the head for another try after `delaySeconds`. */
export interface LaneOutcome {
  webhookId: string;
  flowKey: string;
  position: string;
  manual: boolean;
  status: 'delivered' | 'failed' | 'skipped' | 'retry';
  delaySeconds: number;
}

export interface LogRow {
  webhookId: string;
  position: string;
  flowKey: string;
  type: string;
  eventCreatedAt: Date;
  attempt: number;
  manual: boolean;
  /** False for a skip: nothing was sent. */
  sent: boolean;
  outcome: LaneOutcome['status'];
  startedAt: Date | null;
  durationMs: number | null;
  statusCode: number | null;
  error: string | null;
  retryAfter: number | null;
}

/** Appends finished attempts to the log (an endpoint deleted meanwhile gets none). */
export async function insertLog(tx: Tx, rows: readonly LogRow[]): Promise<void> {
  if (rows.length === 0) return;
  const column = <K extends keyof LogRow>(key: K) => rows.map((r) => r[key]);
  // Dates go as text: the array is typed by its cast.
  const time = (key: 'eventCreatedAt' | 'startedAt') =>
    rows.map((r) => r[key]?.toISOString() ?? null);
  // Booleans go as 0 and 1: postgres.js mangles boolean arrays.
  const flags = (key: 'manual' | 'sent') => rows.map((r) => (r[key] ? 1 : 0));
  await tx`insert into webhook_log (webhook_id, workspace_id, position, flow_key, type, event_created_at, attempt, manual, sent, outcome,
      started_at, duration_ms, status_code, error, retry_after)
    select u.webhook_id, h.workspace_id, u.position, u.flow_key, u.type, u.event_created_at, u.attempt, u.manual = 1, u.sent = 1, u.outcome,
      u.started_at, u.duration_ms, u.status_code, u.error, u.retry_after from unnest(${column('webhookId')}::text[], ${column('position')}::bigint[], ${column('flowKey')}::text[], ${column('type')}::text[],
      ${time('eventCreatedAt') as string[]}::timestamptz[], ${column('attempt')}::int[], ${flags('manual')}::int[], ${flags('sent')}::int[],
      ${column('outcome')}::text[], ${time('startedAt') as string[]}::timestamptz[], ${column('durationMs') as number[]}::int[],
      ${column('statusCode') as number[]}::int[], ${column('error') as string[]}::text[], ${column('retryAfter') as number[]}::int[])
      as u(webhook_id, position, flow_key, type, event_created_at, attempt, manual, sent, outcome, started_at, duration_ms, status_code, error, retry_after)
    join webhooks h on h.id = u.webhook_id`;
}

/**
 * Writes the lanes' side of a batch of outcomes (lanes locked by the caller): a finished head
 * moves the cursor past its event, a retry keeps the head until its next try, a manual retry
 * leaves its list. Each lane is then queued for `advanceLanes`. Returns when each retry is due.
 */
export async function finishAttempts(tx: Tx, outcomes: readonly LaneOutcome[]): Promise<Date[]> {
  if (outcomes.length === 0) return [];
  const rows = await tx<{ retryAt: Date | null }[]>`update webhook_lanes l set
      retry_positions = case when m.manual then array_remove(l.retry_positions, u.position) else l.retry_positions end,
      done_through = case when m.manual or u.status = 'retry' then l.done_through else greatest(l.done_through, u.position) end,
      head_position = case when m.manual or u.status = 'retry' then l.head_position end,
      attempts = case when m.manual or u.status = 'retry' then l.attempts else 0 end,
      head_due_at = case when m.manual then l.head_due_at when u.status = 'retry' then now() + make_interval(secs => u.delay) end,
      sending_position = null,
      state = 'queued',
      -- A manual retry waiting goes now; otherwise a retried head waits out its delay.
      next_attempt_at = case when not m.manual and u.status = 'retry' and cardinality(l.retry_positions) = 0 then now() + make_interval(secs => u.delay) else now() end
    from unnest(${outcomes.map((o) => o.webhookId)}::text[], ${outcomes.map((o) => o.flowKey)}::text[], ${outcomes.map((o) => o.position)}::bigint[],
      ${outcomes.map((o) => (o.manual ? 1 : 0))}::int[], ${outcomes.map((o) => o.status)}::text[], ${outcomes.map((o) => o.delaySeconds)}::float8[])
      as u(w, f, position, manual_flag, status, delay)
      cross join lateral (select u.manual_flag = 1 as manual) m
    -- A claim taken over after its lease lapsed is the newer one's to finish.
    where l.webhook_id = u.w and l.flow_key = u.f and l.sending_position = u.position
    returning case when not m.manual and u.status = 'retry' then l.head_due_at end as retry_at`;
  return rows.flatMap((r) => (r.retryAt ? [r.retryAt] : []));
}

/**
 * The queued lanes of endpoints whose circuit just opened wait until it half-opens (lanes
 * another transaction holds are left to the claim, which skips open circuits anyway).
 */
export async function deferLanes(tx: Tx, webhookIds: readonly string[]): Promise<void> {
  if (webhookIds.length === 0) return;
  await tx`update webhook_lanes l set next_attempt_at = h.circuit_open_until from webhooks h, (
      select webhook_id, flow_key from webhook_lanes where webhook_id = any(${webhookIds as string[]}) and state = 'queued'
      order by webhook_id, flow_key for update skip locked
    ) k
    where l.webhook_id = k.webhook_id and l.flow_key = k.flow_key and h.id = l.webhook_id and l.next_attempt_at < h.circuit_open_until`;
}

/**
 * Locks one endpoint's lane, as `lockLanes` does, for the webhooks API: `workspaceId` is the
 * endpoint's, so the lock is taken on that workspace's shard (the dispatcher's `lockLanes`
 * locks lanes of many workspaces at once).
 */
export async function lockEndpointLane(tx: Tx, workspaceId: string, lane: Lane): Promise<void> {
  await tx`select 1 from webhook_lanes
    where webhook_id = ${lane.webhookId} and flow_key = ${lane.flowKey} and workspace_id = ${workspaceId} for update`;
}

/** A manual retry of a finished event: one more attempt, before the lane's head (now, or once the attempt in flight ends); `workspaceId` is the endpoint's. */
export async function addManualRetry(
  tx: Tx,
  workspaceId: string,
  lane: Lane,
  position: string,
): Promise<void> {
  await tx`update webhook_lanes set
      retry_positions = (select array_agg(distinct p order by p) from unnest(array_append(retry_positions, ${position}::bigint)) as p),
      state = case when state = 'sending' then state else 'queued' end,
      next_attempt_at = case when state = 'sending' then next_attempt_at else now() end
    where webhook_id = ${lane.webhookId} and flow_key = ${lane.flowKey} and workspace_id = ${workspaceId}`;
}

// ── the delivery log ─────────────────────────────────────────────────────────────────

/** `queued`: the lane's next to go (with its time); `pending`: behind it. */
export type DeliveryStatus = 'pending' | 'queued' | 'sending' | 'delivered' | 'failed' | 'skipped';

export interface DeliveryRow {
  position: string;
  flowKey: string;
  type: string;
  status: DeliveryStatus;
  attempts: number;
  nextAttemptAt: Date | null;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: Date;
  finishedAt: Date | null;
  /** The event, unless retention dropped it. */
  event: {
    workspaceId: string;
    type: string;
    data: Record<string, unknown>;
    createdAt: Date;
  } | null;
}

/**
 * An endpoint's deliveries, newest first: every event with a log row, and every event still to
 * go (past its lane's cursor, or past the collector's where it has no lane yet), its state
 * read from its lane. `position` narrows it to one event.
 *
 * `workspaceId` is the endpoint's: every tenant table is read by it (the endpoint's events,
 * lanes and log are all its workspace's), so the statement routes to that workspace's shard;
 * `webhook_collector` is the coordinator's one row, read alongside.
 */
export async function pageDeliveries(
  sql: Db,
  workspaceId: string,
  webhookId: string,
  page: PageRequest,
  position: string | null = null,
): Promise<Page<DeliveryRow>> {
  const one = (column: postgres.Fragment) =>
    position === null ? sql`` : sql`and ${column} = ${position}::bigint`;
  const rows = await sql<
    (Omit<DeliveryRow, 'event'> & {
      data: Record<string, unknown> | null;
      workspaceId: string | null;
      eventType: string | null;
      eventCreatedAt: Date | null;
      total: number;
    })[]
  >`
    with h as (select * from webhooks where id = ${webhookId} and workspace_id = ${workspaceId}),
    lanes as (select * from webhook_lanes where webhook_id = ${webhookId} and workspace_id = ${workspaceId}),
    cur as (select position from webhook_collector),
    logged as (
      select position, max(attempt) as attempts, max(id) as last_id from webhook_log
      where webhook_id = ${webhookId} and workspace_id = ${workspaceId} ${one(sql`position`)} group by position
    ),
    open as (
      select o.position, coalesce(o.flow_id, '') as flow_key, o.type, o.created_at from outbox o, h
      -- An idle lane has nothing past its cursor that the collector has read: only busy lanes reach back further.
      where o.workspace_id = ${workspaceId}
        and o.position > (select least(min(l.done_through), min(c.position)) from cur c left join lanes l on l.state <> 'idle') ${one(sql`o.position`)}
        and ${forEndpoint(sql)}
        and o.position > coalesce((select l.done_through from lanes l where l.flow_key = coalesce(o.flow_id, '')), (select position from cur))
    ),
    items as (
      select coalesce(op.position, lg.position) as position, op.position is not null as behind, op.flow_key as open_flow_key, op.type as open_type,
        op.created_at as open_created_at, lg.attempts as logged_attempts, lg.last_id
      from open op full join logged lg on lg.position = op.position
    ),
    described as (
      select i.position, coalesce(i.open_flow_key, g.flow_key) as flow_key, coalesce(i.open_type, g.type) as type,
        coalesce(i.open_created_at, g.event_created_at) as created_at, coalesce(i.logged_attempts, 0) as logged_attempts,
        g.outcome, g.status_code, g.error, g.finished_at, i.behind, l.state as lane_state, l.head_position, l.attempts as lane_attempts,
        l.head_due_at, l.next_attempt_at as lane_next, l.sending_position, l.retry_positions
      -- The log row and the event are read in subqueries: their workspace in WHERE, where it holds for every row (in an outer join's ON it would not pin them to one shard).
      from items i left join lateral (
        select flow_key, type, event_created_at, outcome, status_code, error, finished_at from webhook_log
        where id = i.last_id and workspace_id = ${workspaceId}
      ) g on true
        left join lanes l on l.flow_key = coalesce(i.open_flow_key, g.flow_key)
    ),
    stated as (
      select d.*,
        d.behind or d.position = any(coalesce(d.retry_positions, '{}')) as unfinished,
        d.lane_state = 'sending' and d.sending_position = d.position as in_flight
      from described d
    )
    select s.position::text, s.flow_key, s.type,
      case when not s.unfinished then s.outcome
        when s.in_flight then 'sending'
        when s.lane_state = 'queued' and (s.position = s.head_position or s.position = s.retry_positions[1]) then 'queued'
        else 'pending' end as status,
      case when s.unfinished and s.behind and s.position = s.head_position then s.lane_attempts
        when s.unfinished and s.in_flight then s.logged_attempts + 1
        else s.logged_attempts end::int as attempts,
      case when s.unfinished and not s.in_flight and s.lane_state = 'queued' and s.position = s.retry_positions[1] then s.lane_next
        when s.unfinished and not s.in_flight and s.lane_state = 'queued' and s.position = s.head_position then coalesce(s.head_due_at, s.lane_next) end as next_attempt_at,
      s.status_code as last_status_code, s.error as last_error, s.created_at,
      case when not s.unfinished then s.finished_at end as finished_at,
      o.data, o.workspace_id, o.type as event_type, o.created_at as event_created_at,
      count(*) over ()::int as total
    from stated s left join lateral (
      select data, workspace_id, type, created_at from outbox where position = s.position and workspace_id = ${workspaceId}
    ) o on true
    order by s.position desc limit ${page.size} offset ${page.from}`;
  if (rows.length === 0) {
    if (page.from === 0) return { total: 0, items: [] };
    return {
      total: (
        await pageDeliveries(sql, workspaceId, webhookId, { size: 1_000_000, from: 0 }, position)
      ).total,
      items: [],
    };
  }
  return {
    total: rows[0]!.total,
    items: rows.map(({ total: _total, data, workspaceId, eventType, eventCreatedAt, ...row }) => ({
      ...row,
      event:
        data && workspaceId && eventType && eventCreatedAt
          ? { data, workspaceId, type: eventType, createdAt: eventCreatedAt }
          : null,
    })),
  };
}

export interface AttemptRow {
  position: string;
  attempt: number;
  manual: boolean;
  startedAt: Date;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
  retryAfter: number | null;
}

/** The latest attempts (sent ones) of these deliveries, oldest first per delivery (`workspaceId`: the endpoint's). */
export function attemptsOf(
  sql: Db,
  workspaceId: string,
  webhookId: string,
  positions: readonly string[],
  perDelivery: number,
): Promise<AttemptRow[]> {
  return sql<
    AttemptRow[]
  >`select position::text, attempt, manual, started_at, duration_ms, status_code, error, retry_after from (
      select *, row_number() over (partition by position order by id desc) as n from webhook_log
      where webhook_id = ${webhookId} and workspace_id = ${workspaceId} and position = any(${positions as string[]}::bigint[]) and sent
    ) a where n <= ${perDelivery} order by a.position, a.id`;
}

// ── upkeep ───────────────────────────────────────────────────────────────────────────

/** For the sweep: claims whose lease lapsed (their process died) and queued lanes due now. */
export async function dueCounts(sql: Db): Promise<{ lapsed: number; due: number }> {
  const [row] = await sql<{ lapsed: number; due: number }[]>`select
      count(*) filter (where state = 'sending')::int as lapsed, count(*) filter (where state = 'queued')::int as due
    from webhook_lanes where state <> 'idle' and next_attempt_at <= now()`;
  return row!;
}

/** Delivery work committed: wakes the webhook workers of every process (NOTIFY is sent at commit). */
export const WEBHOOKS_CHANNEL = 'flowplan_webhooks';

export async function announceWebhookWork(tx: Db): Promise<void> {
  await tx`select pg_notify(${WEBHOOKS_CHANNEL}, '')`;
}

export interface WebhookBacklog {
  /** Events the collector has not read yet. */
  collecting: number;
  /** Lanes waiting for a later try (a failed head's back-off). */
  pending: number;
  /** Lanes due now. */
  queued: number;
  /** Lanes with an attempt in flight. */
  sending: number;
  failedLastDay: number;
}

/** Events not collected yet, lanes with work by state, and deliveries given up in the last day. */
export async function webhookBacklog(sql: Db): Promise<WebhookBacklog> {
  const [row] = await sql<WebhookBacklog[]>`select
      (select count(*)::int from outbox where position > (select position from webhook_collector)) as collecting,
      count(*) filter (where state = 'queued' and next_attempt_at > now())::int as pending,
      count(*) filter (where state = 'queued' and next_attempt_at <= now())::int as queued,
      count(*) filter (where state = 'sending')::int as sending,
      (select count(*)::int from webhook_log where outcome = 'failed' and finished_at > now() - interval '1 day') as failed_last_day
    from webhook_lanes where state <> 'idle'`;
  return row!;
}

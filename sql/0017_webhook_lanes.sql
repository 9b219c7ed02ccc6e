-- Webhooks become cursor consumers of the event log (DESIGN: Events; issue 20, item 5). A
-- delivery row per endpoint and event, updated three times, cost each commit's events 20
-- inserts and 60 updates with 20 endpoints. Now each lane (one endpoint and one flow, flow_key
-- '' without a flow) keeps a cursor, the position of the last event it finished, and its
-- head's attempts; the events themselves are read from the outbox by position. Nothing is
-- written per event until an attempt finishes: then one log row.

create table webhook_lanes (
  webhook_id       text not null references webhooks (id) on delete cascade,
  flow_key         text not null,
  -- The last position finished in order (delivered, given up or skipped).
  done_through     bigint not null,
  -- idle: nothing known to send; queued: due at next_attempt_at; sending: claimed, the lease
  -- ending at next_attempt_at (a claim whose process died is then due again).
  state            text not null check (state in ('idle', 'queued', 'sending')),
  next_attempt_at  timestamptz,
  -- The event being attempted in order, once known; its attempts so far (claims, a lost one
  -- included) and when its next try is due after a failure.
  head_position    bigint,
  attempts         integer not null default 0,
  head_due_at      timestamptz,
  -- Manual retries of finished events waiting for their one more attempt, oldest first: they
  -- go before the head, as the earliest unfinished events of the lane.
  retry_positions  bigint[] not null default '{}',
  -- What the current claim sends (the head or a manual retry).
  sending_position bigint,
  primary key (webhook_id, flow_key)
);
create index webhook_lanes_due on webhook_lanes (next_attempt_at) where state <> 'idle';

-- One row per finished attempt, and one per skip (nothing sent: `sent` false). The last row of
-- an event holds its outcome: retry (tried again later), or its final delivered, failed or
-- skipped. The event's own fields are kept so the log outlives the event's partition.
create table webhook_log (
  id               bigserial primary key,
  webhook_id       text not null references webhooks (id) on delete cascade,
  -- The event's position: with the endpoint, the delivery's identity (its id derives from both).
  position         bigint not null,
  flow_key         text not null,
  type             text not null,
  event_created_at timestamptz not null,
  attempt          integer not null,
  manual           boolean not null default false,
  sent             boolean not null default true,
  outcome          text not null check (outcome in ('retry', 'delivered', 'failed', 'skipped')),
  started_at       timestamptz,
  duration_ms      integer,
  status_code      integer,
  error            text,
  -- The delay the receiver asked for with Retry-After, in seconds.
  retry_after      integer,
  finished_at      timestamptz not null default now()
);
create index webhook_log_delivery on webhook_log (webhook_id, position, id);
create index webhook_log_failed on webhook_log (finished_at) where outcome = 'failed';

-- The collector reads the log by position with this one cursor and wakes idle lanes.
create table webhook_collector (
  only_row boolean primary key default true check (only_row),
  position bigint not null
);

-- Events committed while an endpoint was switched off are not for it (they were never queued
-- before either); those from before stay, skipped if attempted while it is off.
alter table webhooks add column paused_from timestamptz, add column paused_until timestamptz;

-- What the old scheme had not collected yet is collected again from here.
insert into webhook_collector (position) values (coalesce(
  (select min(position) - 1 from outbox where webhooks_at is null and position is not null),
  (select max(position) from outbox),
  (select max(dropped_through) from event_log_dropped), 0));

-- The history becomes the log (delivery ids were random then: they now derive from the
-- endpoint and the event, so an old delivery is listed under its new id).
insert into webhook_log (webhook_id, position, flow_key, type, event_created_at, attempt, manual, sent, outcome,
  started_at, duration_ms, status_code, error, retry_after, finished_at)
select d.webhook_id, o.position, d.flow_key, d.type, o.created_at, a.attempt, a.manual, true,
  case when a.attempt = max(a.attempt) over (partition by d.id) and d.status in ('delivered', 'failed', 'skipped') then d.status else 'retry' end,
  a.started_at, a.duration_ms, a.status_code, a.error, a.retry_after, coalesce(d.finished_at, a.started_at)
from webhook_deliveries d join webhook_attempts a on a.delivery_id = d.id join outbox o on o.id = d.event_id and o.position is not null
order by a.id;
insert into webhook_log (webhook_id, position, flow_key, type, event_created_at, attempt, sent, outcome, error, finished_at)
select d.webhook_id, o.position, d.flow_key, d.type, o.created_at, d.attempts, false, 'skipped', d.last_error, d.finished_at
from webhook_deliveries d join outbox o on o.id = d.event_id and o.position is not null
where d.status = 'skipped' and not exists (select 1 from webhook_attempts a where a.delivery_id = d.id);

-- Lanes: unfinished deliveries are found again past each lane's cursor (sent again under their
-- new id: at least once); reopened ones wait as manual retries.
insert into webhook_lanes (webhook_id, flow_key, done_through, state, next_attempt_at, retry_positions)
select d.webhook_id, d.flow_key,
  coalesce(min(o.position) filter (where d.status in ('pending', 'queued', 'sending') and not d.manual) - 1, max(o.position)),
  case when bool_or(d.status in ('pending', 'queued', 'sending')) then 'queued' else 'idle' end,
  case when bool_or(d.status in ('pending', 'queued', 'sending')) then now() end,
  coalesce(array_agg(o.position order by o.position) filter (where d.status in ('pending', 'queued', 'sending') and d.manual), '{}')
from webhook_deliveries d join outbox o on o.id = d.event_id and o.position is not null
group by d.webhook_id, d.flow_key;

drop table webhook_attempts;
drop table webhook_deliveries;
drop index outbox_webhooks_due;
alter table outbox drop column webhooks_at;

-- The outbox becomes the event log (DESIGN: Events) that the feed, the streams and webhook
-- lanes read by cursor. An id is taken at insert, so ids are not in commit order across
-- concurrent transactions; a `position` is given by the drain after commit, under its lock,
-- in the order it sees events committed: a reader that has seen position N has seen every
-- event committed before N was given, so a cursor never skips one that committed late.
-- Kept EVENT_RETENTION_DAYS in partitions of one UTC day each, dropped whole (never a
-- scanning delete); src/storage/event-log.store.ts creates them ahead and drops them.
alter table outbox rename to outbox_unpartitioned;
alter sequence outbox_id_seq owned by none;

create table outbox (
  id             bigint not null default nextval('outbox_id_seq'),
  workspace_id   text not null references workspaces (id),
  flow_id        text,
  type           text not null,
  data           jsonb not null,
  actor_id       text,
  created_at     timestamptz not null default now(),
  processed_at   timestamptz,
  drain_attempts integer not null default 0,
  drain_error    text,
  webhooks_at    timestamptz,
  -- The feed position: null until drained.
  position       bigint,
  primary key (id, created_at)
) partition by range (created_at);

do $$
declare
  day date := least(coalesce((select min(created_at at time zone 'UTC')::date from outbox_unpartitioned), current_date), (now() at time zone 'UTC')::date);
begin
  while day <= (now() at time zone 'UTC')::date + 7 loop
    execute format('create table %I partition of outbox for values from (%L) to (%L)',
      'outbox_' || to_char(day, 'YYYYMMDD'), day::text || ' 00:00:00+00', (day + 1)::text || ' 00:00:00+00');
    day := day + 1;
  end loop;
end $$;

-- What was drained before positions existed gets them in id order (no reader has seen any).
insert into outbox (id, workspace_id, flow_id, type, data, actor_id, created_at, processed_at, drain_attempts, drain_error, webhooks_at, position)
select id, workspace_id, flow_id, type, data, actor_id, created_at, processed_at, drain_attempts, drain_error, webhooks_at,
  case when processed_at is not null then row_number() over (partition by processed_at is not null order by id) end
from outbox_unpartitioned;

drop table outbox_unpartitioned;
alter sequence outbox_id_seq owned by outbox.id;

create index outbox_unprocessed on outbox (id) where processed_at is null;
create index outbox_webhooks_due on outbox (id) where webhooks_at is null;
create index outbox_position on outbox (position) where position is not null;
-- The feed reads one workspace's events, or a guest's shared flows', by position.
create index outbox_workspace_position on outbox (workspace_id, position) where position is not null;
create index outbox_flow_position on outbox (flow_id, position) where position is not null;

-- Per workspace, the last position of its events that retention dropped: a cursor of that
-- workspace before it may have lost events (410). Per workspace, so that a quiet workspace's
-- cursor stays good however far others' events move on, and no cursor tells of others' activity.
create table event_log_dropped (
  workspace_id    text primary key,
  dropped_through bigint not null
);

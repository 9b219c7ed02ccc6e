-- Issue 36, item 3: an event's position in the feed is numbered per workspace (`seq`), so that
-- a cluster's drains, one per shard, can number events with no coordination between them: a
-- workspace lives on one shard. `position` stays the drain's own order, which the processes'
-- live fan-out and the webhook collector follow (one drain per installation today; on a cluster
-- one per shard, each with its own order). Clients' cursors hold `seq` only.
--
-- Every cursor handed out so far holds a position of the one installation-wide order. Events
-- drained before this keep it as their `seq` (0030), and each workspace numbers on from the
-- largest position given, so an old cursor reads on exactly where it stood. The outbox drain of
-- an older process gives no `seq`: stop (or set JOBS=0 on) older processes before the first new
-- one starts (docs/operations.md, Upgrades).
--
-- Old events get their `seq` from 0030, in batches; the indexes are made here, while they hold
-- nothing (each build still reads the log once under a lock that holds back inserts).
alter table outbox add column seq bigint;
create index outbox_workspace_seq on outbox (workspace_id, seq) where seq is not null;
create index outbox_flow_seq on outbox (flow_id, seq) where seq is not null;
-- 0030's progress (it fills from the newest position down): dropped once it is done.
create index outbox_seq_filled on outbox (seq) where seq is not null;

-- The last seq given in each workspace, taken by the drain with its batch's update (the row is
-- locked until the drain commits, so seqs are given in the order they are committed).
create table event_sequences (
  workspace_id text primary key,
  last         bigint not null
);
insert into event_sequences (workspace_id, last)
select w.id, greatest(
  (select max(position) from outbox where position is not null),
  (select max(dropped_through) from event_log_dropped), 0)
from workspaces w;

-- Retention kept, per workspace, the last position dropped; it now keeps the last seq dropped
-- (a cursor behind it has lost events) and, apart, the last drain position dropped (where the
-- drain's order goes on from when the whole log was dropped).
alter table event_log_dropped add column dropped_position bigint;
update event_log_dropped set dropped_position = dropped_through;
alter table event_log_dropped alter column dropped_position set not null;

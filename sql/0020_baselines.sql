-- Baselines (CONTRACT §5): a flow's schedule as it stood when someone said "this is the plan",
-- kept to compare the schedule against later. The one derived thing that is stored.
--
-- The snapshot is one row of three parallel arrays (per objective: its id, and its start and
-- finish as working-day offsets from start_date, -1 for a done one, as the engine holds them),
-- not a row per task: a 10k-task baseline is one row whose arrays Postgres compresses out of
-- line, rather than 10k rows each with a tuple header and an index entry, and not jsonb
-- repeating every key for every task. Offsets rather than dates: variance is arithmetic on
-- integers, with one calendar step for the days between the two start dates.
create table baselines (
  id            text primary key,
  workspace_id  text not null references workspaces (id),
  flow_id       text not null references flows (id) on delete cascade,
  name          text not null,
  -- The working day the offsets count from (the day it was taken, a weekend's Monday).
  start_date    date not null,
  -- The projected finish as an offset; -1 when nothing was left open.
  finish        integer not null check (finish >= -1),
  task_ids      text[] not null,
  starts        integer[] not null,
  finishes      integer[] not null,
  created_at    timestamptz not null default now(),
  check (cardinality(starts) = cardinality(task_ids) and cardinality(finishes) = cardinality(task_ids))
);
-- A flow's baselines, newest first; the arrays are never read by the list.
create index baselines_flow on baselines (workspace_id, flow_id, created_at desc, id desc);

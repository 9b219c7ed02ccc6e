-- Flows and their tasks. Status, blockers, critical path and schedule are derived on read;
-- what is stored is the plan and the facts of progress (started, done).

create table flows (
  id            text primary key,
  workspace_id  text not null references workspaces (id),
  name          text not null,
  description   text,
  due_date      timestamptz,
  archived      boolean not null default false,
  public_token  text unique,
  version       bigint not null default 1,
  created_at    timestamptz not null default now(),
  updated_at    timestamptz not null default now()
);
create index flows_workspace_live on flows (workspace_id, archived, created_at desc, id desc);

create table tasks (
  id              text primary key,
  flow_id         text not null references flows (id) on delete cascade,
  parent_id       text references tasks (id) on delete cascade,
  name            text not null,
  description     text,
  estimate_hours  double precision check (estimate_hours >= 0),
  assignee_id     text references users (id),
  -- 0 not started, 1 started, 2 done: a fact, not the derived status
  progress        smallint not null default 0 check (progress in (0, 1, 2)),
  position        bigint not null,
  created_at      timestamptz not null default now(),
  updated_at      timestamptz not null default now(),
  started_at      timestamptz,
  completed_at    timestamptz
);
create index tasks_flow on tasks (flow_id, position);

create table task_dependencies (
  flow_id        text not null references flows (id) on delete cascade,
  task_id        text not null references tasks (id) on delete cascade,
  depends_on_id  text not null references tasks (id) on delete cascade,
  primary key (task_id, depends_on_id),
  check (task_id <> depends_on_id)
);
create index task_dependencies_flow on task_dependencies (flow_id);

create table deliverables (
  id          text primary key,
  task_id     text not null references tasks (id) on delete cascade,
  flow_id     text not null references flows (id) on delete cascade,
  name        text not null,
  created_at  timestamptz not null default now()
);
create index deliverables_flow on deliverables (flow_id);

create table attachments (
  id              text primary key,
  task_id         text not null references tasks (id) on delete cascade,
  flow_id         text not null references flows (id) on delete cascade,
  name            text not null,
  mime_type       text not null,
  size_bytes      bigint not null,
  kind            text not null check (kind in ('reference', 'deliverable')),
  deliverable_id  text references deliverables (id) on delete set null,
  content         bytea not null,
  uploaded_by     text,
  uploaded_at     timestamptz not null default now()
);
create index attachments_task on attachments (task_id, uploaded_at);
create index attachments_deliverable on attachments (deliverable_id) where deliverable_id is not null;

create table comments (
  id           text primary key,
  task_id      text not null references tasks (id) on delete cascade,
  flow_id      text not null references flows (id) on delete cascade,
  author_id    text not null,
  author_name  text,
  body         text not null,
  created_at   timestamptz not null default now()
);
create index comments_task on comments (task_id, created_at, id);

-- Domain events, written in the same transaction as the change they describe; later
-- jobs turn them into notifications and webhooks.
create table outbox (
  id            bigserial primary key,
  workspace_id  text not null references workspaces (id),
  flow_id       text,
  type          text not null,
  data          jsonb not null,
  actor_id      text,
  created_at    timestamptz not null default now(),
  processed_at  timestamptz
);
create index outbox_unprocessed on outbox (id) where processed_at is null;

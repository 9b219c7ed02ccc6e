-- Notifications: preferences, events waiting for a batch email, deliveries (one row per
-- attempt, deliberate non-sends too) and unsubscribe links. Jobs live in pg-boss's own
-- schema `pgboss`, which pg-boss creates at start (src/jobs/jobs.ts says why).

-- The outbox drain (src/jobs/outbox.ts) sets a poison event aside after repeated failures.
alter table outbox add column drain_attempts integer not null default 0;
alter table outbox add column drain_error text;

-- Account-level settings of one member (member id = user id) in one workspace. No row: defaults.
create table notification_settings (
  workspace_id  text not null references workspaces (id),
  member_id     text not null references users (id),
  email         boolean not null default true,
  assigned      boolean not null default true,
  unlocked      boolean not null default true,
  digest        boolean not null default true,
  timezone      text not null default 'UTC',
  digest_hour   smallint not null default 8 check (digest_hour between 0 and 23),
  updated_at    timestamptz not null default now(),
  primary key (workspace_id, member_id)
);
-- The digest scheduler scans settings by hour; a member with no row uses the defaults.
create index notification_settings_digest on notification_settings (digest_hour) where digest and email;

create table notification_flow_settings (
  workspace_id  text not null references workspaces (id),
  member_id     text not null references users (id),
  flow_id       text not null references flows (id) on delete cascade,
  muted         boolean not null,
  updated_at    timestamptz not null default now(),
  primary key (workspace_id, member_id, flow_id)
);

-- Events waiting for the member's next batch email.
create table notification_pending (
  id            bigserial primary key,
  workspace_id  text not null references workspaces (id),
  member_id     text not null references users (id),
  kind          text not null check (kind in ('assigned', 'unlocked')),
  flow_id       text not null,
  task_id       text not null,
  created_at    timestamptz not null default now()
);
create index notification_pending_member on notification_pending (workspace_id, member_id, id);

-- The open batch window of a member: sent at due_at = least(last event + quiet, first event + ceiling).
create table notification_batches (
  workspace_id    text not null references workspaces (id),
  member_id       text not null references users (id),
  first_event_at  timestamptz not null,
  due_at          timestamptz not null,
  primary key (workspace_id, member_id)
);

create table notification_deliveries (
  id            text primary key,
  workspace_id  text not null references workspaces (id),
  member_id     text not null references users (id),
  kind          text not null check (kind in ('batch', 'digest')),
  status        text not null check (status in ('claimed', 'sent', 'failed', 'skipped', 'skipped-empty')),
  -- why it was skipped or failed
  reason        text,
  recipient     text,
  subject       text,
  item_count    integer not null default 0,
  flow_ids      text[] not null default '{}',
  suppressed    integer not null default 0,
  message_id    text,
  transport     text,
  -- the rendered message, kept so a retry sends exactly the same mail
  message       jsonb,
  attempt       integer not null default 1,
  retry_of      text unique references notification_deliveries (id),
  -- the member's local date a digest is for: at most one digest per member and local day
  digest_date   date,
  created_at    timestamptz not null default now(),
  finished_at   timestamptz
);
create index notification_deliveries_member on notification_deliveries (workspace_id, member_id, created_at desc, id desc);
create unique index notification_deliveries_digest_day on notification_deliveries (workspace_id, member_id, digest_date)
  where kind = 'digest' and attempt = 1;
create index notification_deliveries_claimed on notification_deliveries (created_at) where status = 'claimed';

-- Opaque one-click unsubscribe links, one per member and kind (`batch` or `digest`).
create table notification_unsubscribe (
  token         text primary key,
  workspace_id  text not null references workspaces (id),
  member_id     text not null references users (id),
  kind          text not null check (kind in ('batch', 'digest')),
  created_at    timestamptz not null default now(),
  unique (workspace_id, member_id, kind)
);

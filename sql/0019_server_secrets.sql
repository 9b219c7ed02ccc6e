-- Secrets the server makes for itself at first start and every process shares (the event
-- cursors' key: src/services/events/cursor.ts), kept where every process reads the same one.
create table server_secrets (
  name       text primary key,
  value      bytea not null,
  created_at timestamptz not null default now()
);

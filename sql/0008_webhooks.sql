-- Webhooks (CONTRACT §3, Standard Webhooks 1.0): endpoints, one delivery per endpoint and
-- domain event (its id is the `webhook-id` header, the same on every attempt), and each
-- attempt's outcome. Deliveries are sent by pg-boss jobs (src/webhooks/delivery.job.ts).

create table webhooks (
  id                        text primary key,
  workspace_id              text not null references workspaces (id),
  url                       text not null,
  events                    text[] not null,
  description               text,
  enabled                   boolean not null default true,
  -- Why it was switched off by the service (`gone`: the receiver answered 410); null when enabled or switched off by a client.
  disabled_reason           text,
  -- The HMAC key must be read back to sign, so it is kept as issued (`whsec_…`), never shown again.
  secret                    text not null,
  -- After a rotation the previous secret also signs until this instant (24 hours).
  previous_secret           text,
  previous_secret_expires_at timestamptz,
  created_at                timestamptz not null default now(),
  updated_at                timestamptz not null default now()
);
create index webhooks_workspace on webhooks (workspace_id, created_at, id);

-- status: pending (waiting for an earlier delivery of its lane, no job), queued (a job will
-- try it at next_attempt_at), sending (claimed until lease_until), then delivered, failed or
-- skipped. A lane is one endpoint and one flow (flow_key '' for events without a flow):
-- within a lane only the earliest unfinished delivery is ever attempted, so events of a
-- flow arrive in commit order (outbox id order).
create table webhook_deliveries (
  id              text primary key,
  webhook_id      text not null references webhooks (id) on delete cascade,
  workspace_id    text not null references workspaces (id),
  event_id        bigint not null,
  flow_key        text not null,
  type            text not null,
  -- The exact body, fixed when the event was drained: every attempt sends the same bytes.
  body            text not null,
  status          text not null check (status in ('pending', 'queued', 'sending', 'delivered', 'failed', 'skipped')),
  attempts        integer not null default 0,
  -- Attempts allowed before giving up: the automatic schedule, or one more for a manual retry.
  attempt_limit   integer not null,
  -- Set by a manual retry until that attempt ends (its attempt row says `manual`).
  manual          boolean not null default false,
  next_attempt_at timestamptz,
  lease_until     timestamptz,
  last_status_code integer,
  last_error      text,
  created_at      timestamptz not null default now(),
  finished_at     timestamptz,
  unique (webhook_id, event_id)
);
create index webhook_deliveries_lane on webhook_deliveries (webhook_id, flow_key, event_id)
  where status in ('pending', 'queued', 'sending');
create index webhook_deliveries_list on webhook_deliveries (webhook_id, created_at desc, event_id desc);
-- Workers with time to spare take due deliveries straight from here.
create index webhook_deliveries_due on webhook_deliveries (next_attempt_at) where status = 'queued';
-- The maintenance sweep finds claims whose process died and queued deliveries whose job was lost.
create index webhook_deliveries_stuck on webhook_deliveries (status, lease_until, next_attempt_at)
  where status in ('queued', 'sending');

create table webhook_attempts (
  id              bigserial primary key,
  delivery_id     text not null references webhook_deliveries (id) on delete cascade,
  attempt         integer not null,
  manual          boolean not null default false,
  started_at      timestamptz not null,
  duration_ms     integer not null,
  status_code     integer,
  error           text,
  -- The delay the receiver asked for with Retry-After, in seconds.
  retry_after     integer
);
create index webhook_attempts_delivery on webhook_attempts (delivery_id, attempt);

-- Webhook fan-out leaves the outbox drain: the drain's transaction no longer writes a
-- delivery row per endpoint and event (20 endpoints made every commit 20 inserts on the
-- path of the next commits). The webhook dispatcher collects events itself, in time the
-- API leaves free, and marks each event here once its deliveries are written.
alter table outbox add column webhooks_at timestamptz;
-- Drained events were collected by the drain.
update outbox set webhooks_at = processed_at where processed_at is not null;
create index outbox_webhooks_due on outbox (id) where webhooks_at is null;

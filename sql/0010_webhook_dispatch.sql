-- Webhook deliveries are claimed in batches by each process's dispatcher (src/webhooks/delivery.job.ts).
-- A claim's lease end is its next_attempt_at: a claim whose process died is simply due again,
-- so one index serves due heads and lapsed claims alike. Every status change of a delivery
-- rewrites each of its index entries, so the table keeps only the indexes its queries need:
-- the delivery log reads newest first through (webhook_id, event_id).
drop index webhook_deliveries_due;
drop index webhook_deliveries_stuck;
drop index webhook_deliveries_list;
alter table webhook_deliveries drop column lease_until;
create index webhook_deliveries_due on webhook_deliveries (next_attempt_at) where status in ('queued', 'sending');

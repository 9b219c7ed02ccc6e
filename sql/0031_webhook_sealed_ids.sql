-- Issue 51, item 4: a delivery's webhook-id was msg_<endpoint>_<position>, the event's position in
-- the installation's one order of events: by how far it moved between two deliveries, a receiver
-- (and anyone reading the endpoint's delivery log) learnt how many events other workspaces had
-- meanwhile. The part after the endpoint is now sealed with the server's key
-- (src/services/webhooks/message.ts): 22 characters that tell nothing, the same on every attempt.
--
-- Deliveries of events that had their position before this keep the id they had, so a retry after
-- the upgrade carries the id of the attempts before it and an id a client kept still finds its
-- delivery: each endpoint registered by then keeps the last position its workspace's events had
-- (or its delivery log, where retention dropped them). An endpoint registered later has none: all
-- its ids are sealed.
alter table webhooks add column position_ids_through bigint;
update webhooks h set position_ids_through = greatest(
  (select max(o.position) from outbox o where o.workspace_id = h.workspace_id),
  (select max(g.position) from webhook_log g where g.workspace_id = h.workspace_id and g.webhook_id = h.id));

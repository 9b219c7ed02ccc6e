-- Webhook fairness (issue 30, item 2): one workspace's endpoints that accept and never answer
-- held every process's attempts for their whole timeout and starved every other workspace.
-- Claims are now capped per workspace and per endpoint (counted from the lanes in `sending`),
-- and each endpoint has a circuit breaker: after WEBHOOK_BREAKER_TIMEOUTS timeouts in a row its
-- attempts are deferred until `circuit_open_until`, then tried one at a time with a shorter
-- timeout; any answer closes it.
alter table webhooks
  add column consecutive_timeouts integer not null default 0,
  add column circuit_open_until timestamptz;

-- The caps count attempts in flight by endpoint: the lanes claimed now.
create index webhook_lanes_sending on webhook_lanes (webhook_id) where state = 'sending';

-- Public views find a flow by the hash of its token, not by comparing the token itself, so
-- the look-up's timing says nothing about how much of a guessed token was right. The raw
-- token stays: the flow's owners read their link back from FlowSummary.publicUrl.
-- Tokens are base64url, so the text→bytea cast is their UTF-8 bytes.
alter table flows
  add column public_token_hash text generated always as (encode(sha256(public_token::bytea), 'hex')) stored;
create unique index flows_public_token_hash on flows (public_token_hash);

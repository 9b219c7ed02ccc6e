-- One rate budget per credential across every process on the database (src/http/shared-rate-limit.ts):
-- processes lease tokens from these buckets a few at a time. Unlogged: a bucket lost in a crash
-- comes back full, which is what an idle bucket is anyway.
create unlogged table rate_buckets (
  key     text primary key,
  tokens  double precision not null,
  at      timestamptz not null
);

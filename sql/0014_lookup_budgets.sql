-- Whether an address has an account is not a caller's to learn in bulk (src/team/account-lookup.ts):
-- each answer of "no account has this address" spends a token of the calling credential's bucket
-- (per person too, for person tokens), shared by every process. Logged, unlike rate_buckets: a
-- crash must not hand out fresh budgets.
create table lookup_budgets (
  key     text primary key,
  tokens  double precision not null,
  at      timestamptz not null
);
create index lookup_budgets_at on lookup_budgets (at);

-- Sign-in throttling (src/app/signin.service.ts): a counter per key, taken under its row lock
-- before a password is checked, so attempts arriving together cannot all pass one check.
-- Keys: `pair:<address bucket> <email>` (locked after a few failures), `address:<bucket>`
-- (failures across accounts) and `account:<email>` (only slows: never locks anyone out).
-- signin_failures is no longer read or written; it stays until a later migration, so processes
-- of the previous version keep working through a rolling upgrade.
create table signin_attempts (
  key    text primary key,
  count  integer not null,
  -- start of the key's window; a lock lasts a window from the attempt that reached the limit
  since  timestamptz not null
);
create index signin_attempts_since on signin_attempts (since);

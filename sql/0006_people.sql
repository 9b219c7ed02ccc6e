-- People: authorization requests and codes (OAuth 2.0 authorization code + PKCE), rotating
-- refresh tokens grouped in families (RFC 9700 reuse detection), web-app sessions and
-- sign-in throttling. Every secret is stored as its sha256 only.

-- The parameters of one authorize call, kept server-side: the app carries only the handle.
create table oauth_requests (
  handle_hash     text primary key,
  client_id       text not null references credentials (id),
  redirect_uri    text not null,
  code_challenge  text not null,
  state           text,
  scopes          text[] not null,
  expires_at      timestamptz not null,
  created_at      timestamptz not null default now()
);
create index oauth_requests_expires on oauth_requests (expires_at);

-- A family is one sign-in's chain of tokens: every refresh rotates within it, and a replayed
-- code or refresh token revokes all of it.
create table token_families (
  id            text primary key,
  client_id     text not null references credentials (id),
  user_id       text not null references users (id),
  created_at    timestamptz not null default now(),
  revoked_at    timestamptz
);
create index token_families_user on token_families (user_id);

create table oauth_codes (
  code_hash       text primary key,
  family_id       text not null references token_families (id),
  client_id       text not null references credentials (id),
  user_id         text not null references users (id),
  workspace_id    text not null references workspaces (id),
  redirect_uri    text not null,
  code_challenge  text not null,
  scopes          text[] not null,
  expires_at      timestamptz not null,
  used_at         timestamptz
);

create table refresh_tokens (
  id            text primary key,
  token_hash    text not null unique,
  family_id     text not null references token_families (id),
  workspace_id  text not null references workspaces (id),
  scopes        text[] not null,
  created_at    timestamptz not null default now(),
  -- set when the token was exchanged for the next pair; presenting it again is reuse
  rotated_at    timestamptz,
  revoked_at    timestamptz,
  expires_at    timestamptz not null
);
create index refresh_tokens_family on refresh_tokens (family_id);

-- Person access tokens belong to a family, so revoking the family ends them at once.
alter table access_tokens add column family_id text references token_families (id);
create index access_tokens_family on access_tokens (family_id) where family_id is not null;

-- Web-app sessions: the cookie holds a random id, the row its hash.
create table app_sessions (
  id_hash       text primary key,
  user_id       text not null references users (id),
  workspace_id  text references workspaces (id),
  created_at    timestamptz not null default now(),
  expires_at    timestamptz not null
);
create index app_sessions_user on app_sessions (user_id);

-- Failed sign-ins per account and per client address, for throttling.
create table signin_failures (
  key         text not null,
  failed_at   timestamptz not null default now()
);
create index signin_failures_key on signin_failures (key, failed_at);

-- The single-use link of an invite: its token's hash.
alter table invites add column token_hash text unique;
alter table invites add column expires_at timestamptz;

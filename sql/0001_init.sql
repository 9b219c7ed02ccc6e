-- Platform: workspaces, people, credentials, tokens and idempotency records.

create table workspaces (
  id          text primary key,
  name        text not null,
  plan        text not null check (plan in ('free', 'pro')),
  past_due    boolean not null default false,
  seats       integer not null check (seats >= 0),
  created_at  timestamptz not null default now()
);

create table users (
  id             text primary key,
  email          text not null,
  name           text not null,
  password_hash  text not null,
  created_at     timestamptz not null default now()
);
create unique index users_email_key on users (lower(email));

create table memberships (
  workspace_id  text not null references workspaces (id),
  user_id       text not null references users (id),
  role          text not null check (role in ('owner', 'admin', 'member', 'viewer')),
  created_at    timestamptz not null default now(),
  primary key (workspace_id, user_id)
);
create index memberships_user on memberships (user_id);

-- API keys and OAuth clients: a workspace credential with a role and scopes.
create table credentials (
  id             text primary key,
  workspace_id   text not null references workspaces (id),
  kind           text not null check (kind in ('key', 'client')),
  name           text,
  role           text not null check (role in ('admin', 'member', 'viewer')),
  scopes         text[] not null,
  -- sha256 of the API key or client secret; null for a public (first-party) client
  secret_hash    text,
  first_party    boolean not null default false,
  redirect_uris  text[] not null default '{}',
  created_at     timestamptz not null default now(),
  revoked_at     timestamptz
);
create unique index credentials_key_hash on credentials (secret_hash) where kind = 'key';
create index credentials_workspace on credentials (workspace_id);

create table access_tokens (
  id             text primary key,
  token_hash     text not null unique,
  workspace_id   text not null references workspaces (id),
  credential_id  text not null references credentials (id),
  user_id        text references users (id),
  scopes         text[] not null,
  expires_at     timestamptz not null,
  created_at     timestamptz not null default now(),
  revoked_at     timestamptz
);
create index access_tokens_credential on access_tokens (credential_id);

-- Idempotency-Key records (CONTRACT §1): replay the first response for 24 hours.
create table idempotency_keys (
  credential_id  text not null,
  key            text not null,
  request_hash   text not null,
  status         integer,
  headers        jsonb,
  body           bytea,
  created_at     timestamptz not null default now(),
  completed_at   timestamptz,
  primary key (credential_id, key)
);
create index idempotency_keys_created on idempotency_keys (created_at);

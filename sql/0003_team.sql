-- Team: invitations (which occupy seats while pending) and flow shares (guests, which never do).

create table invites (
  id            text primary key,
  workspace_id  text not null references workspaces (id),
  email         text not null,
  role          text not null check (role in ('admin', 'member', 'viewer')),
  status        text not null default 'pending' check (status in ('pending', 'accepted', 'revoked')),
  -- the key, client or person token's credential that sent it
  invited_by    text,
  created_at    timestamptz not null default now(),
  accepted_at   timestamptz,
  revoked_at    timestamptz
);
create index invites_workspace on invites (workspace_id, created_at desc, id desc);
-- One pending invite per address and workspace; creation also serializes on the workspace row.
create unique index invites_pending_email on invites (workspace_id, lower(email)) where status = 'pending';

-- A guest with access to one flow: an address, not a membership, never a seat.
create table shares (
  id            text primary key,
  workspace_id  text not null references workspaces (id),
  flow_id       text not null references flows (id) on delete cascade,
  email         text not null,
  role          text not null check (role in ('viewer', 'commenter')),
  created_at    timestamptz not null default now(),
  updated_at    timestamptz not null default now()
);
create unique index shares_flow_email on shares (flow_id, lower(email));
create index shares_flow on shares (flow_id, created_at, id);
create index shares_email on shares (lower(email));

-- Brainstorms: idea trees. Every change bumps `version` (the ETag of the board), so a
-- comment or a file counted on an idea changes the tag too. `public_version` moves only with
-- what the public view shows (name, titles, tags, tree), so its tag says nothing of the rest.

create table brainstorms (
  id                 text primary key,
  workspace_id       text not null references workspaces (id),
  name               text not null,
  archived           boolean not null default false,
  -- the published link's token (shown in publicUrl) and its hash (what public look-ups match)
  public_token       text unique,
  public_token_hash  text unique,
  version            bigint not null default 1,
  public_version     bigint not null default 1,
  created_at         timestamptz not null default now(),
  updated_at         timestamptz not null default now(),
  check ((public_token is null) = (public_token_hash is null))
);
create index brainstorms_workspace on brainstorms (workspace_id, archived, created_at desc, id desc);

create table ideas (
  id             text primary key,
  brainstorm_id  text not null references brainstorms (id) on delete cascade,
  -- deferred: one creation call may name a parent that a later batch of rows inserts
  parent_id      text references ideas (id) deferrable initially deferred,
  title          text not null,
  notes          text,
  tags           text[] not null default '{}',
  assignee_id    text references users (id),
  position       bigint not null,
  created_at     timestamptz not null default now(),
  updated_at     timestamptz not null default now(),
  check (parent_id <> id)
);
create index ideas_brainstorm on ideas (brainstorm_id, position);
create index ideas_parent on ideas (parent_id) where parent_id is not null;

create table idea_comments (
  id             text primary key,
  idea_id        text not null references ideas (id) on delete cascade,
  brainstorm_id  text not null references brainstorms (id) on delete cascade,
  author_id      text not null,
  author_name    text,
  body           text not null,
  created_at     timestamptz not null default now()
);
create index idea_comments_idea on idea_comments (idea_id, created_at, id);

create table idea_attachments (
  id             text primary key,
  idea_id        text not null references ideas (id) on delete cascade,
  brainstorm_id  text not null references brainstorms (id) on delete cascade,
  name           text not null,
  mime_type      text not null,
  size_bytes     bigint not null,
  content        bytea not null,
  uploaded_by    text,
  uploaded_at    timestamptz not null default now()
);
create index idea_attachments_idea on idea_attachments (idea_id, uploaded_at, id);

-- A guest: one existing account with access to one brainstorm, never a member or a seat.
create table brainstorm_shares (
  id             text primary key,
  workspace_id   text not null references workspaces (id),
  brainstorm_id  text not null references brainstorms (id) on delete cascade,
  user_id        text not null references users (id),
  role           text not null check (role in ('viewer', 'commenter')),
  created_at     timestamptz not null default now(),
  updated_at     timestamptz not null default now(),
  unique (brainstorm_id, user_id)
);
create index brainstorm_shares_user on brainstorm_shares (user_id);
create index brainstorm_shares_board on brainstorm_shares (brainstorm_id, created_at, id);

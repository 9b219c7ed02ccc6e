-- Templates (the built-in catalogue, synced into a table at start-up so search can reach it
-- with SQL), their uses per workspace, and the full-text and trigram indexes of search.

create extension if not exists pg_trgm;

-- A copy of src/templates/catalogue.ts; the catalogue is the source of truth and start-up
-- (syncTemplates) rewrites this table from it.
create table templates (
  id           text primary key,
  name         text not null,
  description  text,
  category     text,
  task_count   integer not null check (task_count >= 0),
  synced_at    timestamptz not null default now()
);

-- One row per flow started from a template: usedCount counts them per workspace. No foreign
-- key to templates: a use is history and outlives a template leaving the catalogue.
create table template_uses (
  flow_id       text primary key references flows (id) on delete cascade,
  template_id   text not null,
  workspace_id  text not null references workspaces (id),
  created_at    timestamptz not null default now()
);
create index template_uses_workspace on template_uses (workspace_id, template_id);

-- Search (GET /v1/search). The expressions here are repeated verbatim in
-- src/store/search.store.ts so the planner can use them.
create index flows_search_fts on flows
  using gin (to_tsvector('simple', name || ' ' || coalesce(description, '')));
create index flows_name_trgm on flows using gin (name gin_trgm_ops);

create index tasks_search_fts on tasks using gin (to_tsvector('simple', name));
create index tasks_name_trgm on tasks using gin (name gin_trgm_ops);

create index templates_search_fts on templates
  using gin (to_tsvector('simple', name || ' ' || coalesce(description, '') || ' ' || coalesce(category, '')));
create index templates_name_trgm on templates using gin (name gin_trgm_ops);

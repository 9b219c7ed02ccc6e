-- Issue 36: every tenant table carries workspace_id, the column a Citus cluster distributes by
-- (sql/distribution.json, docs/scale.md). This step only adds the columns (no default: a
-- catalog change, no rewrite) and NOT VALID checks that hold for new rows at once; 0026
-- backfills existing rows in batches and validates the checks without blocking writes, 0027
-- makes the keys composite.
alter table tasks add column workspace_id text,
  add constraint tasks_workspace_set check (workspace_id is not null) not valid;
alter table task_dependencies add column workspace_id text,
  add constraint task_dependencies_workspace_set check (workspace_id is not null) not valid;
alter table comments add column workspace_id text,
  add constraint comments_workspace_set check (workspace_id is not null) not valid;
alter table deliverables add column workspace_id text,
  add constraint deliverables_workspace_set check (workspace_id is not null) not valid;
alter table attachments add column workspace_id text,
  add constraint attachments_workspace_set check (workspace_id is not null) not valid;
alter table blob_chunks add column workspace_id text,
  add constraint blob_chunks_workspace_set check (workspace_id is not null) not valid;
alter table ideas add column workspace_id text,
  add constraint ideas_workspace_set check (workspace_id is not null) not valid;
alter table idea_comments add column workspace_id text,
  add constraint idea_comments_workspace_set check (workspace_id is not null) not valid;
alter table idea_attachments add column workspace_id text,
  add constraint idea_attachments_workspace_set check (workspace_id is not null) not valid;
alter table webhook_lanes add column workspace_id text,
  add constraint webhook_lanes_workspace_set check (workspace_id is not null) not valid;
alter table webhook_log add column workspace_id text,
  add constraint webhook_log_workspace_set check (workspace_id is not null) not valid;

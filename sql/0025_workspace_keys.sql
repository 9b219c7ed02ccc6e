-- Issue 36: every tenant table carries workspace_id, the column a Citus cluster distributes by
-- (sql/distribution.json, docs/scale.md). This step only adds the columns: no default, so a
-- catalog change and no rewrite. Rows written from now on name their workspace (the stores
-- do); 0026 fills the older ones in batches and adds the NOT NULL checks, 0027 makes the keys
-- composite.
alter table tasks add column workspace_id text;
alter table task_dependencies add column workspace_id text;
alter table comments add column workspace_id text;
alter table deliverables add column workspace_id text;
alter table attachments add column workspace_id text;
alter table blob_chunks add column workspace_id text;
alter table ideas add column workspace_id text;
alter table idea_comments add column workspace_id text;
alter table idea_attachments add column workspace_id text;
alter table webhook_lanes add column workspace_id text;
alter table webhook_log add column workspace_id text;

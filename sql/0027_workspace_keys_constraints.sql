-- Issue 36: workspace_id in every tenant table's primary key and unique constraints, and in
-- every foreign key between tenant tables, as a cluster distributed by workspace_id requires
-- (sql/distribution.json). Keys keep their old columns first, so a lookup by id alone still
-- uses them. The largest indexes (tasks, flows, task_dependencies) were built concurrently
-- by 0026; the foreign keys are added NOT VALID (no scan under this lock) and 0028 validates
-- them without blocking writes.
alter table tasks alter column workspace_id set not null, drop constraint tasks_workspace_set;
alter table task_dependencies alter column workspace_id set not null, drop constraint task_dependencies_workspace_set;
alter table comments alter column workspace_id set not null, drop constraint comments_workspace_set;
alter table deliverables alter column workspace_id set not null, drop constraint deliverables_workspace_set;
alter table attachments alter column workspace_id set not null, drop constraint attachments_workspace_set;
alter table blob_chunks alter column workspace_id set not null, drop constraint blob_chunks_workspace_set;
alter table ideas alter column workspace_id set not null, drop constraint ideas_workspace_set;
alter table idea_comments alter column workspace_id set not null, drop constraint idea_comments_workspace_set;
alter table idea_attachments alter column workspace_id set not null, drop constraint idea_attachments_workspace_set;
alter table webhook_lanes alter column workspace_id set not null, drop constraint webhook_lanes_workspace_set;
alter table webhook_log alter column workspace_id set not null, drop constraint webhook_log_workspace_set;
drop index tasks_to_fill, task_dependencies_to_fill;

-- Foreign keys among tenant tables go first: the keys they point at are replaced below.
alter table tasks drop constraint tasks_flow_id_fkey, drop constraint tasks_parent_id_fkey;
alter table task_dependencies drop constraint task_dependencies_flow_id_fkey,
  drop constraint task_dependencies_task_id_fkey, drop constraint task_dependencies_depends_on_id_fkey;
alter table deliverables drop constraint deliverables_task_id_fkey, drop constraint deliverables_flow_id_fkey;
alter table attachments drop constraint attachments_task_id_fkey, drop constraint attachments_flow_id_fkey,
  drop constraint attachments_deliverable_id_fkey;
alter table comments drop constraint comments_task_id_fkey, drop constraint comments_flow_id_fkey;
alter table shares drop constraint shares_flow_id_fkey;
alter table template_uses drop constraint template_uses_flow_id_fkey;
alter table ideas drop constraint ideas_brainstorm_id_fkey, drop constraint ideas_parent_id_fkey;
alter table idea_comments drop constraint idea_comments_idea_id_fkey, drop constraint idea_comments_brainstorm_id_fkey;
alter table idea_attachments drop constraint idea_attachments_idea_id_fkey,
  drop constraint idea_attachments_brainstorm_id_fkey;
alter table brainstorm_shares drop constraint brainstorm_shares_brainstorm_id_fkey;
alter table notification_flow_settings drop constraint notification_flow_settings_flow_id_fkey;
alter table notification_deliveries drop constraint notification_deliveries_retry_of_fkey;
alter table webhook_lanes drop constraint webhook_lanes_webhook_id_fkey;
alter table webhook_log drop constraint webhook_log_webhook_id_fkey;
alter table baselines drop constraint baselines_flow_id_fkey;

-- Primary keys and unique constraints, workspace_id included.
alter table flows drop constraint flows_pkey, add constraint flows_pkey primary key using index flows_key,
  drop constraint flows_public_token_key, add unique (public_token, workspace_id);
drop index flows_public_token_hash;
create unique index flows_public_token_hash on flows (public_token_hash, workspace_id);
alter table tasks drop constraint tasks_pkey, add constraint tasks_pkey primary key using index tasks_key;
alter table task_dependencies drop constraint task_dependencies_pkey,
  add constraint task_dependencies_pkey primary key using index task_dependencies_key;
alter table comments drop constraint comments_pkey, add primary key (id, workspace_id);
alter table deliverables drop constraint deliverables_pkey, add primary key (id, workspace_id);
alter table attachments drop constraint attachments_pkey, add primary key (id, workspace_id);
alter table blob_chunks drop constraint blob_chunks_pkey, add primary key (blob_id, seq, workspace_id);
alter table brainstorms drop constraint brainstorms_pkey, add primary key (id, workspace_id),
  drop constraint brainstorms_public_token_key, add unique (public_token, workspace_id),
  drop constraint brainstorms_public_token_hash_key, add unique (public_token_hash, workspace_id);
alter table ideas drop constraint ideas_pkey, add primary key (id, workspace_id);
alter table idea_comments drop constraint idea_comments_pkey, add primary key (id, workspace_id);
alter table idea_attachments drop constraint idea_attachments_pkey, add primary key (id, workspace_id);
alter table brainstorm_shares drop constraint brainstorm_shares_pkey, add primary key (id, workspace_id),
  drop constraint brainstorm_shares_brainstorm_id_user_id_key, add unique (brainstorm_id, user_id, workspace_id);
alter table shares drop constraint shares_pkey, add primary key (id, workspace_id);
drop index shares_flow_email;
create unique index shares_flow_email on shares (flow_id, lower(email), workspace_id);
alter table template_uses drop constraint template_uses_pkey, add primary key (flow_id, workspace_id);
alter table baselines drop constraint baselines_pkey, add primary key (id, workspace_id);
alter table webhooks drop constraint webhooks_pkey, add primary key (id, workspace_id);
alter table webhook_lanes drop constraint webhook_lanes_pkey, add primary key (webhook_id, flow_key, workspace_id);
alter table webhook_log drop constraint webhook_log_pkey, add primary key (id, workspace_id);
alter table notification_pending drop constraint notification_pending_pkey, add primary key (id, workspace_id);
alter table notification_deliveries drop constraint notification_deliveries_pkey, add primary key (id, workspace_id),
  drop constraint notification_deliveries_retry_of_key, add unique (retry_of, workspace_id);
alter table notification_unsubscribe drop constraint notification_unsubscribe_pkey, add primary key (token, workspace_id);
alter table outbox drop constraint outbox_pkey1, add primary key (id, created_at, workspace_id);

-- Foreign keys among tenant tables, composite: on a cluster both rows live on one shard.
alter table tasks
  add foreign key (flow_id, workspace_id) references flows (id, workspace_id) on delete cascade not valid,
  add foreign key (parent_id, workspace_id) references tasks (id, workspace_id) on delete cascade not valid;
alter table task_dependencies
  add foreign key (flow_id, workspace_id) references flows (id, workspace_id) on delete cascade not valid,
  add foreign key (task_id, workspace_id) references tasks (id, workspace_id) on delete cascade not valid,
  add foreign key (depends_on_id, workspace_id) references tasks (id, workspace_id) on delete cascade not valid;
alter table deliverables
  add foreign key (task_id, workspace_id) references tasks (id, workspace_id) on delete cascade not valid,
  add foreign key (flow_id, workspace_id) references flows (id, workspace_id) on delete cascade not valid;
-- SET NULL of the one column only (Postgres 15+): the row keeps its workspace.
alter table attachments
  add foreign key (task_id, workspace_id) references tasks (id, workspace_id) on delete cascade not valid,
  add foreign key (flow_id, workspace_id) references flows (id, workspace_id) on delete cascade not valid,
  add foreign key (deliverable_id, workspace_id) references deliverables (id, workspace_id)
    on delete set null (deliverable_id) not valid;
alter table comments
  add foreign key (task_id, workspace_id) references tasks (id, workspace_id) on delete cascade not valid,
  add foreign key (flow_id, workspace_id) references flows (id, workspace_id) on delete cascade not valid;
alter table shares
  add foreign key (flow_id, workspace_id) references flows (id, workspace_id) on delete cascade not valid;
alter table template_uses
  add foreign key (flow_id, workspace_id) references flows (id, workspace_id) on delete cascade not valid;
alter table baselines
  add foreign key (flow_id, workspace_id) references flows (id, workspace_id) on delete cascade not valid;
alter table notification_flow_settings
  add foreign key (flow_id, workspace_id) references flows (id, workspace_id) on delete cascade not valid;
alter table ideas
  add foreign key (brainstorm_id, workspace_id) references brainstorms (id, workspace_id) on delete cascade not valid,
  add foreign key (parent_id, workspace_id) references ideas (id, workspace_id) deferrable initially deferred not valid;
alter table idea_comments
  add foreign key (idea_id, workspace_id) references ideas (id, workspace_id) on delete cascade not valid,
  add foreign key (brainstorm_id, workspace_id) references brainstorms (id, workspace_id) on delete cascade not valid;
alter table idea_attachments
  add foreign key (idea_id, workspace_id) references ideas (id, workspace_id) on delete cascade not valid,
  add foreign key (brainstorm_id, workspace_id) references brainstorms (id, workspace_id) on delete cascade not valid;
alter table brainstorm_shares
  add foreign key (brainstorm_id, workspace_id) references brainstorms (id, workspace_id) on delete cascade not valid;
alter table notification_deliveries
  add foreign key (retry_of, workspace_id) references notification_deliveries (id, workspace_id) not valid;
alter table webhook_lanes
  add foreign key (webhook_id, workspace_id) references webhooks (id, workspace_id) on delete cascade not valid;
alter table webhook_log
  add foreign key (webhook_id, workspace_id) references webhooks (id, workspace_id) on delete cascade not valid;

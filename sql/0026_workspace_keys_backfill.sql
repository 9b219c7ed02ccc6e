-- flowplan:batched
-- Fills workspace_id on rows written before 0025, 5,000 rows a transaction, so no busy table is
-- locked for longer than one batch; each update repeats until it changes nothing
-- (src/storage/migrate.ts). A partial index on the rows still to fill keeps each batch from
-- scanning the rows already done; it is built concurrently (no write is blocked) and 0027
-- drops it. Then each NOT VALID check of 0025 is validated, which reads the table without
-- blocking writes, so 0027's SET NOT NULL needs no scan of its own. The checks are added only
-- after the backfill: a NOT VALID check still holds every updated row to it, and a transition
-- on a row not yet filled would fail.
create index concurrently if not exists tasks_to_fill on tasks (id) where workspace_id is null;
update tasks t set workspace_id = f.workspace_id from flows f
  where t.id in (select id from tasks where workspace_id is null limit 5000) and f.id = t.flow_id;
create index concurrently if not exists task_dependencies_to_fill on task_dependencies (task_id, depends_on_id) where workspace_id is null;
update task_dependencies d set workspace_id = f.workspace_id from flows f
  where (d.task_id, d.depends_on_id) in (select task_id, depends_on_id from task_dependencies where workspace_id is null limit 5000)
    and f.id = d.flow_id;
update comments c set workspace_id = f.workspace_id from flows f
  where c.id in (select id from comments where workspace_id is null limit 5000) and f.id = c.flow_id;
update deliverables d set workspace_id = f.workspace_id from flows f
  where d.id in (select id from deliverables where workspace_id is null limit 5000) and f.id = d.flow_id;
update attachments a set workspace_id = f.workspace_id from flows f
  where a.id in (select id from attachments where workspace_id is null limit 5000) and f.id = a.flow_id;
update ideas i set workspace_id = b.workspace_id from brainstorms b
  where i.id in (select id from ideas where workspace_id is null limit 5000) and b.id = i.brainstorm_id;
update idea_comments c set workspace_id = b.workspace_id from brainstorms b
  where c.id in (select id from idea_comments where workspace_id is null limit 5000) and b.id = c.brainstorm_id;
update idea_attachments a set workspace_id = b.workspace_id from brainstorms b
  where a.id in (select id from idea_attachments where workspace_id is null limit 5000) and b.id = a.brainstorm_id;
update webhook_lanes l set workspace_id = w.workspace_id from webhooks w
  where (l.webhook_id, l.flow_key) in (select webhook_id, flow_key from webhook_lanes where workspace_id is null limit 5000)
    and w.id = l.webhook_id;
update webhook_log l set workspace_id = w.workspace_id from webhooks w
  where l.id in (select id from webhook_log where workspace_id is null limit 5000) and w.id = l.webhook_id;
-- A blob's chunks take the workspace of the attachment holding it. Chunks no attachment holds
-- are an upload cut off (or in flight at this moment, which then fails and is sent again): the
-- sweep would remove them anyway, and no workspace can be named for them.
update blob_chunks c set workspace_id = a.workspace_id from attachments a
  where a.blob_id = c.blob_id and c.workspace_id is null
    and c.blob_id in (select k.blob_id from blob_chunks k join attachments h on h.blob_id = k.blob_id
                      where k.workspace_id is null limit 5000);
update blob_chunks c set workspace_id = a.workspace_id from idea_attachments a
  where a.blob_id = c.blob_id and c.workspace_id is null
    and c.blob_id in (select k.blob_id from blob_chunks k join idea_attachments h on h.blob_id = k.blob_id
                      where k.workspace_id is null limit 5000);
delete from blob_chunks where (blob_id, seq) in (select blob_id, seq from blob_chunks where workspace_id is null limit 5000);
alter table tasks add constraint tasks_workspace_set check (workspace_id is not null) not valid;
alter table task_dependencies add constraint task_dependencies_workspace_set check (workspace_id is not null) not valid;
alter table comments add constraint comments_workspace_set check (workspace_id is not null) not valid;
alter table deliverables add constraint deliverables_workspace_set check (workspace_id is not null) not valid;
alter table attachments add constraint attachments_workspace_set check (workspace_id is not null) not valid;
alter table blob_chunks add constraint blob_chunks_workspace_set check (workspace_id is not null) not valid;
alter table ideas add constraint ideas_workspace_set check (workspace_id is not null) not valid;
alter table idea_comments add constraint idea_comments_workspace_set check (workspace_id is not null) not valid;
alter table idea_attachments add constraint idea_attachments_workspace_set check (workspace_id is not null) not valid;
alter table webhook_lanes add constraint webhook_lanes_workspace_set check (workspace_id is not null) not valid;
alter table webhook_log add constraint webhook_log_workspace_set check (workspace_id is not null) not valid;
alter table tasks validate constraint tasks_workspace_set;
alter table task_dependencies validate constraint task_dependencies_workspace_set;
alter table comments validate constraint comments_workspace_set;
alter table deliverables validate constraint deliverables_workspace_set;
alter table attachments validate constraint attachments_workspace_set;
alter table blob_chunks validate constraint blob_chunks_workspace_set;
alter table ideas validate constraint ideas_workspace_set;
alter table idea_comments validate constraint idea_comments_workspace_set;
alter table idea_attachments validate constraint idea_attachments_workspace_set;
alter table webhook_lanes validate constraint webhook_lanes_workspace_set;
alter table webhook_log validate constraint webhook_log_workspace_set;
create unique index concurrently if not exists tasks_key on tasks (id, workspace_id);
create unique index concurrently if not exists flows_key on flows (id, workspace_id);
create unique index concurrently if not exists task_dependencies_key on task_dependencies (task_id, depends_on_id, workspace_id);

-- A stored Idempotency-Key response belongs to the principal that made it: the credential, and
-- for a person token also the person and the workspace the token acts in (src/http/edge.ts).
-- Rows kept from before are keyed by credential alone, which no principal key equals now: a
-- person repeating an old key gets a fresh execution, never another person's answer.
alter table idempotency_keys rename column credential_id to principal;

-- Uploads are written in bounded chunks as they arrive (src/store/blobs.store.ts), then taken
-- over by the file row that names them; chunks no row took over are removed.
create table blob_chunks (
  blob_id     text not null,
  seq         integer not null,
  data        bytea not null,
  created_at  timestamptz not null default now(),
  primary key (blob_id, seq)
);
create index blob_chunks_first on blob_chunks (created_at) where seq = 0;

alter table attachments alter column content drop not null, add column blob_id text,
  add constraint attachments_bytes check (content is not null or blob_id is not null);
alter table idea_attachments alter column content drop not null, add column blob_id text,
  add constraint idea_attachments_bytes check (content is not null or blob_id is not null);
create index attachments_blob on attachments (blob_id) where blob_id is not null;
create index idea_attachments_blob on idea_attachments (blob_id) where blob_id is not null;

-- The storage quota sums a workspace's files through its flows and brainstorms.
create index attachments_flow on attachments (flow_id);
create index idea_attachments_brainstorm on idea_attachments (brainstorm_id);

/** Brainstorms, their ideas, idea comments and files, and brainstorm shares. */
import { readBlob } from './blobs.store.ts';
import type { Db } from './db.ts';
import type { ShareRole } from '../contract/vocabulary.ts';
import type { Page, PageRequest } from '../platform/paging.ts';
import { pageOf } from './paging.ts';

export interface BrainstormRow {
  id: string;
  workspaceId: string;
  name: string;
  archived: boolean;
  publicToken: string | null;
  version: number;
  ideaCount: number;
  createdAt: Date;
  updatedAt: Date;
  /** The caller's share role when they see it as a guest; null in its own workspace. */
  guestRole: ShareRole | null;
}

export interface IdeaRow {
  id: string;
  brainstormId: string;
  parentId: string | null;
  title: string;
  notes: string | null;
  tags: string[];
  assigneeId: string | null;
  commentCount: number;
  fileCount: number;
  createdAt: Date;
}

export interface NewIdeaRow {
  id: string;
  parentId: string | null;
  title: string;
  notes: string | null;
  tags: string[];
  assigneeId: string | null;
}

/** Who is looking: their workspace, and the person (guests see what was shared with them). */
export interface Viewer {
  workspaceId: string;
  userId: string | null;
}

const boardColumns = (
  sql: Db,
  viewer: Viewer,
) => sql`b.id, b.workspace_id, b.name, b.archived, b.public_token,
  b.version::int as version, b.created_at, b.updated_at,
  (select count(*) from ideas i where i.brainstorm_id = b.id and i.workspace_id = b.workspace_id)::int as idea_count,
  case when b.workspace_id = ${viewer.workspaceId} then null
       else (select s.role from brainstorm_shares s where s.brainstorm_id = b.id
             and s.workspace_id = b.workspace_id and s.user_id = ${viewer.userId}) end as guest_role`;

/** Boards of the viewer's workspace, and those shared with the person acting. */
const visible = (sql: Db, viewer: Viewer) =>
  viewer.userId
    ? sql`(b.workspace_id = ${viewer.workspaceId}
        or b.id in (select brainstorm_id from brainstorm_shares where user_id = ${viewer.userId}))`
    : sql`b.workspace_id = ${viewer.workspaceId}`;

export async function insertBrainstorm(
  sql: Db,
  row: { id: string; workspaceId: string; name: string },
): Promise<void> {
  await sql`insert into brainstorms (id, workspace_id, name) values (${row.id}, ${row.workspaceId}, ${row.name})`;
}

/** The board as the viewer may see it; `lock` holds its row until the transaction ends. */
export async function findBrainstorm(
  sql: Db,
  viewer: Viewer,
  id: string,
  lock = false,
): Promise<BrainstormRow | null> {
  const [row] = await sql<BrainstormRow[]>`select ${boardColumns(sql, viewer)} from brainstorms b
    where b.id = ${id} and ${visible(sql, viewer)} ${lock ? sql`for update of b` : sql``}`;
  return row ?? null;
}

/** The board's version, when the viewer may see it: the cheap ETag of GET. */
export async function brainstormVersion(
  sql: Db,
  viewer: Viewer,
  id: string,
): Promise<number | null> {
  const [row] = await sql<{ version: number }[]>`select b.version::int as version from brainstorms b
    where b.id = ${id} and ${visible(sql, viewer)}`;
  return row?.version ?? null;
}

export async function pageBrainstorms(
  sql: Db,
  viewer: Viewer,
  filter: PageRequest & { archived: boolean; q?: string },
): Promise<Page<BrainstormRow>> {
  const match = filter.q
    ? sql`and b.name ilike ${'%' + filter.q.replace(/[\\%_]/g, '\\$&') + '%'}`
    : sql``;
  const where = sql`where ${visible(sql, viewer)} and b.archived = ${filter.archived} ${match}`;
  return pageOf<BrainstormRow>(
    sql,
    {
      columns: boardColumns(sql, viewer),
      source: sql`from brainstorms b ${where}`,
      order: sql`b.created_at desc, b.id desc`,
    },
    filter,
  );
}

/**
 * Changes the board's own fields and bumps its version; `visible` also bumps the public
 * version, for changes the public view shows (name, titles, tags, tree).
 */
export async function touchBrainstorm(
  sql: Db,
  workspaceId: string,
  id: string,
  patch: {
    name?: string;
    archived?: boolean;
    publicToken?: { token: string; hash: string } | null;
    visible?: boolean;
  } = {},
): Promise<void> {
  const name = patch.name !== undefined ? sql`, name = ${patch.name}` : sql``;
  const archived = patch.archived !== undefined ? sql`, archived = ${patch.archived}` : sql``;
  const token =
    patch.publicToken !== undefined
      ? sql`, public_token = ${patch.publicToken?.token ?? null}, public_token_hash = ${patch.publicToken?.hash ?? null}`
      : sql``;
  const visible =
    patch.visible || patch.name !== undefined ? sql`, public_version = public_version + 1` : sql``;
  await sql`update brainstorms set version = version + 1, updated_at = now() ${name} ${archived} ${token} ${visible}
    where id = ${id} and workspace_id = ${workspaceId}`;
}

export async function deleteBrainstorm(sql: Db, workspaceId: string, id: string): Promise<void> {
  await sql`delete from brainstorms where id = ${id} and workspace_id = ${workspaceId}`;
}

// ── ideas ────────────────────────────────────────────────────────────────────────────

const ideaColumns = (
  sql: Db,
) => sql`i.id, i.brainstorm_id, i.parent_id, i.title, i.notes, i.tags, i.assignee_id, i.created_at,
  (select count(*) from idea_comments c where c.idea_id = i.id and c.workspace_id = i.workspace_id)::int as comment_count,
  (select count(*) from idea_attachments a where a.idea_id = i.id and a.workspace_id = i.workspace_id)::int as file_count`;

/** Inserts after the board's last idea, in the given order (batches keep each statement small). */
export async function insertIdeas(
  sql: Db,
  workspaceId: string,
  brainstormId: string,
  ideas: readonly NewIdeaRow[],
): Promise<void> {
  const [last] = await sql<
    { position: number }[]
  >`select coalesce(max(position), 0)::int as position from ideas
    where brainstorm_id = ${brainstormId} and workspace_id = ${workspaceId}`;
  const rows = ideas.map((idea, i) => ({
    id: idea.id,
    workspace_id: workspaceId,
    brainstorm_id: brainstormId,
    parent_id: idea.parentId,
    title: idea.title,
    notes: idea.notes,
    tags: sql.array(idea.tags),
    assignee_id: idea.assigneeId,
    position: last!.position + i + 1,
  }));
  for (let i = 0; i < rows.length; i += 2000) {
    await sql`insert into ideas ${sql(rows.slice(i, i + 2000), 'id', 'workspace_id', 'brainstorm_id', 'parent_id', 'title', 'notes', 'tags', 'assignee_id', 'position')}`;
  }
}

export async function listIdeas(
  sql: Db,
  workspaceId: string,
  brainstormId: string,
): Promise<IdeaRow[]> {
  return sql<IdeaRow[]>`select ${ideaColumns(sql)} from ideas i
    where i.brainstorm_id = ${brainstormId} and i.workspace_id = ${workspaceId} order by i.position`;
}

export async function findIdea(
  sql: Db,
  workspaceId: string,
  brainstormId: string,
  id: string,
): Promise<IdeaRow | null> {
  const [row] = await sql<IdeaRow[]>`select ${ideaColumns(sql)} from ideas i
    where i.id = ${id} and i.brainstorm_id = ${brainstormId} and i.workspace_id = ${workspaceId}`;
  return row ?? null;
}

/** Every idea's parent: the tree the re-parent check walks. */
/** Each idea of the board: its parent, and its title (to name a cycle a re-parent would make). */
export async function ideaParents(
  sql: Db,
  workspaceId: string,
  brainstormId: string,
): Promise<Map<string, { parentId: string | null; title: string }>> {
  const rows = await sql<
    { id: string; parentId: string | null; title: string }[]
  >`select id, parent_id, title from ideas
    where brainstorm_id = ${brainstormId} and workspace_id = ${workspaceId}`;
  return new Map(rows.map((r) => [r.id, { parentId: r.parentId, title: r.title }]));
}

export async function updateIdea(
  sql: Db,
  workspaceId: string,
  id: string,
  patch: Partial<Pick<NewIdeaRow, 'parentId' | 'title' | 'notes' | 'tags' | 'assigneeId'>>,
): Promise<void> {
  const set = [
    patch.title !== undefined && sql`title = ${patch.title}`,
    patch.notes !== undefined && sql`notes = ${patch.notes}`,
    patch.tags !== undefined && sql`tags = ${sql.array(patch.tags)}`,
    patch.parentId !== undefined && sql`parent_id = ${patch.parentId}`,
    patch.assigneeId !== undefined && sql`assignee_id = ${patch.assigneeId}`,
  ].filter((part) => part !== false);
  const assignments = set.reduce((list, part) => sql`${list}, ${part}`, sql`updated_at = now()`);
  await sql`update ideas set ${assignments} where id = ${id} and workspace_id = ${workspaceId}`;
}

/** Removes the idea; its children move up to its parent (root ideas when it had none). */
export async function deleteIdea(
  sql: Db,
  workspaceId: string,
  brainstormId: string,
  id: string,
  parentId: string | null,
): Promise<void> {
  await sql`update ideas set parent_id = ${parentId}, updated_at = now()
    where brainstorm_id = ${brainstormId} and parent_id = ${id} and workspace_id = ${workspaceId}`;
  await sql`delete from ideas where id = ${id} and workspace_id = ${workspaceId}`;
}

// ── comments and files ───────────────────────────────────────────────────────────────

export interface IdeaCommentRow {
  id: string;
  ideaId: string;
  authorId: string;
  authorName: string | null;
  body: string;
  createdAt: Date;
}

export async function insertIdeaComment(
  sql: Db,
  row: Omit<IdeaCommentRow, 'createdAt'> & { workspaceId: string; brainstormId: string },
): Promise<IdeaCommentRow> {
  const [created] = await sql<
    IdeaCommentRow[]
  >`insert into idea_comments (id, workspace_id, idea_id, brainstorm_id, author_id, author_name, body)
    values (${row.id}, ${row.workspaceId}, ${row.ideaId}, ${row.brainstormId}, ${row.authorId}, ${row.authorName}, ${row.body})
    returning id, idea_id, author_id, author_name, body, created_at`;
  return created!;
}

export async function pageIdeaComments(
  sql: Db,
  workspaceId: string,
  ideaId: string,
  page: PageRequest,
): Promise<Page<IdeaCommentRow>> {
  return pageOf<IdeaCommentRow>(
    sql,
    {
      columns: sql`id, idea_id, author_id, author_name, body, created_at`,
      source: sql`from idea_comments where idea_id = ${ideaId} and workspace_id = ${workspaceId}`,
      order: sql`created_at, id`,
    },
    page,
  );
}

export interface IdeaFileRow {
  id: string;
  name: string;
  mimeType: string;
  sizeBytes: number;
  uploadedAt: Date;
}

const fileColumns = (sql: Db) =>
  sql`id, name, mime_type, size_bytes::int as size_bytes, uploaded_at`;

export async function insertIdeaFile(
  sql: Db,
  /** `blobId`: the staged upload (blobs.store.ts) this row takes over. */
  row: {
    id: string;
    workspaceId: string;
    ideaId: string;
    brainstormId: string;
    name: string;
    mimeType: string;
    sizeBytes: number;
    blobId: string;
    uploadedBy: string;
  },
): Promise<IdeaFileRow> {
  const [created] = await sql<IdeaFileRow[]>`insert into idea_attachments
      (id, workspace_id, idea_id, brainstorm_id, name, mime_type, size_bytes, blob_id, uploaded_by)
    values (${row.id}, ${row.workspaceId}, ${row.ideaId}, ${row.brainstormId}, ${row.name}, ${row.mimeType}, ${row.sizeBytes}, ${row.blobId}, ${row.uploadedBy})
    returning ${fileColumns(sql)}`;
  return created!;
}

export async function pageIdeaFiles(
  sql: Db,
  workspaceId: string,
  ideaId: string,
  page: PageRequest,
): Promise<Page<IdeaFileRow>> {
  return pageOf<IdeaFileRow>(
    sql,
    {
      columns: fileColumns(sql),
      source: sql`from idea_attachments where idea_id = ${ideaId} and workspace_id = ${workspaceId}`,
      order: sql`uploaded_at, id`,
    },
    page,
  );
}

export async function ideaFileContent(
  sql: Db,
  workspaceId: string,
  ideaId: string,
  id: string,
): Promise<{ name: string; mimeType: string; content: Buffer } | null> {
  const [row] = await sql<
    { name: string; mimeType: string; content: Buffer | null; blobId: string | null }[]
  >`select name, mime_type, content, blob_id
    from idea_attachments where id = ${id} and idea_id = ${ideaId} and workspace_id = ${workspaceId}`;
  if (!row) return null;
  return {
    name: row.name,
    mimeType: row.mimeType,
    content: row.content ?? (await readBlob(sql, workspaceId, row.blobId ?? '')),
  };
}

// ── shares ───────────────────────────────────────────────────────────────────────────

export interface BrainstormShareRow {
  id: string;
  email: string;
  role: ShareRole;
  brainstormId: string;
  createdAt: Date;
}

const shareColumns = (sql: Db) => sql`s.id, u.email, s.role, s.brainstorm_id, s.created_at`;

/** Shares the board with the person, or changes the role of their share (same id). */
export async function upsertBrainstormShare(
  sql: Db,
  row: { id: string; workspaceId: string; brainstormId: string; userId: string; role: ShareRole },
): Promise<BrainstormShareRow> {
  const [share] = await sql<BrainstormShareRow[]>`with s as (
      insert into brainstorm_shares (id, workspace_id, brainstorm_id, user_id, role)
      values (${row.id}, ${row.workspaceId}, ${row.brainstormId}, ${row.userId}, ${row.role})
      on conflict (brainstorm_id, user_id, workspace_id) do update set role = excluded.role, updated_at = now()
      returning *)
    select ${shareColumns(sql)} from s join users u on u.id = s.user_id`;
  return share!;
}

export async function pageBrainstormShares(
  sql: Db,
  workspaceId: string,
  brainstormId: string,
  page: PageRequest,
): Promise<Page<BrainstormShareRow>> {
  return pageOf<BrainstormShareRow>(
    sql,
    {
      columns: shareColumns(sql),
      source: sql`from brainstorm_shares s join users u on u.id = s.user_id where s.brainstorm_id = ${brainstormId} and s.workspace_id = ${workspaceId}`,
      order: sql`s.created_at, s.id`,
    },
    page,
  );
}

/** Changes the role of the board's share; null when the board has no share with this id. */
export async function setBrainstormShareRole(
  sql: Db,
  workspaceId: string,
  brainstormId: string,
  id: string,
  role: ShareRole,
): Promise<BrainstormShareRow | null> {
  const [share] = await sql<BrainstormShareRow[]>`with s as (
      update brainstorm_shares set role = ${role}, updated_at = now() where id = ${id} and brainstorm_id = ${brainstormId}
        and workspace_id = ${workspaceId}
      returning *)
    select ${shareColumns(sql)} from s join users u on u.id = s.user_id`;
  return share ?? null;
}

export async function deleteBrainstormShare(
  sql: Db,
  workspaceId: string,
  brainstormId: string,
  id: string,
): Promise<boolean> {
  const rows = await sql`delete from brainstorm_shares
      where id = ${id} and brainstorm_id = ${brainstormId} and workspace_id = ${workspaceId} returning id`;
  return rows.length > 0;
}

// ── the public view ──────────────────────────────────────────────────────────────────

/** The published board whose token hashes to `hash`, with only what the public may see (and its public version). */
export interface PublishedBoardRow {
  id: string;
  workspaceId: string;
  name: string;
  version: number;
}

/**
 * The live board published under the token whose sha256 is `hash`, or null: one probe of a
 * unique index. An archived board keeps its token, so a restore brings the link back.
 */
export async function publishedBoard(sql: Db, hash: string): Promise<PublishedBoardRow | null> {
  const [board] = await sql<
    PublishedBoardRow[]
  >`select id, workspace_id, name, public_version::int as version
    from brainstorms where public_token_hash = ${hash} and not archived`;
  return board ?? null;
}

/** A board's ideas as the public sees them: titles, tags and tree position, in board order. */
export async function publicIdeas(
  sql: Db,
  workspaceId: string,
  brainstormId: string,
): Promise<{ id: string; title: string; tags: string[]; parentId: string | null }[]> {
  return sql<
    { id: string; title: string; tags: string[]; parentId: string | null }[]
  >`select id, title, tags, parent_id
    from ideas where brainstorm_id = ${brainstormId} and workspace_id = ${workspaceId} order by position`;
}

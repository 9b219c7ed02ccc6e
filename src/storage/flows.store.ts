/** Flows, tasks, dependencies and deliverables: loading a flow's state and writing its changes. */
import type { Db } from './db.ts';

/** A flow's stored facts as the domain holds them (services/flows/model.ts re-exports these). */
export interface Deliverable {
  readonly id: string;
  readonly name: string;
  readonly satisfied: boolean;
}

export interface EstimateRange {
  readonly low: number;
  readonly high: number;
}

export interface TaskRecord {
  readonly id: string;
  readonly parentId: string | null;
  readonly name: string;
  readonly description: string | null;
  readonly estimateHours: number | null;
  /** The least and the most hours the task may take, around estimateHours (CONTRACT §5). */
  readonly estimateRange: EstimateRange | null;
  readonly assigneeId: string | null;
  /** A progress code (the engine's PROGRESS, src/engine/status.ts), kept as stored: storage does not import the engine. */
  readonly progress: 0 | 1 | 2;
  readonly position: number;
  /** Ids of the tasks that must be done first (objectives only; sub-tasks have none). */
  readonly dependsOn: readonly string[];
  readonly deliverables: readonly Deliverable[];
  readonly createdAt: string;
  readonly updatedAt: string;
}

export interface FlowRecord {
  readonly id: string;
  readonly workspaceId: string;
  readonly name: string;
  readonly description: string | null;
  readonly dueDate: string | null;
  readonly archived: boolean;
  readonly publicToken: string | null;
  readonly version: number;
  readonly createdAt: string;
  readonly updatedAt: string;
}

export interface FlowState {
  readonly flow: FlowRecord;
  /** In creation order (position). */
  readonly tasks: readonly TaskRecord[];
}
import type { Page, PageRequest } from '../platform/paging.ts';
import { pageOf } from './paging.ts';

interface FlowRow {
  id: string;
  workspaceId: string;
  name: string;
  description: string | null;
  dueDate: Date | null;
  archived: boolean;
  publicToken: string | null;
  version: string;
  createdAt: Date;
  updatedAt: Date;
}

interface TaskRow {
  id: string;
  parentId: string | null;
  name: string;
  description: string | null;
  estimateHours: number | null;
  estimateLow: number | null;
  estimateHigh: number | null;
  assigneeId: string | null;
  progress: TaskRecord['progress'];
  position: string;
  dependsOn: string[];
  deliverables: Deliverable[];
  createdAt: Date;
  updatedAt: Date;
}

const iso = (date: Date) => date.toISOString();

/** The lists of a task that has none, shared by every such task (frozen: no one may add to them). */
export const NO_TASK_IDS: readonly string[] = Object.freeze([]);
export const NO_DELIVERABLES: readonly Deliverable[] = Object.freeze([]);

function flowRecord(row: FlowRow): FlowRecord {
  return {
    id: row.id,
    workspaceId: row.workspaceId,
    name: row.name,
    description: row.description,
    dueDate: row.dueDate ? iso(row.dueDate) : null,
    archived: row.archived,
    publicToken: row.publicToken,
    version: Number(row.version),
    createdAt: iso(row.createdAt),
    updatedAt: iso(row.updatedAt),
  };
}

/** The flow's whole state, or null when it does not exist in this workspace. */
export async function loadFlowState(
  sql: Db,
  workspaceId: string,
  flowId: string,
): Promise<FlowState | null> {
  const [flow] = await sql<
    FlowRow[]
  >`select id, workspace_id, name, description, due_date, archived, public_token,
      version, created_at, updated_at
    from flows where id = ${flowId} and workspace_id = ${workspaceId}`;
  if (!flow) return null;
  const rows = await sql<
    TaskRow[]
  >`select t.id, t.parent_id, t.name, t.description, t.estimate_hours, t.estimate_low,
      t.estimate_high, t.assignee_id,
      t.progress, t.position, t.created_at, t.updated_at,
      coalesce((select array_agg(d.depends_on_id order by d.depends_on_id) from task_dependencies d
          where d.task_id = t.id and d.workspace_id = t.workspace_id), '{}') as depends_on,
      coalesce((select json_agg(json_build_object('id', v.id, 'name', v.name, 'satisfied',
          exists (select 1 from attachments a where a.deliverable_id = v.id and a.workspace_id = v.workspace_id))
          order by v.created_at, v.id)
        from deliverables v where v.task_id = t.id and v.workspace_id = t.workspace_id), '[]') as deliverables
    from tasks t where t.flow_id = ${flowId} and t.workspace_id = ${workspaceId} order by t.position`;
  // One string per id and per timestamp and one empty list for every task that has none: a hot
  // flow stays in memory, and each of its objects is marked by every full collection. Parsed as
  // they come, a dependency's id would be a slice of its row's array text, and tasks written
  // together would each hold their times (100k tasks' records took 61 MB so, 23 MB now).
  const ids = new Map(rows.map((row) => [row.id, row.id]));
  const times = new Map<number, string>();
  const time = (date: Date) => {
    let text = times.get(date.getTime());
    if (text === undefined) times.set(date.getTime(), (text = iso(date)));
    return text;
  };
  const tasks: TaskRecord[] = rows.map((row) => ({
    id: row.id,
    parentId: row.parentId,
    name: row.name,
    description: row.description,
    estimateHours: row.estimateHours,
    estimateRange:
      row.estimateLow === null || row.estimateHigh === null
        ? null
        : { low: row.estimateLow, high: row.estimateHigh },
    assigneeId: row.assigneeId,
    progress: row.progress,
    position: Number(row.position),
    dependsOn:
      row.dependsOn.length === 0 ? NO_TASK_IDS : row.dependsOn.map((id) => ids.get(id) ?? id),
    deliverables: row.deliverables.length === 0 ? NO_DELIVERABLES : row.deliverables,
    createdAt: time(row.createdAt),
    updatedAt: time(row.updatedAt),
  }));
  return { flow: flowRecord(flow), tasks };
}

export async function insertFlow(sql: Db, flow: FlowRecord): Promise<void> {
  await sql`insert into flows (id, workspace_id, name, description, due_date, archived, public_token, version, created_at, updated_at)
    values (${flow.id}, ${flow.workspaceId}, ${flow.name}, ${flow.description}, ${flow.dueDate}, ${flow.archived},
            ${flow.publicToken}, ${flow.version}, ${flow.createdAt}, ${flow.updatedAt})`;
}

/** Bumps the version only if it is still the one this process holds (another process may have written). */
export async function bumpVersion(sql: Db, flow: FlowRecord): Promise<boolean> {
  const rows =
    await sql`update flows set version = version + 1, name = ${flow.name}, description = ${flow.description},
      due_date = ${flow.dueDate}, archived = ${flow.archived}, public_token = ${flow.publicToken}, updated_at = ${flow.updatedAt}
    where id = ${flow.id} and workspace_id = ${flow.workspaceId} and version = ${flow.version - 1}
    returning version`;
  return rows.length === 1;
}

/** Holds the flow's row until the transaction ends: no other writer commits to it meanwhile. */
export async function lockFlow(tx: Db, workspaceId: string, flowId: string): Promise<void> {
  await tx`select id from flows where id = ${flowId} and workspace_id = ${workspaceId} for update`;
}

/** The flow's committed version; null when it is gone. */
export async function flowVersion(
  sql: Db,
  workspaceId: string,
  flowId: string,
): Promise<number | null> {
  const [row] = await sql<
    { version: number }[]
  >`select version from flows where id = ${flowId} and workspace_id = ${workspaceId}`;
  return row ? Number(row.version) : null;
}

export async function insertTasks(
  sql: Db,
  workspaceId: string,
  flowId: string,
  tasks: readonly TaskRecord[],
): Promise<void> {
  if (tasks.length === 0) return;
  // Sub-tasks reference their objective: objectives first (the rows go in the arrays' order).
  const ordered = [
    ...tasks.filter((t) => t.parentId === null),
    ...tasks.filter((t) => t.parentId !== null),
  ];
  const column = <K extends keyof TaskRecord>(key: K) => ordered.map((task) => task[key]);
  const range = (end: keyof EstimateRange) =>
    ordered.map((task) => task.estimateRange?.[end] ?? null) as number[];
  // Arrays, not a VALUES row per task: one statement text whatever the count, so it is prepared
  // once per connection (each new count was a Parse and a round trip before the insert ran),
  // and no bind limit to chunk under.
  await sql`insert into tasks (id, workspace_id, flow_id, parent_id, name, description, estimate_hours,
      estimate_low, estimate_high, assignee_id, progress, position, created_at, updated_at)
    select u.id, ${workspaceId}, ${flowId}, u.parent_id, u.name, u.description, u.estimate_hours,
      u.estimate_low, u.estimate_high, u.assignee_id, u.progress, u.position, u.created_at, u.updated_at
    from unnest(${column('id')}::text[], ${column('parentId') as string[]}::text[], ${column('name')}::text[],
      ${column('description') as string[]}::text[], ${column('estimateHours') as number[]}::double precision[],
      ${range('low')}::double precision[], ${range('high')}::double precision[],
      ${column('assigneeId') as string[]}::text[], ${column('progress')}::smallint[], ${column('position')}::bigint[],
      ${column('createdAt')}::timestamptz[], ${column('updatedAt')}::timestamptz[])
      as u(id, parent_id, name, description, estimate_hours, estimate_low, estimate_high, assignee_id, progress,
        position, created_at, updated_at)`;
}

export async function updateTask(sql: Db, workspaceId: string, task: TaskRecord): Promise<void> {
  await sql`update tasks set name = ${task.name}, description = ${task.description}, estimate_hours = ${task.estimateHours},
      estimate_low = ${task.estimateRange?.low ?? null}, estimate_high = ${task.estimateRange?.high ?? null},
      assignee_id = ${task.assigneeId}, progress = ${task.progress}, updated_at = ${task.updatedAt},
      started_at = case when ${task.progress} >= 1 then coalesce(started_at, now()) else null end,
      completed_at = case when ${task.progress} = 2 then coalesce(completed_at, now()) else null end
    where id = ${task.id} and workspace_id = ${workspaceId}`;
}

/** updateTask for many tasks, in one statement. */
export async function updateTasks(
  sql: Db,
  workspaceId: string,
  tasks: readonly TaskRecord[],
): Promise<void> {
  if (tasks.length === 0) return;
  const column = <K extends keyof TaskRecord>(key: K) => tasks.map((task) => task[key]);
  const range = (end: keyof EstimateRange) =>
    tasks.map((task) => task.estimateRange?.[end] ?? null) as number[];
  await sql`update tasks as t set name = u.name, description = u.description, estimate_hours = u.estimate_hours,
      estimate_low = u.estimate_low, estimate_high = u.estimate_high,
      assignee_id = u.assignee_id, progress = u.progress, updated_at = u.updated_at,
      started_at = case when u.progress >= 1 then coalesce(t.started_at, now()) else null end,
      completed_at = case when u.progress = 2 then coalesce(t.completed_at, now()) else null end
    from unnest(${column('id')}::text[], ${column('name')}::text[], ${column('description') as string[]}::text[],
      ${column('estimateHours') as number[]}::double precision[], ${range('low')}::double precision[],
      ${range('high')}::double precision[], ${column('assigneeId') as string[]}::text[],
      ${column('progress')}::smallint[], ${column('updatedAt')}::timestamptz[])
      as u(id, name, description, estimate_hours, estimate_low, estimate_high, assignee_id, progress, updated_at)
    where t.id = u.id and t.workspace_id = ${workspaceId}`;
}

export async function deleteTasks(
  sql: Db,
  workspaceId: string,
  ids: readonly string[],
): Promise<void> {
  if (ids.length > 0)
    await sql`delete from tasks where id in ${sql(ids as string[])} and workspace_id = ${workspaceId}`;
}

export async function insertDependencies(
  sql: Db,
  workspaceId: string,
  flowId: string,
  edges: readonly (readonly [task: string, dependsOn: string])[],
): Promise<void> {
  if (edges.length === 0) return;
  // Arrays: one statement text whatever the count (see insertTasks).
  await sql`insert into task_dependencies (workspace_id, flow_id, task_id, depends_on_id)
    select ${workspaceId}, ${flowId}, u.task_id, u.depends_on_id
    from unnest(${edges.map((e) => e[0])}::text[], ${edges.map((e) => e[1])}::text[]) as u(task_id, depends_on_id)
    on conflict do nothing`;
}

export async function deleteDependencies(
  sql: Db,
  workspaceId: string,
  edges: readonly (readonly [task: string, dependsOn: string])[],
): Promise<void> {
  // Sent together: on one connection they still run in order, without a round trip each.
  await Promise.all(
    edges.map(
      ([task, dependsOn]) =>
        sql`delete from task_dependencies
          where task_id = ${task} and depends_on_id = ${dependsOn} and workspace_id = ${workspaceId}`,
    ),
  );
}

/**
 * Stores the difference between two states of one flow's tasks in a few statements: tasks
 * removed and added, dependencies dropped and made, and each changed task's row (a batch
 * of many commands is one change, written as one). Deliverables are not compared: no command
 * that changes several tasks at once touches them.
 */
export async function writeTaskChanges(
  sql: Db,
  flowId: string,
  before: FlowState,
  after: FlowState,
  beforeIndex: ReadonlyMap<string, number>,
): Promise<void> {
  let kept = 0;
  const added: TaskRecord[] = [];
  const changed: TaskRecord[] = [];
  const made: [string, string][] = [];
  const dropped: [string, string][] = [];
  const afterTasks = after.tasks;
  const beforeTasks = before.tasks;
  for (let j = 0; j < afterTasks.length; j++) {
    const task = afterTasks[j];
    if (task === undefined) continue;
    // Most tasks are the same record in the same place: no lookup.
    const same = beforeTasks[j];
    const i = same === task || same?.id === task.id ? j : beforeIndex.get(task.id);
    const old = i === undefined ? undefined : beforeTasks[i];
    if (!old) {
      added.push(task);
      for (const dep of task.dependsOn) made.push([task.id, dep]);
      continue;
    }
    kept++;
    if (old === task) continue;
    if (old.dependsOn !== task.dependsOn) {
      for (const dep of task.dependsOn) if (!old.dependsOn.includes(dep)) made.push([task.id, dep]);
      for (const dep of old.dependsOn)
        if (!task.dependsOn.includes(dep)) dropped.push([task.id, dep]);
    }
    if (
      old.name !== task.name ||
      old.description !== task.description ||
      old.estimateHours !== task.estimateHours ||
      old.estimateRange !== task.estimateRange ||
      old.assigneeId !== task.assigneeId ||
      old.progress !== task.progress ||
      old.updatedAt !== task.updatedAt
    )
      changed.push(task);
  }
  // A removed task takes its dependencies and sub-tasks with it (on delete cascade).
  let removed: string[] = [];
  if (kept < before.tasks.length) {
    const ids = new Set(after.tasks.map((task) => task.id));
    removed = before.tasks.filter((task) => !ids.has(task.id)).map((task) => task.id);
  }
  // Sent together, in this order (a batch makes far fewer than a chunk of rows of each): on one
  // connection they run one after another without a round trip each.
  const workspaceId = before.flow.workspaceId;
  await Promise.all([
    deleteDependencies(sql, workspaceId, dropped),
    deleteTasks(sql, workspaceId, removed),
    insertTasks(sql, workspaceId, flowId, added),
    insertDependencies(sql, workspaceId, flowId, made),
    updateTasks(sql, workspaceId, changed),
  ]);
}

export async function insertDeliverable(
  sql: Db,
  workspaceId: string,
  flowId: string,
  taskId: string,
  deliverable: { id: string; name: string },
): Promise<void> {
  await sql`insert into deliverables (id, workspace_id, task_id, flow_id, name)
    values (${deliverable.id}, ${workspaceId}, ${taskId}, ${flowId}, ${deliverable.name})`;
}

/** Channel on which committed flow versions are announced to every process. */
export const FLOWS_CHANNEL = 'flowplan_flows';

export async function announceFlowChange(
  sql: Db,
  workspaceId: string,
  flowId: string,
  version: number,
): Promise<void> {
  await sql`select pg_notify(${FLOWS_CHANNEL}, ${`${workspaceId}:${flowId}:${version}`})`;
}

export function parseFlowChange(
  payload: string,
): { workspaceId: string; flowId: string; version: number } | null {
  const [workspaceId, flowId, version] = payload.split(':');
  return workspaceId && flowId && version
    ? { workspaceId, flowId, version: Number(version) }
    : null;
}

export interface DomainEvent {
  type: string;
  data: Record<string, unknown>;
}

/** Events written to the outbox: NOTIFY at commit wakes the drain (src/services/jobs/outbox.ts) in every process. */
export const OUTBOX_CHANNEL = 'flowplan_outbox';

/**
 * Writes domain events to the outbox, and wakes the drain at commit: every event type is
 * written here, so none can reach the feed late by forgetting to wake it (Postgres sends
 * one NOTIFY per transaction for a repeated payload).
 */
export async function insertEvents(
  sql: Db,
  workspaceId: string,
  flowId: string | null,
  actorId: string | null,
  events: readonly DomainEvent[],
): Promise<void> {
  if (events.length === 0) return;
  // Arrays: one statement text whatever the count (see insertTasks). The ids, which order the
  // log, are taken in the list's order. The data go as text: a jsonb[] parameter's elements
  // would be encoded once more, as JSON strings.
  await Promise.all([
    sql`insert into outbox (workspace_id, flow_id, type, data, actor_id)
      select ${workspaceId}::text, ${flowId}::text, u.type, u.data::jsonb, ${actorId}::text
      from unnest(${events.map((e) => e.type)}::text[], ${events.map((e) => JSON.stringify(e.data))}::text[])
        with ordinality as u(type, data, n)
      order by u.n`,
    // Sent with the insert, after it: one round trip.
    sql`select pg_notify(${OUTBOX_CHANNEL}, '')`,
  ]);
}

/** One page of a workspace's flow ids, newest first, with the count of every match. */
export async function pageFlowIds(
  sql: Db,
  workspaceId: string,
  filter: PageRequest & { archived: boolean; q?: string },
): Promise<Page<{ id: string }>> {
  const match = filter.q
    ? sql`and name ilike ${'%' + filter.q.replace(/[\\%_]/g, '\\$&') + '%'}`
    : sql``;
  return pageOf<{ id: string }>(
    sql,
    {
      columns: sql`id`,
      source: sql`from flows where workspace_id = ${workspaceId} and archived = ${filter.archived} ${match}`,
      order: sql`created_at desc, id desc`,
    },
    filter,
  );
}

/** Every live (not archived) flow of a workspace, oldest first. */
export async function liveFlowIds(sql: Db, workspaceId: string): Promise<string[]> {
  const rows = await sql<
    { id: string }[]
  >`select id from flows where workspace_id = ${workspaceId} and not archived
    order by created_at, id`;
  return rows.map((r) => r.id);
}

/** The templates table (a copy of the catalogue, for search) and template uses per workspace. */
import type { Db, Sql } from './db.ts';

/** A template as the table keeps it (the catalogue itself lives in the templates service). */
export interface TemplateRecord {
  id: string;
  name: string;
  description: string;
  category: string;
  taskCount: number;
}

/**
 * Makes the templates table equal the catalogue: upserts every template, removes any that
 * left it. Idempotent and safe when two processes start at once (rows go in id order).
 * Run at start-up after migrations.
 */
export async function syncTemplates(sql: Sql, catalogue: readonly TemplateRecord[]): Promise<void> {
  const rows = [...catalogue]
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((def) => ({
      id: def.id,
      name: def.name,
      description: def.description,
      category: def.category,
      task_count: def.taskCount,
    }));
  const ids = rows.map((row) => row.id);
  await sql.begin(async (tx) => {
    if (rows.length > 0) {
      await tx`insert into templates ${tx(rows, 'id', 'name', 'description', 'category', 'task_count')}
        on conflict (id) do update set name = excluded.name, description = excluded.description,
          category = excluded.category, task_count = excluded.task_count, synced_at = now()
        where (templates.name, templates.description, templates.category, templates.task_count)
          is distinct from (excluded.name, excluded.description, excluded.category, excluded.task_count)`;
    }
    await tx`delete from templates where not (id = any(${ids}::text[]))`;
  });
}

/** How many flows this workspace started from each template (templates never used are absent). */
export async function templateUseCounts(
  sql: Db,
  workspaceId: string,
  templateId?: string,
): Promise<Map<string, number>> {
  const only = templateId === undefined ? sql`` : sql`and template_id = ${templateId}`;
  const rows = await sql<
    { templateId: string; uses: number }[]
  >`select template_id, count(*)::int as uses
    from template_uses where workspace_id = ${workspaceId} ${only} group by template_id`;
  return new Map(rows.map((row) => [row.templateId, row.uses]));
}

export async function insertTemplateUse(
  sql: Db,
  use: { templateId: string; workspaceId: string; flowId: string },
): Promise<void> {
  await sql`insert into template_uses (flow_id, template_id, workspace_id)
    values (${use.flowId}, ${use.templateId}, ${use.workspaceId}) on conflict (flow_id, workspace_id) do nothing`;
}

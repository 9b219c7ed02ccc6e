/**
 * Templates: the built-in catalogue as API views with per-workspace use counts, and
 * starting a flow from one.
 */
import type { Static } from '@sinclair/typebox';
import type {
  ListTemplatesQuery,
  StartFlowFromTemplateBody,
  TemplateDetailSchema,
  TemplateSchema,
} from '../../contract/template.schema.ts';
import { notFound } from '../../platform/errors.ts';
import { createFlow, type FlowContext } from '../flows/flows.service.ts';
import type { Snapshot } from '../flows/snapshot.ts';
import type { Db, Sql } from '../../storage/db.ts';
import {
  insertTemplateUse,
  syncTemplates,
  templateUseCounts,
} from '../../storage/templates.store.ts';
import { TEMPLATES, type TemplateDef } from './catalogue.ts';
import { previewTemplate, type TemplatePreview } from './preview.ts';
import type { Page } from '../../platform/paging.ts';

/**
 * Makes the templates table (kept for search) equal the catalogue. Idempotent; run at
 * start-up after migrations.
 */
export function syncCatalogue(sql: Sql): Promise<void> {
  return syncTemplates(
    sql,
    TEMPLATES.map((def) => ({
      id: def.id,
      name: def.name,
      description: def.description,
      category: def.category,
      taskCount: def.tasks.length,
    })),
  );
}

type TemplateView = Static<typeof TemplateSchema>;

const byId = new Map(TEMPLATES.map((def) => [def.id, def]));
const previews = new Map<string, TemplatePreview>();

function find(templateId: string): TemplateDef {
  const def = byId.get(templateId);
  if (!def) throw notFound('Template');
  return def;
}

function view(def: TemplateDef, usedCount: number): TemplateView {
  return {
    id: def.id,
    name: def.name,
    description: def.description,
    category: def.category,
    taskCount: def.tasks.length,
    usedCount,
  };
}

/** Catalogue order; `category` matches case-insensitively. */
export async function listTemplates(
  sql: Db,
  workspaceId: string,
  query: Static<typeof ListTemplatesQuery>,
): Promise<Page<TemplateView>> {
  const category = query.category?.toLowerCase();
  const defs =
    category === undefined ? TEMPLATES : TEMPLATES.filter((def) => def.category === category);
  const uses =
    defs.length > 0 ? await templateUseCounts(sql, workspaceId) : new Map<string, number>();
  return { total: defs.length, items: defs.map((def) => view(def, uses.get(def.id) ?? 0)) };
}

export async function getTemplate(
  sql: Db,
  workspaceId: string,
  templateId: string,
): Promise<Static<typeof TemplateDetailSchema>> {
  const def = find(templateId);
  const uses = await templateUseCounts(sql, workspaceId, def.id);
  let preview = previews.get(def.id);
  if (!preview) previews.set(def.id, (preview = previewTemplate(def)));
  return { ...view(def, uses.get(def.id) ?? 0), ...preview };
}

/** A new flow with the template's task graph; name defaults to the template's, description is the template's. */
export async function startFlowFromTemplate(
  ctx: FlowContext,
  templateId: string,
  body: Static<typeof StartFlowFromTemplateBody>,
): Promise<Snapshot> {
  const def = find(templateId);
  const snapshot = await createFlow(
    ctx,
    {
      name: body.name ?? def.name,
      description: def.description,
      ...(body.dueDate !== undefined ? { dueDate: body.dueDate } : {}),
      tasks: def.tasks.map((task) => ({
        name: task.name,
        ...(task.description !== undefined ? { description: task.description } : {}),
        estimateHours: task.estimateHours,
        estimateRange: { ...task.estimateRange },
        after: [...task.after],
      })),
    },
    [{ type: 'template.used', data: { templateId: def.id } }],
    // The use is counted in the flow's own transaction: both or neither.
    (tx, flowId) =>
      insertTemplateUse(tx, { templateId: def.id, workspaceId: ctx.principal.workspaceId, flowId }),
  );
  return snapshot;
}

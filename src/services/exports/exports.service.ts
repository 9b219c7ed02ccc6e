/**
 * `POST /v1/flows/{id}/exports`: gathers what the document shows from the flow's snapshot
 * (the schedule and report modules, not a second computation) and hands the drawing to the
 * render pool.
 */
import type { Principal } from '../auth/principal.ts';
import { flowReport } from '../flows/report.service.ts';
import { finishP80 } from '../flows/forecast.ts';
import type { RecomputePool } from '../flows/recompute-pool.ts';
import type { SessionRegistry } from '../flows/registry.ts';
import { buildSchedule, scheduleStart } from '../flows/schedule.ts';
import type { Sql } from '../../storage/db.ts';
import { diagramModel } from './diagram.ts';
import type { PlanDocument, PlanRow } from './pdf.ts';
import type { RenderService } from './render.service.ts';

export type ExportFormat = 'pdf' | 'png';

export interface ExportFile {
  bytes: Buffer;
  contentType: string;
  /** The Content-Disposition header: attachment, named after the flow. */
  disposition: string;
}

export interface ExportContext {
  sql: Sql;
  registry: SessionRegistry;
  render: RenderService;
  pool: RecomputePool;
  principal: Principal;
}

export async function exportFlow(
  ctx: ExportContext,
  flowId: string,
  format: ExportFormat,
  now = new Date(),
): Promise<ExportFile> {
  const snapshot = await ctx.registry.snapshot(ctx.principal.workspaceId, flowId);
  const start = scheduleStart(undefined, now);
  const model = diagramModel(snapshot, start, await finishP80(ctx.pool, snapshot, start));
  const disposition = contentDisposition(model.flowName, format);
  if (format === 'png')
    return { bytes: await ctx.render.png(model), contentType: 'image/png', disposition };

  const schedule = buildSchedule(snapshot, start);
  const report = await flowReport(ctx.sql, snapshot);
  const rows = schedule.entries
    .map((entry): PlanRow => {
      const i = snapshot.index.get(entry.taskId)!;
      const task = snapshot.state.tasks[i]!;
      const open = entry.earliestStart !== undefined;
      return {
        name: entry.taskName,
        status: snapshot.statusOf(entry.taskId),
        estimateHours: snapshot.hours(task, false),
        estimateRange: snapshot.hoursRange(task, false),
        critical: entry.criticalPath,
        startDay: open ? snapshot.es[i]! + 1 : null,
        finishDay: open ? snapshot.ef[i]! + 1 : null,
        start: entry.earliestStart ?? null,
        finish: entry.earliestFinish ?? null,
      };
    })
    .sort(
      (a, b) => (a.startDay ?? 0) - (b.startDay ?? 0) || (a.finishDay ?? 0) - (b.finishDay ?? 0),
    );
  const document: PlanDocument = {
    model,
    startDate: start,
    rows,
    report,
    unestimatedNames: report.unestimatedTasks.map((id) => snapshot.task(id)!.name),
    generatedAt: now,
  };
  return { bytes: await ctx.render.pdf(document), contentType: 'application/pdf', disposition };
}

/** An ASCII file name from a flow name: `Q3 Launch: Café` → `q3-launch-cafe`. */
export function slug(name: string): string {
  const ascii = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return ascii.slice(0, 80).replace(/-+$/, '') || 'flow';
}

/**
 * `attachment` with an ASCII `filename` for every client and, when the name has more than
 * ASCII, `filename*` in UTF-8 (RFC 6266 §4.3, RFC 5987) for those that read it.
 */
export function contentDisposition(flowName: string, extension: string): string {
  const ascii = `${slug(flowName)}.${extension}`;
  // Cut by code point on well-formed text: half a surrogate pair makes encodeURIComponent throw.
  const unicode = Array.from(
    flowName
      .toWellFormed()
      .normalize('NFC')
      .trim()
      .replace(/[\s/\\]+/g, '-')
      .replace(/[\u0000-\u001f\u007f"]/g, ''),
  )
    .slice(0, 80)
    .join('');
  if (/^[\x20-\x7e]*$/.test(flowName)) return `attachment; filename="${ascii}"`;
  const encoded = encodeURIComponent(`${unicode}.${extension}`).replace(
    /['()*!]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

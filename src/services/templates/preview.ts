/**
 * What a template would produce: its task graph by index, with the critical path and the
 * length in working days that the flow engine would derive for a fresh flow (every task
 * open, durations from estimates on the 8-hour working day). Computed once per template.
 */
import type { Static } from '@sinclair/typebox';
import type { TemplateDetailSchema } from '../../contract/template.schema.ts';
import { durationDays } from '../../engine/calendar.ts';
import { cpm } from '../../engine/cpm.ts';
import { buildGraph, topoOrder } from '../../engine/graph.ts';
import type { TemplateDef } from './catalogue.ts';

/** The task graph and the length in working days, of a template's detail view. */
export type TemplatePreview = Pick<Static<typeof TemplateDetailSchema>, 'tasks' | 'durationDays'>;

export function previewTemplate(def: TemplateDef): TemplatePreview {
  const n = def.tasks.length;
  const from: number[] = [];
  const to: number[] = [];
  def.tasks.forEach((task, i) => {
    for (const dep of new Set(task.after)) {
      from.push(dep);
      to.push(i);
    }
  });
  const graph = buildGraph(n, from, to);
  const topo = topoOrder(graph);
  // The catalogue is acyclic by construction (after points at earlier tasks; a test checks it).
  if (topo.cycle) throw new Error(`Template ${def.id} has a dependency cycle`);
  const duration = Uint32Array.from(def.tasks, (task) => durationDays(task.estimateHours));
  const result = cpm(graph, topo.order, new Uint8Array(n), duration);
  return {
    tasks: def.tasks.map((task, i) => ({
      index: i,
      name: task.name,
      description: task.description ?? null,
      estimateHours: task.estimateHours,
      estimateRange: { ...task.estimateRange },
      after: [...task.after],
      criticalPath: result.critical[i] === 1,
    })),
    durationDays: result.finish + 1,
  };
}

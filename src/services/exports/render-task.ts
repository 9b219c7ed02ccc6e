/** What the render worker (workers/render.worker.ts) is asked to draw, and what it hands back. */
import type { FromWorker } from '../../platform/worker-pool.ts';
import type { DiagramModel } from './diagram.ts';
import type { PlanDocument } from './pdf.ts';
import type { SvgOptions } from './svg.ts';

export type RenderTask =
  | { kind: 'svg'; model: DiagramModel; options?: SvgOptions }
  | { kind: 'png'; model: DiagramModel }
  | { kind: 'pdf'; document: PlanDocument };

/** The SVG text, or the PNG/PDF bytes. */
export type RenderOutput = FromWorker<{ result: string | Uint8Array }>;

/**
 * PNG of the dependency diagram through resvg, with DejaVu only (system fonts off), so
 * the image is byte-identical on every machine. A diagram too large for one legible image
 * (over MAX_PIXELS at full size) is drawn as its critical path, with a caption that says
 * how many tasks are shown; the PDF carries every task, page by page.
 */
import { Resvg } from '@resvg/resvg-js';
import type { DiagramModel } from './diagram.ts';
import { FONT_BOLD, FONT_REGULAR } from './fonts.ts';
import { layout, PITCH_X } from './layout.ts';
import { tileSvg } from './svg.ts';

/** The largest PNG an export draws (16 megapixels, 16,000 px a side: at most 64 MB of pixels in its worker). */
export const MAX_PIXELS = 16_000_000;
export const MAX_SIDE = 16_000;
/** Down to this zoom, the smallest text (11 px) stays readable (8 px). */
const MIN_ZOOM = 0.72;

const sizeOf = (svg: string) => {
  const [, w, h] = /width="([\d.]+)" height="([\d.]+)"/.exec(svg)!.map(Number) as [
    number,
    number,
    number,
  ];
  return { w, h };
};

/** The zoom that keeps the image within bounds, or null when text would get too small. */
function zoomFor(svg: string): number | null {
  const { w, h } = sizeOf(svg);
  const zoom = Math.min(1, MAX_SIDE / w, MAX_SIDE / h, Math.sqrt(MAX_PIXELS / (w * h)));
  return zoom >= MIN_ZOOM ? zoom : null;
}

/** The model restricted to its critical tasks (edges between them kept), as many as fit, and a caption that says why. */
function criticalView(
  model: DiagramModel,
  full: { w: number; h: number },
): { model: DiagramModel; caption: string } {
  const keep = new Map<number, number>();
  model.tasks.forEach((task, i) => task.critical && keep.set(i, keep.size));
  const maxTasks = Math.floor(MAX_SIDE / PITCH_X);
  const picked = [...keep.keys()].slice(0, maxTasks);
  const tasks = picked.map((i) => {
    const task = model.tasks[i]!;
    return {
      ...task,
      dependsOn: task.dependsOn
        .filter((d) => keep.has(d) && keep.get(d)! < maxTasks)
        .map((d) => keep.get(d)!),
    };
  });
  return {
    model: { ...model, tasks },
    caption:
      `The whole diagram (${Math.round(full.w)} × ${Math.round(full.h)} px) is over a PNG's maximum of ${MAX_PIXELS / 1e6} megapixels at a legible size: ` +
      `${tasks.length} of ${model.tasks.length} tasks are shown (the critical path); every task is in the PDF export`,
  };
}

export async function diagramPng(model: DiagramModel): Promise<Buffer> {
  let svg = tileSvg(model, await layout(model));
  let zoom = zoomFor(svg);
  if (zoom === null) {
    const view = criticalView(model, sizeOf(svg));
    svg = tileSvg(view.model, await layout(view.model), undefined, { caption: view.caption });
    zoom = zoomFor(svg) ?? MIN_ZOOM;
  }
  const resvg = new Resvg(svg, {
    font: {
      fontFiles: [FONT_REGULAR, FONT_BOLD],
      loadSystemFonts: false,
      defaultFontFamily: 'DejaVu Sans',
    },
    fitTo: { mode: 'zoom', value: zoom },
  });
  return resvg.render().asPng();
}

/**
 * PNG of the dependency diagram through resvg, with DejaVu only (system fonts off), so
 * the image is byte-identical on every machine. A diagram too large for one legible image
 * (over MAX_PIXELS at full size) is drawn as its critical path, with a caption that says
 * how many tasks are shown; the PDF carries every task, page by page.
 */
import { Resvg } from '@resvg/resvg-js';
import type { DiagramModel } from './diagram.ts';
import { FONT_BOLD, FONT_REGULAR } from './fonts.ts';
import { layout, PITCH_X, PITCH_Y, type Layout } from './layout.ts';
import { tileSvg } from './svg.ts';

const MAX_PIXELS = 24_000_000;
const MAX_SIDE = 16_000;

const fits = (l: Layout) => {
  const w = l.layers * PITCH_X + 64;
  const h = l.rows * PITCH_Y + 160;
  return w <= MAX_SIDE && h <= MAX_SIDE && w * h <= MAX_PIXELS;
};

/** The model restricted to its critical tasks (edges between them kept), as many as fit. */
function criticalView(model: DiagramModel): { model: DiagramModel; caption: string } {
  const keep = new Map<number, number>();
  model.tasks.forEach((task, i) => task.critical && keep.set(i, keep.size));
  const maxTasks = Math.floor(MAX_SIDE / PITCH_X);
  const picked = [...keep.keys()].slice(0, maxTasks);
  const tasks = picked.map((i) => {
    const task = model.tasks[i]!;
    return { ...task, dependsOn: task.dependsOn.filter((d) => keep.has(d) && keep.get(d)! < maxTasks).map((d) => keep.get(d)!) };
  });
  return {
    model: { ...model, tasks },
    caption: `${tasks.length} of ${model.tasks.length} tasks shown (the critical path); every task is in the PDF export`,
  };
}

export function diagramPng(model: DiagramModel): Buffer {
  let l = layout(model);
  let svg: string;
  if (fits(l)) svg = tileSvg(model, l);
  else {
    const view = criticalView(model);
    l = layout(view.model);
    svg = tileSvg(view.model, l, undefined, { caption: view.caption });
  }
  const resvg = new Resvg(svg, {
    font: { fontFiles: [FONT_REGULAR, FONT_BOLD], loadSystemFonts: false, defaultFontFamily: 'DejaVu Sans' },
    shapeRendering: 2,
    textRendering: 1,
  });
  return resvg.render().asPng();
}

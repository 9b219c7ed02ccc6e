/**
 * PNG of the dependency diagram through resvg, with DejaVu only (system fonts off), so
 * the image is byte-identical on every machine. A diagram too large for one legible image
 * (over MAX_PIXELS at full size) is drawn as its critical path, with a caption that says
 * how many tasks are shown; the PDF carries every task, page by page.
 */
import { Resvg } from '@resvg/resvg-js';
import type { DiagramModel } from './diagram.ts';
import { FONT_BOLD, FONT_REGULAR } from './fonts.ts';
import { outline } from './glyphs.ts';
import { layout, PITCH_X } from './layout.ts';
import { encodePng } from './png-encode.ts';
import { svgSize, tileSvg, type RasterOptions } from './svg.ts';

/** The largest PNG an export draws (16 megapixels, 16,000 px a side: at most 64 MB of pixels in its worker). */
export const MAX_PIXELS = 16_000_000;
export const MAX_SIDE = 16_000;
/** Down to this zoom, the smallest text (11 px) stays readable (8 px). */
const MIN_ZOOM = 0.72;

/** The zoom that keeps an image of this size within bounds, or null when text would get too small. */
function zoomFor({ w, h }: { w: number; h: number }): number | null {
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

/** Text that needs no shaping of resvg's drawn as glyph outlines, the whole diagram unclipped (see RasterOptions). */
const RASTER: RasterOptions = { outline, unclipped: true };

export async function diagramPng(model: DiagramModel): Promise<Buffer> {
  const whole = await layout(model);
  let zoom = zoomFor(svgSize(whole));
  let svg: string;
  if (zoom === null) {
    const view = criticalView(model, svgSize(whole));
    const critical = await layout(view.model);
    zoom = zoomFor(svgSize(critical)) ?? MIN_ZOOM;
    svg = tileSvg(view.model, critical, undefined, { caption: view.caption }, RASTER);
  } else svg = tileSvg(model, whole, undefined, {}, RASTER);
  const resvg = new Resvg(svg, {
    font: {
      fontFiles: [FONT_REGULAR, FONT_BOLD],
      loadSystemFonts: false,
      defaultFontFamily: 'DejaVu Sans',
    },
    fitTo: { mode: 'zoom', value: zoom },
    // Under the diagram's own white background: the image is opaque even where that falls
    // short of a pixel's edge (at a zoom below 1), as encodePng needs.
    background: '#ffffff',
  });
  const image = resvg.render();
  return encodePng(image.pixels, image.width, image.height);
}

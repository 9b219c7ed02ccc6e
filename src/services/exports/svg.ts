/**
 * SVG of the dependency diagram (or of one tile of it). Every piece of user text goes
 * through `html`, so a task named `</svg>` stays text. Colours are presentation attributes
 * with CSS classes beside them: standalone (an <img>, resvg, the PDF) the attributes give a
 * light theme; inlined in a page, the page's stylesheet can re-theme the classes (dark
 * mode) without an inline <style>, which a strict CSP would block. The critical path is
 * told apart by a thicker border and a "critical" label too, never by colour alone.
 */
import { html, oneLine, trusted, type Html } from '../../platform/html.ts';
import type { DiagramModel, DiagramTask } from './diagram.ts';
import { measurer } from './fonts.ts';
import { hoursText } from './hours.ts';
import {
  boxMeets,
  layout,
  NODE_H,
  NODE_W,
  routeMeets,
  wholeTile,
  type Layout,
  type Route,
  type Tile,
} from './layout.ts';
import type { Outline, TextRun } from './glyphs.ts';
import { cut, svgText, wrap, type Measure } from './text.ts';

export const FONT_FAMILY = 'DejaVu Sans, Verdana, sans-serif';
/** Sizes in SVG units; the PDF never scales a tile below MIN_SCALE, so no text is under 6 pt. */
export const FONT_NAME = 13;
export const FONT_SMALL = 12;
const MARGIN = 16;
const HEADER_H = 64;
/** A box's text keeps this far from its sides. */
const PAD = 8;
const CRITICAL_LABEL = 'critical';
/** Between a name's two baselines: DejaVu's ascent and descent at FONT_NAME (1.164 em) and a little air. */
const LINE_PITCH = 16;
const ARIA_CRITICAL_MAX = 30;

export const STATUS_LABEL: Record<DiagramTask['status'], string> = {
  blocked: 'Blocked',
  ready: 'Ready',
  in_progress: 'In progress',
  done: 'Done',
};
export const STATUS_FILL: Record<DiagramTask['status'], string> = {
  blocked: '#fbe9e7',
  ready: '#fff8e1',
  in_progress: '#e3f2fd',
  done: '#e8f5e9',
};
export const CRITICAL = '#c62828';
export const INK = '#1b1b1b';

/** Stylesheet rules for pages that inline the diagram (and for standalone SVG files). */
export const DIAGRAM_CSS = `
.fp-diagram { color: ${INK}; }
@media (prefers-color-scheme: dark) {
  .fp-diagram { color: #ececec; }
  .fp-diagram .fp-bg { fill: #161616; }
  .fp-diagram .fp-node-blocked { fill: #4a2320; }
  .fp-diagram .fp-node-ready { fill: #4a3f12; }
  .fp-diagram .fp-node-in_progress { fill: #17324d; }
  .fp-diagram .fp-node-done { fill: #1d3b22; }
  .fp-diagram .fp-critical { stroke: #ff8a80; }
  .fp-diagram .fp-critical-text { fill: #ff8a80; }
  .fp-diagram .fp-edge-critical { stroke: #ff8a80; }
}`;

export interface SvgOptions {
  /** Add a <style> with the dark theme: for an SVG served as its own file. */
  standalone?: boolean;
  /** Caption under the title (the PDF's "Part 2 of 9"). */
  caption?: string;
}

/** How the PNG has an SVG drawn for resvg (png.ts): not options of a served SVG. */
export interface RasterOptions {
  /** Draws a run of text as glyph outlines, or null to leave it a <text> (glyphs.ts `outline`). */
  outline?: (run: TextRun) => Outline | null;
  /**
   * Draws the tasks and edges without clipping them to the tile: for a whole diagram, which
   * has nothing past the tile but the outer half of an edge box's border. resvg draws a
   * clipped group on a layer of its own and masks it (75 ms of a 50-task PNG's render).
   */
  unclipped?: boolean;
}

/** `text()`, or the run as glyph outlines with the same paint (`paint`: attributes other than place, font and anchor). */
function runOf(raster: RasterOptions, run: TextRun, paint: Html, text: () => Html): Html {
  const outline = raster.outline?.(run);
  // Numbers and command letters only: not passed through escaping (a tenth of the SVG's time).
  return outline
    ? html`<path${paint} transform="${trusted(outline.transform)}" d="${trusted(outline.d)}"/>`
    : text();
}

/** One line of text in a task's box, placed from the box's top-left corner. */
export interface BoxLine {
  kind: 'name' | 'status' | 'critical';
  text: string;
  /** Where the line starts (anchor start) or ends (anchor end), and its baseline. */
  x: number;
  y: number;
  anchor: 'start' | 'end';
  size: number;
  bold: boolean;
  /** Measured in the drawing's font. */
  width: number;
}

/**
 * What a task's box says, laid out by measured width so no two lines meet: "critical" in the
 * top-right corner, the name beside it and on a second line (cut with … only past two lines;
 * the whole name is the box's <title>), status and estimate along the bottom.
 */
export function boxLines(task: DiagramTask, measure: Measure): BoxLine[] {
  const inner = NODE_W - 2 * PAD;
  const lines: BoxLine[] = [];
  let first = inner;
  if (task.critical) {
    const width = measure(CRITICAL_LABEL, FONT_SMALL, true);
    lines.push({
      kind: 'critical',
      text: CRITICAL_LABEL,
      x: NODE_W - PAD,
      y: 17,
      anchor: 'end',
      size: FONT_SMALL,
      bold: true,
      width,
    });
    first = inner - width - 6;
  }
  const nameWidth = (text: string) => measure(text, FONT_NAME, true);
  wrap(oneLine(task.name), [first, inner], 2, nameWidth).forEach((text, k) => {
    lines.push({
      kind: 'name',
      text,
      x: PAD,
      y: 17 + k * LINE_PITCH,
      anchor: 'start',
      size: FONT_NAME,
      bold: true,
      width: nameWidth(text),
    });
  });
  const statusWidth = (text: string) => measure(text, FONT_SMALL, false);
  const status = cut(
    `${STATUS_LABEL[task.status]} · ${hoursText(task.estimateHours)}`,
    inner,
    statusWidth,
  );
  lines.push({
    kind: 'status',
    text: status,
    x: PAD,
    y: NODE_H - 7,
    anchor: 'start',
    size: FONT_SMALL,
    bold: false,
    width: statusWidth(status),
  });
  return lines;
}

export function finishText(model: DiagramModel): string {
  const finish = model.projectedFinish
    ? `Projected finish ${model.projectedFinish}`
    : 'Nothing left to do';
  const due = model.dueDate ? `due ${model.dueDate}` : 'no due date';
  const verdict = model.onTrack === null ? '' : model.onTrack ? ' (on track)' : ' (late)';
  // Beside the critical-path date: the one the ranged estimates make four in five likely.
  const likely = model.finishP80 ? ` · 80% sure by ${model.finishP80}` : '';
  return `${finish}${likely}, ${due}${verdict}`;
}

function criticalNames(model: DiagramModel): string {
  const names = model.tasks.filter((t) => t.critical).map((t) => t.name);
  const shown = names.slice(0, ARIA_CRITICAL_MAX).join(', ');
  return names.length === 0
    ? 'none'
    : names.length > ARIA_CRITICAL_MAX
      ? `${shown} and ${names.length - ARIA_CRITICAL_MAX} more`
      : shown;
}

function node(
  task: DiagramTask,
  x: number,
  y: number,
  measure: Measure,
  raster: RasterOptions,
): Html {
  const text = (line: BoxLine) => {
    const [lx, ly] = [Math.round((x + line.x) * 10) / 10, Math.round((y + line.y) * 10) / 10];
    const at = html`x="${lx}" y="${ly}"`;
    const run = { ...line, x: lx, y: ly };
    if (line.kind === 'critical')
      return runOf(
        raster,
        run,
        html` class="fp-critical-text" fill="${CRITICAL}"`,
        () =>
          html`<text class="fp-critical-text" ${at} font-weight="bold" text-anchor="end" fill="${CRITICAL}">${line.text}</text>`,
      );
    if (line.kind === 'name')
      return runOf(
        raster,
        run,
        html``,
        () =>
          html`<text ${at} font-size="${FONT_NAME}" font-weight="bold">${svgText(line.text)}</text>`,
      );
    return runOf(raster, run, html``, () => html`<text ${at}>${line.text}</text>`);
  };
  return html`<g class="fp-task"><title>${task.name}</title>
<rect class="fp-node fp-node-${task.status}${task.critical ? ' fp-critical' : ''}" x="${x}" y="${y}" width="${NODE_W}" height="${NODE_H}" rx="6" fill="${STATUS_FILL[task.status]}" stroke="${task.critical ? CRITICAL : 'currentColor'}" stroke-width="${task.critical ? 3.5 : 1}"/>
${boxLines(task, measure).map(text)}</g>
`;
}

/** A route as path data (its stroke and marker come from its group: edgeGroups keeps big diagrams small). */
export function routePath(route: Route): string {
  const p = route.points.map((v) => Math.round(v * 10) / 10);
  if (!route.curve)
    return `M${p[0]} ${p[1]}${Array.from({ length: p.length / 2 - 1 }, (_, k) => `L${p[2 * k + 2]} ${p[2 * k + 3]}`).join('')}`;
  let d = `M${p[0]} ${p[1]}`;
  for (let k = 2; k + 5 < p.length; k += 6)
    d += `C${p[k]} ${p[k + 1]} ${p[k + 2]} ${p[k + 3]} ${p[k + 4]} ${p[k + 5]}`;
  return d;
}

function edgeGroups(normal: Html[], critical: Html[]): Html {
  return html`<g class="fp-edge" fill="none" stroke="currentColor" stroke-width="1" stroke-opacity="0.55" marker-end="url(#fp-arrow)">${normal}</g>
<g class="fp-edge fp-edge-critical" fill="none" stroke="${CRITICAL}" stroke-width="2.5" marker-end="url(#fp-arrow-critical)">${critical}</g>
`;
}

/** A line of the header or legend: regular unless bold, in `currentColor`; `content` is how a <text> holds it. */
function headerText(
  raster: RasterOptions,
  text: string,
  x: number,
  y: number,
  size: number,
  bold = false,
  content: Html | string = svgText(text),
): Html {
  return runOf(
    raster,
    { text, x, y, size, bold, anchor: 'start' },
    html` fill="currentColor"`,
    () =>
      html`<text x="${x}" y="${y}" font-size="${size}"${bold ? html` font-weight="bold"` : ''} fill="currentColor">${content}</text>`,
  );
}

const LEGEND_CRITICAL = 'Critical path (thick border, "critical")';

function legend(y: number, raster: RasterOptions): Html {
  const swatch = (x: number, status: DiagramTask['status']) =>
    html`<rect class="fp-node fp-node-${status}" x="${x}" y="${y}" width="14" height="14" fill="${STATUS_FILL[status]}" stroke="currentColor"/>${headerText(raster, STATUS_LABEL[status], x + 19, y + 11, FONT_SMALL)}`;
  return html`<g class="fp-legend">${swatch(MARGIN, 'done')}${swatch(MARGIN + 76, 'in_progress')}${swatch(MARGIN + 190, 'ready')}${swatch(MARGIN + 260, 'blocked')}
<rect class="fp-critical" x="${MARGIN + 346}" y="${y}" width="14" height="14" fill="none" stroke="${CRITICAL}" stroke-width="3"/>${headerText(raster, LEGEND_CRITICAL, MARGIN + 365, y + 11, FONT_SMALL, false, trusted(LEGEND_CRITICAL))}</g>`;
}

/** The size of a tile's SVG (the whole diagram's when no tile is given), in SVG units. */
export function svgSize(l: Layout, tile: Tile = wholeTile(l)): { w: number; h: number } {
  return {
    w: Math.max(Math.ceil(tile.x1 - tile.x0) + 2 * MARGIN, 620),
    h: HEADER_H + Math.ceil(tile.y1 - tile.y0) + 2 * MARGIN,
  };
}

/** The SVG of one tile of a laid-out model; the whole diagram when no tile is given. */
export function tileSvg(
  model: DiagramModel,
  l: Layout,
  tile: Tile = wholeTile(l),
  options: SvgOptions = {},
  raster: RasterOptions = {},
): string {
  const contentW = tile.x1 - tile.x0;
  const contentH = tile.y1 - tile.y0;
  const { w: width, h: height } = svgSize(l, tile);
  const measure = measurer();
  const nodes: Html[] = [];
  model.tasks.forEach((task, i) => {
    if (boxMeets(l, i, tile))
      nodes.push(
        node(task, Math.round(l.x[i]! * 10) / 10, Math.round(l.y[i]! * 10) / 10, measure, raster),
      );
  });
  const edges: Html[] = [];
  const criticalEdges: Html[] = [];
  // A route with an end off the tile is drawn too, cut at the tile's border.
  for (const route of l.routes) {
    if (!routeMeets(route, tile)) continue;
    const critical = model.tasks[route.to]!.critical && model.tasks[route.from]!.critical;
    (critical ? criticalEdges : edges).push(html`<path d="${routePath(route)}"/>`);
  }
  const title = `Dependency diagram of ${model.flowName}`;
  const label = `${title}: ${model.tasks.length} tasks. Critical path: ${criticalNames(model)}. ${finishText(model)}.`;
  const marker = (id: string, colour: string) =>
    html`<marker id="${id}" viewBox="0 0 10 10" refX="9" refY="5" markerUnits="userSpaceOnUse" markerWidth="9" markerHeight="9" orient="auto"><path d="M0 0L10 5L0 10z" fill="${colour}"/></marker>`;
  return html`<svg xmlns="http://www.w3.org/2000/svg" class="fp-diagram" role="img" aria-label="${label}" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="${FONT_FAMILY}" color="${INK}">
<title>${title}</title>${options.standalone ? html`<style>${trusted(DIAGRAM_CSS)}</style>` : ''}
<defs>${marker('fp-arrow', 'currentColor')}${marker('fp-arrow-critical', CRITICAL)}</defs>
<rect class="fp-bg" width="100%" height="100%" fill="#ffffff"/>
${headerText(
  raster,
  cut(oneLine(model.flowName), width - 2 * MARGIN, (text) => measure(text, FONT_NAME + 2, true)),
  MARGIN,
  22,
  FONT_NAME + 2,
  true,
)}
${headerText(raster, `${finishText(model)}${options.caption ? ` · ${options.caption}` : ''}${model.tasks.length === 0 ? ' · This flow has no tasks yet.' : ''}`, MARGIN, 40, FONT_SMALL)}
${legend(48, raster)}
<svg x="${MARGIN}" y="${HEADER_H + MARGIN}" width="${contentW}" height="${contentH}" viewBox="${tile.x0} ${tile.y0} ${contentW} ${contentH}" overflow="${raster.unclipped ? 'visible' : 'hidden'}">
${edgeGroups(edges, criticalEdges)}<g font-size="${FONT_SMALL}" fill="currentColor">${nodes}</g></svg></svg>`
    .text;
}

/** The whole diagram as one SVG (the public page, diagram.svg). */
export async function diagramSvgOf(model: DiagramModel, options: SvgOptions = {}): Promise<string> {
  return tileSvg(model, await layout(model), undefined, options);
}

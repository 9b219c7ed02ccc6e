/**
 * Where each task's box goes and which way each dependency runs, for every picture of a flow
 * (SVG, PNG, PDF draw this one geometry). No edge passes through a box.
 *
 * Up to GRAPHVIZ_MAX tasks, Graphviz `dot` (@hpcc-js/wasm-graphviz, in WASM) lays the flow out
 * left to right and routes each edge as a spline around the boxes. Measured on this machine
 * (random DAGs, ~1.5 edges a task): dot took 124 ms / 520 ms / 14.6 s at 50 / 500 / 5,000
 * tasks, ELK layered 365 ms / 1.7 s / 30.7 s: neither leaves room for a 5,000-task PDF in its
 * 20 s budget. Larger flows get our layered layout: each task one layer right of the latest
 * thing it waits for (longest path), layers ordered by the barycentre of predecessors
 * (milliseconds at 5,000 tasks), with orthogonal edges whose bends sit in the gaps between
 * layers and between rows, where no box is.
 */
import type { Format, Graphviz } from '@hpcc-js/wasm-graphviz';
import type { DiagramModel } from './diagram.ts';

export const NODE_W = 180;
export const NODE_H = 58;
export const GAP_X = 40;
export const GAP_Y = 14;
export const PITCH_X = NODE_W + GAP_X;
export const PITCH_Y = NODE_H + GAP_Y;
/** Up to this many tasks Graphviz lays the flow out; beyond, the layered layout (see above). */
export const GRAPHVIZ_MAX = 400;

/** One dependency's line, from the box it waits for to its own: a polyline, or cubic Bézier segments (1 + 3n points). */
export interface Route {
  from: number;
  to: number;
  /** x, y, x, y, … in diagram units; the last point is the arrow's tip. */
  points: number[];
  curve: boolean;
}

export interface Layout {
  /** Top-left corner of each task's NODE_W × NODE_H box. */
  x: Float64Array;
  y: Float64Array;
  routes: Route[];
  /** Everything drawn lies within [0, width] × [0, height]. */
  width: number;
  height: number;
  engine: 'graphviz' | 'layered';
}

/** A window of the drawing, in diagram units: [x0, x1) × [y0, y1). */
export interface Tile {
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

let graphviz: Promise<Graphviz> | null = null;

/**
 * Up to this much `dot` work (see dotWork) Graphviz lays a flow out: a dense flow of few tasks
 * (a complete DAG of 35 took dot past the 60-s render limit) gets the layered layout instead.
 */
export const GRAPHVIZ_MAX_WORK = 1_500;

/**
 * The layout of a model: Graphviz's up to GRAPHVIZ_MAX tasks and GRAPHVIZ_MAX_WORK (its WASM
 * loaded once per thread), the layered one beyond.
 */
export async function layout(model: DiagramModel): Promise<Layout> {
  const n = model.tasks.length;
  if (n === 0 || n > GRAPHVIZ_MAX || dotWork(model) > GRAPHVIZ_MAX_WORK)
    return layeredLayout(model);
  graphviz ??= import('@hpcc-js/wasm-graphviz').then(({ Graphviz }) => Graphviz.load());
  return graphvizLayout(model, await graphviz);
}

const inches = (units: number) => (units / 72).toFixed(4);

/** Graphviz `dot`, left to right, fixed-size boxes, spline edges around them; y flipped to grow downwards. */
export function graphvizLayout(model: DiagramModel, gv: Graphviz): Layout {
  const n = model.tasks.length;
  const edges = model.tasks
    .flatMap((task, to) => task.dependsOn.map((from) => `n${from}->n${to};`))
    .join('');
  const dot =
    `digraph{rankdir=LR;nodesep=${inches(GAP_Y)};ranksep=${inches(GAP_X)};splines=true;` +
    `node[shape=box,fixedsize=true,width=${inches(NODE_W)},height=${inches(NODE_H)},label=""];${Array.from({ length: n }, (_, i) => `n${i};`).join('')}${edges}}`;
  // Graphviz leaves out `edges` when there are none (and `objects` when there are no nodes).
  // json0 is json without the xdot drawing operations, which nothing here reads: writing them
  // was a third of dot's time for 50 tasks. (Graphviz has the format; the package's Format
  // type leaves it out.)
  const out = JSON.parse(gv.layout(dot, 'json0' as Format, 'dot')) as {
    bb: string;
    objects?: { _gvid: number; pos: string }[];
    edges?: { tail: number; head: number; pos: string }[];
  };
  const top = Number(out.bb.split(',')[3]);
  const x = new Float64Array(n);
  const y = new Float64Array(n);
  for (const node of out.objects ?? []) {
    const [cx, cy] = node.pos.split(',').map(Number) as [number, number];
    x[node._gvid] = cx - NODE_W / 2;
    y[node._gvid] = top - cy - NODE_H / 2;
  }
  const routes = (out.edges ?? []).map((e): Route => {
    // "e,tipx,tipy p0 p1 p2 p3 …": the spline's control points, then the arrow's tip.
    const parts = e.pos.split(' ');
    const tip = parts[0]!.slice(2).split(',').map(Number) as [number, number];
    const spline = parts.slice(1).flatMap((p) => p.split(',').map(Number));
    const points = [...spline, tip[0], tip[1]].map((v, i) => (i % 2 === 0 ? v : top - v));
    // The tip continues the spline's last point in a straight line: one more segment, straight.
    const [lx, ly] = [points.at(-4)!, points.at(-3)!];
    points.splice(
      points.length - 2,
      0,
      lx + (points.at(-2)! - lx) / 3,
      ly + (points.at(-1)! - ly) / 3,
      lx + (2 * (points.at(-2)! - lx)) / 3,
      ly + (2 * (points.at(-1)! - ly)) / 3,
    );
    return { from: e.tail, to: e.head, points, curve: true };
  });
  return shifted({ x, y, routes, width: 0, height: 0, engine: 'graphviz' });
}

/** Moves the drawing so that its extent starts at (0, 0), and sets its size. */
function shifted(l: Layout): Layout {
  let minX = Infinity,
    minY = Infinity,
    maxX = -Infinity,
    maxY = -Infinity;
  for (let i = 0; i < l.x.length; i++) {
    minX = Math.min(minX, l.x[i]!);
    minY = Math.min(minY, l.y[i]!);
    maxX = Math.max(maxX, l.x[i]! + NODE_W);
    maxY = Math.max(maxY, l.y[i]! + NODE_H);
  }
  for (const r of l.routes) {
    for (let k = 0; k < r.points.length; k += 2) {
      minX = Math.min(minX, r.points[k]!);
      maxX = Math.max(maxX, r.points[k]!);
      minY = Math.min(minY, r.points[k + 1]!);
      maxY = Math.max(maxY, r.points[k + 1]!);
    }
  }
  if (!Number.isFinite(minX)) return { ...l, width: NODE_W, height: NODE_H };
  for (let i = 0; i < l.x.length; i++) {
    l.x[i]! -= minX;
    l.y[i]! -= minY;
  }
  for (const r of l.routes)
    for (let k = 0; k < r.points.length; k += 2) {
      r.points[k]! -= minX;
      r.points[k + 1]! -= minY;
    }
  return { ...l, width: maxX - minX, height: maxY - minY };
}

const SWEEPS = 2;

/** The layered layout: layers by longest path, rows by barycentre, edges orthogonal through the gaps. */
/** Each task one layer right of the latest thing it waits for (longest path from a start). */
function longestPathLayers(model: DiagramModel): Int32Array {
  const n = model.tasks.length;
  const layer = new Int32Array(n);
  // dependsOn indexes may point forward (a task added later can be depended on by an
  // earlier one), so layer in topological order (Kahn).
  const indegree = new Int32Array(n);
  const successors: number[][] = Array.from({ length: n }, () => []);
  model.tasks.forEach((task, i) => {
    indegree[i] = task.dependsOn.length;
    for (const dep of task.dependsOn) successors[dep]!.push(i);
  });
  const queue: number[] = [];
  for (let i = 0; i < n; i++) if (indegree[i] === 0) queue.push(i);
  for (let head = 0; head < queue.length; head++) {
    const v = queue[head]!;
    for (const w of successors[v]!) {
      if (layer[v]! + 1 > layer[w]!) layer[w] = layer[v]! + 1;
      if (--indegree[w]! === 0) queue.push(w);
    }
  }
  return layer;
}

/**
 * What `dot` has to place: every edge, plus one virtual node for each layer an edge crosses.
 * Its time grows faster than this count: measured here, 730 → 0.6 s, 1,330 → 1.3 s (a complete
 * DAG of 20 tasks), 2,600 → 3.4 s, 3,900 → 10 s (100 tasks of 6 dependencies each).
 */
export function dotWork(model: DiagramModel): number {
  const layer = longestPathLayers(model);
  let work = 0;
  model.tasks.forEach((task, i) => {
    for (const dep of task.dependsOn) work += layer[i]! - layer[dep]!;
  });
  return work;
}

export function layeredLayout(model: DiagramModel): Layout {
  const n = model.tasks.length;
  const layer = longestPathLayers(model);
  let layers = 0;
  for (let i = 0; i < n; i++) layers = Math.max(layers, layer[i]! + 1);
  const byLayer: number[][] = Array.from({ length: layers }, () => []);
  for (let i = 0; i < n; i++) byLayer[layer[i]!]!.push(i);

  const row = new Int32Array(n);
  const place = () => byLayer.forEach((tasks) => tasks.forEach((task, r) => (row[task] = r)));
  place();
  // Barycentre ordering: fewer crossings, and a task lines up with what it waits for.
  for (let sweep = 0; sweep < SWEEPS; sweep++) {
    for (let l = 1; l < layers; l++) {
      const weight = new Map<number, number>();
      for (const task of byLayer[l]!) {
        const deps = model.tasks[task]!.dependsOn;
        weight.set(
          task,
          deps.length === 0 ? row[task]! : deps.reduce((sum, d) => sum + row[d]!, 0) / deps.length,
        );
      }
      byLayer[l]!.sort((a, b) => weight.get(a)! - weight.get(b)! || a - b);
      byLayer[l]!.forEach((task, r) => (row[task] = r));
    }
  }
  const rows = byLayer.reduce((max, tasks) => Math.max(max, tasks.length), 0);
  const x = Float64Array.from(layer, (l) => l * PITCH_X);
  const y = Float64Array.from(row, (r) => r * PITCH_Y);
  const routes = model.tasks.flatMap((task, to) =>
    task.dependsOn.map((from) => orthogonal(from, to, x, y, rows)),
  );
  return shifted({ x, y, routes, width: 0, height: 0, engine: 'layered' });
}

/** Where in a gap a line runs: spread by the task, kept clear of the boxes on either side. */
const lane = (gap: number, key: number) => 6 + ((key * 7919) % Math.max(1, gap - 12));

/**
 * Out of the right of the box waited for, down or up in the gap after its layer; for a longer
 * jump along the gap between rows (above the target's row, below it for the first row) to the
 * gap before the target's layer; then into the target's left side.
 */
function orthogonal(
  from: number,
  to: number,
  x: Float64Array,
  y: Float64Array,
  rows: number,
): Route {
  const x1 = x[from]! + NODE_W,
    y1 = y[from]! + NODE_H / 2;
  const x2 = x[to]! - 2,
    y2 = y[to]! + NODE_H / 2;
  const out = x1 + lane(GAP_X, to);
  if (x[to]! - x[from]! <= PITCH_X)
    return { from, to, points: [x1, y1, out, y1, out, y2, x2, y2], curve: false };
  const targetRow = Math.round(y[to]! / PITCH_Y);
  const channelRow = targetRow === 0 && rows > 1 ? 1 : targetRow;
  const yc = channelRow * PITCH_Y - GAP_Y / 2 + (lane(GAP_Y, from) - GAP_Y / 2) * 0.3;
  const into = x[to]! - GAP_X + lane(GAP_X, from);
  return { from, to, points: [x1, y1, out, y1, out, yc, into, yc, into, y2, x2, y2], curve: false };
}

/** The whole drawing as one tile. */
export const wholeTile = (l: Layout): Tile => ({
  x0: 0,
  y0: 0,
  x1: Math.max(l.width, 1),
  y1: Math.max(l.height, 1),
});

/**
 * Windows of at most `w` × `h` units over the drawing that hold at least one box (by its
 * centre), in reading order. A box across a window's edge is drawn in both, cut at the edge.
 */
export function tiles(l: Layout, w: number, h: number): Tile[] {
  const across = Math.max(1, Math.ceil(l.width / w));
  const used = new Set<number>();
  for (let i = 0; i < l.x.length; i++) {
    used.add(
      Math.floor((l.y[i]! + NODE_H / 2) / h) * across + Math.floor((l.x[i]! + NODE_W / 2) / w),
    );
  }
  if (used.size === 0) return [wholeTile(l)];
  return [...used]
    .sort((a, b) => a - b)
    .map((key) => {
      const tx = key % across,
        ty = Math.floor(key / across);
      return {
        x0: tx * w,
        y0: ty * h,
        x1: Math.min((tx + 1) * w, Math.max(l.width, 1)),
        y1: Math.min((ty + 1) * h, Math.max(l.height, 1)),
      };
    });
}

/** Whether a route's bounding box meets a tile (a route may cross a tile without an end in it). */
export function routeMeets(route: Route, tile: Tile): boolean {
  let minX = Infinity,
    minY = Infinity,
    maxX = -Infinity,
    maxY = -Infinity;
  for (let k = 0; k < route.points.length; k += 2) {
    minX = Math.min(minX, route.points[k]!);
    maxX = Math.max(maxX, route.points[k]!);
    minY = Math.min(minY, route.points[k + 1]!);
    maxY = Math.max(maxY, route.points[k + 1]!);
  }
  return maxX >= tile.x0 && minX <= tile.x1 && maxY >= tile.y0 && minY <= tile.y1;
}

/** Whether a box meets a tile. */
export const boxMeets = (l: Layout, i: number, tile: Tile): boolean =>
  l.x[i]! + NODE_W > tile.x0 &&
  l.x[i]! < tile.x1 &&
  l.y[i]! + NODE_H > tile.y0 &&
  l.y[i]! < tile.y1;

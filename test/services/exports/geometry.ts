/**
 * Checks of a diagram's geometry against a simple reference: which edge lines enter which
 * boxes. A route is cut into straight pieces (a Bézier segment sampled finely); a piece
 * crossing a box's interior (the box shrunk by a unit, so touching a border is allowed) is a
 * defect, whether the box is the route's own end or any other.
 */
import { NODE_H, NODE_W, type Layout } from '../../../src/services/exports/layout.ts';

/** The straight pieces of a route: its polyline, or each cubic segment sampled at `steps` points. */
export function pieces(
  points: number[],
  curve: boolean,
  steps = 24,
): [number, number, number, number][] {
  const out: [number, number, number, number][] = [];
  if (!curve) {
    for (let k = 0; k + 3 < points.length; k += 2)
      out.push([points[k]!, points[k + 1]!, points[k + 2]!, points[k + 3]!]);
    return out;
  }
  for (let k = 0; k + 7 < points.length; k += 6) {
    const [x0, y0, x1, y1, x2, y2, x3, y3] = points.slice(k, k + 8) as [
      number,
      number,
      number,
      number,
      number,
      number,
      number,
      number,
    ];
    let px = x0,
      py = y0;
    for (let s = 1; s <= steps; s++) {
      const t = s / steps,
        u = 1 - t;
      const x = u * u * u * x0 + 3 * u * u * t * x1 + 3 * u * t * t * x2 + t * t * t * x3;
      const y = u * u * u * y0 + 3 * u * u * t * y1 + 3 * u * t * t * y2 + t * t * t * y3;
      out.push([px, py, x, y]);
      px = x;
      py = y;
    }
  }
  return out;
}

/** Whether the segment enters the open rectangle (Liang–Barsky clipping). */
export function crosses(
  [x0, y0, x1, y1]: [number, number, number, number],
  left: number,
  top: number,
  right: number,
  bottom: number,
): boolean {
  let t0 = 0,
    t1 = 1;
  const dx = x1 - x0,
    dy = y1 - y0;
  for (const [p, q] of [
    [-dx, x0 - left],
    [dx, right - x0],
    [-dy, y0 - top],
    [dy, bottom - y0],
  ] as const) {
    if (p === 0) {
      if (q <= 0) return false;
    } else {
      const r = q / p;
      if (p < 0) t0 = Math.max(t0, r);
      else t1 = Math.min(t1, r);
      if (t0 >= t1) return false;
    }
  }
  return t0 < t1;
}

/** Every (route, box) where the route's line goes through the box's interior. */
export function edgesThroughBoxes(l: Layout): { from: number; to: number; box: number }[] {
  const found: { from: number; to: number; box: number }[] = [];
  const order = Array.from(l.x.keys()).sort((a, b) => l.x[a]! - l.x[b]!);
  for (const route of l.routes) {
    for (const piece of pieces(route.points, route.curve)) {
      const minX = Math.min(piece[0], piece[2]),
        maxX = Math.max(piece[0], piece[2]);
      for (const i of order) {
        if (l.x[i]! > maxX) break;
        if (l.x[i]! + NODE_W < minX) continue;
        if (crosses(piece, l.x[i]! + 1, l.y[i]! + 1, l.x[i]! + NODE_W - 1, l.y[i]! + NODE_H - 1)) {
          if (!found.some((f) => f.from === route.from && f.to === route.to && f.box === i))
            found.push({ from: route.from, to: route.to, box: i });
        }
      }
    }
  }
  return found;
}

/**
 * Compressed sparse row (CSR) form of a dependency graph: for node v its
 * predecessors (the tasks it waits for) are pred[predStart[v] .. predStart[v+1])
 * and its successors succ[succStart[v] .. succStart[v+1]). Typed arrays keep a
 * 100k-node graph in a few MB and every pass a flat loop; nothing here recurses,
 * so 50k-long chains are fine.
 */
export interface Graph {
  readonly n: number;
  readonly predStart: Uint32Array;
  readonly pred: Uint32Array;
  readonly succStart: Uint32Array;
  readonly succ: Uint32Array;
  /** Each edge's link type and lag, beside both rows; null when every link is FS with no lag. */
  readonly links: Links | null;
}

/**
 * The link of each edge, aligned with the rows: predLink[k] is that of the edge pred[k] → v,
 * succLink[k] that of v → succ[k]. A link is its lag and type in one word, lag × 4 + type
 * (packLink; linkType and linkLag read it back): a pass reads one number per edge for both.
 */
export interface Links {
  readonly predLink: Int32Array;
  readonly succLink: Int32Array;
}

/** A link as one word: lag × 4 + type (lags within ±2^29). */
export const packLink = (type: number, lag: number): number => (lag << 2) | type;
/** A packed link's type (LINK code). */
export const linkType = (link: number): number => link & 3;
/** A packed link's lag in working days. */
export const linkLag = (link: number): number => link >> 2;

/**
 * Link types by code. Bit 0 says which end of the predecessor the link runs from (set: its
 * start), bit 1 which end of the successor it holds (set: its finish): FS holds a start after
 * a finish, SS a start after a start, FF a finish after a finish, SF a finish after a start.
 */
export const LINK = { FS: 0, SS: 1, FF: 2, SF: 3 } as const;
export type LinkCode = (typeof LINK)[keyof typeof LINK];
/** The contract's name of each link code, by code. */
export const LINK_NAMES = ['FS', 'SS', 'FF', 'SF'] as const;
export type LinkName = (typeof LINK_NAMES)[number];

/** Thrown by callers that need an acyclic graph; `cycle` is as from topoOrder. */
export class CycleError extends Error {
  readonly cycle: number[];
  constructor(cycle: number[]) {
    super(`Dependency cycle through ${cycle.length} task(s)`);
    this.name = 'CycleError';
    this.cycle = cycle;
  }
}

/** The graph's edges as buildGraph takes them, by the row of the task that waits, with their links. */
export function edgeLists(g: Graph): EdgeLists {
  const m = g.predStart[g.n] ?? 0;
  const from = g.pred.slice(0, m);
  const to = new Uint32Array(m);
  for (let v = 0; v < g.n; v++) to.fill(v, g.predStart[v], g.predStart[v + 1]);
  if (g.links === null) return { from, to };
  const links = g.links.predLink.subarray(0, m);
  return {
    from,
    to,
    linkType: Uint8Array.from(links, linkType),
    lag: Int32Array.from(links, linkLag),
  };
}

/** Edge i: node to[i] depends on (waits for) node from[i], by a link of linkType[i] and lag[i]. */
export interface EdgeLists {
  from: Uint32Array;
  to: Uint32Array;
  /** Absent: every link FS. */
  linkType?: Uint8Array;
  /** Working days (negative: a lead); absent: every lag 0. */
  lag?: Int32Array;
}

/**
 * Edge i: node to[i] depends on (waits for) node from[i], by a link of type linkType[i] (LINK;
 * FS when absent) with lag[i] working days (0 when absent). Duplicate edges are kept.
 */
export function buildGraph(
  n: number,
  from: ArrayLike<number>,
  to: ArrayLike<number>,
  linkType?: ArrayLike<number>,
  lag?: ArrayLike<number>,
): Graph {
  const m = from.length;
  if (to.length !== m) throw new RangeError('from and to must have the same length');
  const typed = typedLinks(m, linkType, lag);
  const predStart = new Uint32Array(n + 1);
  const succStart = new Uint32Array(n + 1);
  for (let i = 0; i < m; i++) {
    const f = from[i]!;
    const t = to[i]!;
    // Checked once here so every later pass can index without bounds worries.
    if (!(f >= 0 && f < n && t >= 0 && t < n))
      throw new RangeError(`Edge ${i} (${f} -> ${t}) is out of range`);
    predStart[t + 1]!++;
    succStart[f + 1]!++;
  }
  for (let v = 0; v < n; v++) {
    predStart[v + 1]! += predStart[v]!;
    succStart[v + 1]! += succStart[v]!;
  }
  const pred = new Uint32Array(m);
  const succ = new Uint32Array(m);
  // Fill cursors start at each row's beginning (counting sort, stable by edge order).
  const pFill = predStart.slice(0, n);
  const sFill = succStart.slice(0, n);
  if (typed === null) {
    for (let i = 0; i < m; i++) {
      const f = from[i]!;
      const t = to[i]!;
      pred[pFill[t]!++] = f;
      succ[sFill[f]!++] = t;
    }
    return { n, predStart, pred, succStart, succ, links: null };
  }
  // The same sort, carrying each edge's link to both of its places.
  const predLink = new Int32Array(m);
  const succLink = new Int32Array(m);
  for (let i = 0; i < m; i++) {
    const f = from[i] ?? 0;
    const t = to[i] ?? 0;
    const link = typed[i] ?? 0;
    const p = pFill[t] ?? 0;
    pFill[t] = p + 1;
    pred[p] = f;
    predLink[p] = link;
    const q = sFill[f] ?? 0;
    sFill[f] = q + 1;
    succ[q] = t;
    succLink[q] = link;
  }
  return { n, predStart, pred, succStart, succ, links: { predLink, succLink } };
}

function emptyLinks(m: number) {
  return { predLink: new Int32Array(m), succLink: new Int32Array(m) };
}

/**
 * The edges' links packed (packLink), in their order, checked: a type is a LINK code, a lag a
 * whole number of days within ±2^29 (so sums of lags and days stay exact in an Int32Array).
 * Null when every link is FS with no lag, so a plain graph carries no link arrays.
 */
function typedLinks(
  m: number,
  linkType: ArrayLike<number> | undefined,
  lag: ArrayLike<number> | undefined,
): Int32Array | null {
  if (linkType === undefined && lag === undefined) return null;
  if (linkType !== undefined && linkType.length !== m)
    throw new RangeError('linkType must have one entry per edge');
  if (lag !== undefined && lag.length !== m)
    throw new RangeError('lag must have one entry per edge');
  const packed = new Int32Array(m);
  let any = 0;
  const limit = 2 ** 29;
  if (
    (linkType === undefined || linkType instanceof Uint8Array) &&
    (lag === undefined || lag instanceof Int32Array)
  ) {
    // Typed arrays hold whole numbers already: one range check each, without a branch.
    const types = linkType ?? new Uint8Array(m);
    const lags = lag ?? new Int32Array(m);
    let out = 0;
    for (let i = 0; i < m; i++) {
      const type = types[i] ?? 0;
      const days = lags[i] ?? 0;
      out |= (type >>> 2) | (days >= limit ? 1 : 0) | (days <= -limit ? 1 : 0);
      const link = (days << 2) | type;
      packed[i] = link;
      any |= link;
    }
    if (out === 0) return any === 0 ? null : packed;
  }
  // Any other array, or one with a value out of range: checked one by one, with the reason.
  for (let i = 0; i < m; i++) {
    const type = linkType?.[i] ?? 0;
    const days = lag?.[i] ?? 0;
    if (!(type === 0 || type === 1 || type === 2 || type === 3))
      throw new RangeError(`linkType[${i}] is not a link type: ${type}`);
    if (!(Number.isInteger(days) && days < limit && days > -limit))
      throw new RangeError(`lag[${i}] is not a lag in days: ${days}`);
    packed[i] = packLink(type, days);
    any |= packed[i] ?? 0;
  }
  return any === 0 ? null : packed;
}

/**
 * `g` with `added` nodes after its own and the edges `from[e]` → `to[e]` they bring (with their
 * links, as buildGraph takes them), each ending at a new node (the caller checks it): the old
 * predecessor rows are kept as they were and the successor rows extended, not sorted again.
 */
export function extendGraph(
  g: Graph,
  added: number,
  from: Uint32Array,
  to: Uint32Array,
  linkType?: ArrayLike<number>,
  lag?: ArrayLike<number>,
): Graph {
  const old = g.n;
  const n = old + added;
  const typed = typedLinks(from.length, linkType, lag);
  // Links for all edges when any has one: the old edges' copied (FS with no lag if they had none).
  const links = g.links === null && typed === null ? null : emptyLinks(g.pred.length + from.length);
  const linkOf = (e: number) => typed?.[e] ?? 0;
  // Predecessor rows: the old ones as they were, then one row per new node.
  const predStart = new Uint32Array(n + 1);
  predStart.set(g.predStart);
  for (const t of to) predStart[t + 1] = (predStart[t + 1] ?? 0) + 1;
  for (let v = old; v < n; v++) predStart[v + 1] = (predStart[v + 1] ?? 0) + (predStart[v] ?? 0);
  const pred = new Uint32Array(predStart[n] ?? 0);
  pred.set(g.pred);
  if (links && g.links) links.predLink.set(g.links.predLink);
  const pFill = predStart.slice(old, n);
  for (let e = 0; e < to.length; e++) {
    const row = (to[e] ?? 0) - old;
    const at = pFill[row] ?? 0;
    pred[at] = from[e] ?? 0;
    if (links) links.predLink[at] = linkOf(e);
    pFill[row] = at + 1;
  }
  // Successor rows: each old row copied with its new successors after it.
  // Rows start where they did, moved by the new edges from nodes before them: counted off the
  // new edges' sources in order, with no per-node array beside the rows.
  const sourcesInOrder = Uint32Array.from(from).sort();
  const succStart = new Uint32Array(n + 1);
  for (let v = 0, e = 0; v < n; v++) {
    while (e < sourcesInOrder.length && sourcesInOrder[e] === v) e++;
    succStart[v + 1] = (g.succStart[Math.min(v + 1, old)] ?? 0) + e;
  }
  const succ = new Uint32Array(succStart[n] ?? 0);
  // Where each source's next new successor goes.
  const fill = new Map<number, number>();
  // The old rows move in runs: each run ends at a node that gains successors, whose new ones
  // go right after its own. A handful of copies, not one per node of a large graph.
  const sources = [...new Set(from)].sort((a, b) => a - b);
  const oldRow = (v: number) => g.succStart[v] ?? 0;
  const newRow = (v: number) => succStart[v] ?? 0;
  const copyRun = (first: number, end: number) => {
    succ.set(g.succ.subarray(oldRow(first), oldRow(end)), newRow(first));
    if (links && g.links)
      links.succLink.set(g.links.succLink.subarray(oldRow(first), oldRow(end)), newRow(first));
  };
  let runStart = 0;
  for (const s of sources) {
    if (s >= old) {
      fill.set(s, newRow(s));
      continue;
    }
    copyRun(runStart, s + 1);
    fill.set(s, newRow(s) + oldRow(s + 1) - oldRow(s));
    runStart = s + 1;
  }
  copyRun(runStart, old);
  for (let e = 0; e < from.length; e++) {
    const at = fill.get(from[e] ?? 0) ?? 0;
    succ[at] = to[e] ?? 0;
    if (links) links.succLink[at] = linkOf(e);
    fill.set(from[e] ?? 0, at + 1);
  }
  return { n, predStart, pred, succStart, succ, links };
}

/**
 * Kahn's algorithm (FIFO, so the order is deterministic). On a cycle, returns the
 * node indexes of one cycle in dependency order: each node is a dependency of the
 * next one, and the last is a dependency of the first.
 */
export function topoOrder(
  g: Graph,
): { order: Uint32Array; cycle: null } | { order: null; cycle: number[] } {
  const { n, predStart, succStart, succ } = g;
  const indeg = new Uint32Array(n);
  for (let v = 0; v < n; v++) indeg[v] = predStart[v + 1]! - predStart[v]!;
  // The order array doubles as the FIFO queue: head reads, tail writes.
  const order = new Uint32Array(n);
  let tail = 0;
  for (let v = 0; v < n; v++) if (indeg[v] === 0) order[tail++] = v;
  for (let head = 0; head < tail; head++) {
    const v = order[head]!;
    for (let k = succStart[v]!, end = succStart[v + 1]!; k < end; k++) {
      const s = succ[k]!;
      if (--indeg[s]! === 0) order[tail++] = s;
    }
  }
  if (tail === n) return { order, cycle: null };
  return { order: null, cycle: findCycle(g, indeg) };
}

/**
 * Every node Kahn left behind (indeg > 0) still has a left-behind predecessor, so
 * walking predecessors from any of them must revisit a node: that loop is a cycle.
 */
function findCycle(g: Graph, indeg: Uint32Array): number[] {
  const { n, predStart, pred } = g;
  let v = 0;
  while (indeg[v] === 0) v++;
  // step[v] = 1 + position of v in the walk, 0 if not yet walked.
  const step = new Uint32Array(n);
  const walk: number[] = [];
  while (step[v] === 0) {
    step[v] = walk.length + 1;
    walk.push(v);
    let next = -1;
    for (let k = predStart[v]!, end = predStart[v + 1]!; k < end; k++) {
      if (indeg[pred[k]!]! > 0) {
        next = pred[k]!;
        break;
      }
    }
    v = next;
  }
  // The walk follows edges backwards (node -> its dependency); reverse it.
  return walk.slice(step[v]! - 1).reverse();
}

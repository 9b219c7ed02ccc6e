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
 * The link of each edge, aligned with the rows: predType[k] and predLag[k] are those of the
 * edge pred[k] → v, succType[k] and succLag[k] those of v → succ[k].
 */
export interface Links {
  readonly predType: Uint8Array;
  readonly predLag: Int32Array;
  readonly succType: Uint8Array;
  readonly succLag: Int32Array;
}

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
  return { from, to, linkType: g.links.predType.slice(0, m), lag: g.links.predLag.slice(0, m) };
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
  const links = emptyLinks(m);
  for (let i = 0; i < m; i++) {
    const f = from[i] ?? 0;
    const t = to[i] ?? 0;
    const type = typed.type(i);
    const days = typed.lag(i);
    const p = pFill[t] ?? 0;
    pFill[t] = p + 1;
    pred[p] = f;
    links.predType[p] = type;
    links.predLag[p] = days;
    const q = sFill[f] ?? 0;
    sFill[f] = q + 1;
    succ[q] = t;
    links.succType[q] = type;
    links.succLag[q] = days;
  }
  return { n, predStart, pred, succStart, succ, links };
}

function emptyLinks(m: number) {
  return {
    predType: new Uint8Array(m),
    predLag: new Int32Array(m),
    succType: new Uint8Array(m),
    succLag: new Int32Array(m),
  };
}

/**
 * Readers of the edges' links, checked (a type is a LINK code, a lag a whole number of days
 * within ±2^29, so sums of lags and days stay exact in an Int32Array); null when every link is
 * FS with no lag, so a plain graph carries no link arrays.
 */
function typedLinks(
  m: number,
  linkType: ArrayLike<number> | undefined,
  lag: ArrayLike<number> | undefined,
): { type: (i: number) => number; lag: (i: number) => number } | null {
  let plain = true;
  for (const [name, values, ok] of [
    ['linkType', linkType, (x: number) => x === 0 || x === 1 || x === 2 || x === 3],
    ['lag', lag, (x: number) => Number.isInteger(x) && Math.abs(x) < 2 ** 29],
  ] as const) {
    if (values === undefined) continue;
    if (values.length !== m) throw new RangeError(`${name} must have one entry per edge`);
    for (let i = 0; i < m; i++) {
      const x = values[i] ?? 0;
      if (!ok(x)) throw new RangeError(`${name}[${i}] is not a link's ${name}: ${x}`);
      if (x !== 0) plain = false;
    }
  }
  if (plain) return null;
  return { type: (i) => linkType?.[i] ?? 0, lag: (i) => lag?.[i] ?? 0 };
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
  const typeOf = (e: number) => typed?.type(e) ?? 0;
  const lagOf = (e: number) => typed?.lag(e) ?? 0;
  // Predecessor rows: the old ones as they were, then one row per new node.
  const predStart = new Uint32Array(n + 1);
  predStart.set(g.predStart);
  for (const t of to) predStart[t + 1] = (predStart[t + 1] ?? 0) + 1;
  for (let v = old; v < n; v++) predStart[v + 1] = (predStart[v + 1] ?? 0) + (predStart[v] ?? 0);
  const pred = new Uint32Array(predStart[n] ?? 0);
  pred.set(g.pred);
  if (links && g.links) {
    links.predType.set(g.links.predType);
    links.predLag.set(g.links.predLag);
  }
  const pFill = predStart.slice(old, n);
  for (let e = 0; e < to.length; e++) {
    const row = (to[e] ?? 0) - old;
    const at = pFill[row] ?? 0;
    pred[at] = from[e] ?? 0;
    if (links) {
      links.predType[at] = typeOf(e);
      links.predLag[at] = lagOf(e);
    }
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
    if (!links || !g.links) return;
    links.succType.set(g.links.succType.subarray(oldRow(first), oldRow(end)), newRow(first));
    links.succLag.set(g.links.succLag.subarray(oldRow(first), oldRow(end)), newRow(first));
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
    if (links) {
      links.succType[at] = typeOf(e);
      links.succLag[at] = lagOf(e);
    }
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

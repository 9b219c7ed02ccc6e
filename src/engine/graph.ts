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
}

/** Thrown by callers that need an acyclic graph; `cycle` is as from topoOrder. */
export class CycleError extends Error {
  readonly cycle: number[];
  constructor(cycle: number[]) {
    super(`Dependency cycle through ${cycle.length} task(s)`);
    this.name = 'CycleError';
    this.cycle = cycle;
  }
}

/** The graph's edges as buildGraph takes them, by the row of the task that waits. */
export function edgeLists(g: Graph): { from: Uint32Array; to: Uint32Array } {
  const from = g.pred.slice(0, g.predStart[g.n]);
  const to = new Uint32Array(from.length);
  for (let v = 0; v < g.n; v++) to.fill(v, g.predStart[v], g.predStart[v + 1]);
  return { from, to };
}

/** Edge i: node to[i] depends on (waits for) node from[i]. Duplicate edges are kept. */
export function buildGraph(n: number, from: ArrayLike<number>, to: ArrayLike<number>): Graph {
  const m = from.length;
  if (to.length !== m) throw new RangeError('from and to must have the same length');
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
  for (let i = 0; i < m; i++) {
    const f = from[i]!;
    const t = to[i]!;
    pred[pFill[t]!++] = f;
    succ[sFill[f]!++] = t;
  }
  return { n, predStart, pred, succStart, succ };
}

/**
 * `g` with `added` nodes after its own and the edges `from[e]` → `to[e]` they bring, each
 * ending at a new node (the caller checks it): the old predecessor rows are kept as they were
 * and the successor rows extended, not sorted again.
 */
export function extendGraph(g: Graph, added: number, from: Uint32Array, to: Uint32Array): Graph {
  const old = g.n;
  const n = old + added;
  // Predecessor rows: the old ones as they were, then one row per new node.
  const predStart = new Uint32Array(n + 1);
  predStart.set(g.predStart);
  for (const t of to) predStart[t + 1] = (predStart[t + 1] ?? 0) + 1;
  for (let v = old; v < n; v++) predStart[v + 1] = (predStart[v + 1] ?? 0) + (predStart[v] ?? 0);
  const pred = new Uint32Array(predStart[n] ?? 0);
  pred.set(g.pred);
  const pFill = predStart.slice(old, n);
  for (let e = 0; e < to.length; e++) {
    const row = (to[e] ?? 0) - old;
    const at = pFill[row] ?? 0;
    pred[at] = from[e] ?? 0;
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
  let runStart = 0;
  for (const s of sources) {
    if (s >= old) {
      fill.set(s, newRow(s));
      continue;
    }
    succ.set(g.succ.subarray(oldRow(runStart), oldRow(s + 1)), newRow(runStart));
    fill.set(s, newRow(s) + oldRow(s + 1) - oldRow(s));
    runStart = s + 1;
  }
  succ.set(g.succ.subarray(oldRow(runStart), oldRow(old)), newRow(runStart));
  for (let e = 0; e < from.length; e++) {
    const at = fill.get(from[e] ?? 0) ?? 0;
    succ[at] = to[e] ?? 0;
    fill.set(from[e] ?? 0, at + 1);
  }
  return { n, predStart, pred, succStart, succ };
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

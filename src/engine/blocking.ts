import type { Graph } from './graph.ts';
import { PASS_LANES, reachCounts } from './reach-pass.ts';
import { PROGRESS } from './status.ts';

/**
 * Blocking counts: for every node, how many unfinished tasks transitively depend on
 * it (its downstream reachable set, itself excluded, done tasks not counted).
 *
 * Exact, in two phases over topological positions (successors always sit at higher
 * positions):
 *  1. Sparse, in reverse position order so every successor comes first: most tasks
 *     reach few others, so their reachable unfinished tasks are kept as position lists,
 *     each the union of its successors' lists (deduplicated with a stamp array). A task
 *     whose list outgrows the sparse limit, or that has a dense successor, or that no
 *     longer fits in LIST_BUDGET, becomes dense; dense tasks thus form a
 *     predecessor-closed set (in practice the early, highly connected part of the graph).
 *  2. Dense: reach-pass.ts counts the dense tasks 512 at a time, one bit each, in
 *     passes over the whole graph (WebAssembly SIMD). It needs nothing from phase 1.
 * Lists hold unfinished tasks only (a done task reached adds nothing to a count), and
 * an unfinished successor already listed through an earlier one is skipped: its list
 * adds nothing (a transitively implied edge).
 * Memory stays under ~50 MB whatever the graph: 16 MB of lists plus O(n + edges).
 * Measured at 100k tasks / 300k edges (2 cores, best of 21): ~11k dense tasks, ~72 ms
 * in all, of which ~27 ms sparse and ~35 ms in the passes (was ~300 ms with JS bitsets).
 */
const LIST_BUDGET = 4 * 1024 * 1024;
/**
 * Beyond ~512 entries merging lists costs more than a dense task's share of a pass; at
 * 100k tasks, limits from 256 to 768 measured within 1 ms of each other.
 */
const sparseLimitFor = (n: number): number => Math.min(512, Math.max(16, n >>> 6));

/** Size limits, overridable so tests can force every phase and pass boundary. */
export interface BlockingLimits {
  listBudget?: number;
  sparseLimit?: number;
  /** Dense tasks per pass, 1 to 128. */
  passSources?: number;
}

export function blockingCounts(
  g: Graph,
  order: Uint32Array,
  progress: Uint8Array,
  limits: BlockingLimits = {},
): Uint32Array {
  const n = g.n;
  const pos = new Uint32Array(n);
  const open = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    pos[order[i]!] = i;
    open[i] = progress[order[i]!] === PROGRESS.done ? 0 : 1;
  }
  const { start, adj } = successorsByPosition(g, order, pos);
  const sparse = sparseCounts(
    start,
    adj,
    open,
    limits.sparseLimit ?? sparseLimitFor(n),
    limits.listBudget ?? LIST_BUDGET,
  );
  const counts = new Uint32Array(n);
  const dense = new Int32Array(n);
  let denseTasks = 0;
  for (let i = 0; i < n; i++) {
    if (sparse[i]! >= 0) counts[order[i]!] = sparse[i]!;
    else dense[denseTasks++] = i;
  }
  const denseCounts = reachCounts(
    g,
    order,
    pos,
    open,
    dense.subarray(0, denseTasks),
    limits.passSources ?? PASS_LANES,
  );
  for (let d = 0; d < denseTasks; d++) counts[order[dense[d]!]!] = denseCounts[d]!;
  return counts;
}

/** Per position: the number of unfinished tasks it reaches, or -1 for a dense task. */
function sparseCounts(
  start: Uint32Array,
  adj: Uint32Array,
  open: Uint8Array,
  limit: number,
  budget: number,
): Int32Array {
  const n = open.length;
  const counts = new Int32Array(n).fill(-1);
  // Slice [first[i], first[i] + counts[i]) of `arena` lists the open positions reachable
  // from position i. A list is built in place at the arena's end (no copy), so the arena
  // grows ahead of it by a whole list.
  const first = new Int32Array(n);
  let arena = new Uint32Array(Math.min(budget, 1 << 16));
  let used = 0;
  // stamp[x] === i: x is already in the list being built for position i.
  const stamp = new Int32Array(n).fill(-1);
  for (let i = n - 1; i >= 0; i--) {
    // A dense successor makes i dense: check them all before merging any list.
    let dense = false;
    for (let k = start[i]!, end = start[i + 1]!; k < end && !dense; k++)
      dense = counts[adj[k]!]! < 0;
    if (dense) continue;
    const cap = Math.min(used + limit, budget);
    if (cap > arena.length) {
      const grown = new Uint32Array(Math.min(budget, Math.max(arena.length * 2, cap)));
      grown.set(arena.subarray(0, used));
      arena = grown;
    }
    let w = used;
    succs: for (let k = start[i]!, end = start[i + 1]!; k < end; k++) {
      const j = adj[k]!;
      if (open[j] === 1) {
        if (stamp[j] === i) continue; // reached through an earlier successor
        if (w === cap) {
          dense = true;
          break;
        }
        stamp[j] = i;
        arena[w++] = j;
      }
      for (let p = first[j]!, pEnd = p + counts[j]!; p < pEnd; p++) {
        const x = arena[p]!;
        if (stamp[x] === i) continue;
        if (w === cap) {
          dense = true;
          break succs;
        }
        stamp[x] = i;
        arena[w++] = x;
      }
    }
    if (dense) continue;
    first[i] = used;
    counts[i] = w - used;
    used = w;
  }
  return counts;
}

/** Successor lists by topological position, each sorted ascending. */
function successorsByPosition(
  g: Graph,
  order: Uint32Array,
  pos: Uint32Array,
): { start: Uint32Array; adj: Uint32Array } {
  const { n, predStart, pred, succStart } = g;
  const start = new Uint32Array(n + 1);
  for (let i = 0; i < n; i++) {
    const v = order[i]!;
    start[i + 1] = start[i]! + succStart[v + 1]! - succStart[v]!;
  }
  const fill = start.slice(0, n);
  const adj = new Uint32Array(start[n]!);
  // Visiting targets in ascending position appends to every source list in ascending order.
  for (let i = 0; i < n; i++) {
    const v = order[i]!;
    for (let k = predStart[v]!, end = predStart[v + 1]!; k < end; k++)
      adj[fill[pos[pred[k]!]!]!++] = i;
  }
  return { start, adj };
}

import type { Graph } from './graph.ts';
import { blockingKernel, PASS_LANES } from './blocking-kernel.ts';
import { PROGRESS } from './status.ts';

/**
 * Blocking counts: for every node, how many unfinished tasks transitively depend on
 * it (its downstream reachable set, itself excluded, done tasks not counted).
 *
 * Exact, in two phases over topological positions (successors always sit at higher
 * positions), both run by the WebAssembly kernel (blocking-kernel.wat):
 *  1. Sparse, in reverse position order so every successor comes first: most tasks
 *     reach few others, so their reachable unfinished tasks are kept as position lists,
 *     each the union of its successors' lists (deduplicated with a stamp array). A task
 *     whose list outgrows the sparse limit, or that has a dense successor, or that no
 *     longer fits in LIST_BUDGET, becomes dense; dense tasks thus form a
 *     predecessor-closed set (in practice the early, highly connected part of the graph).
 *  2. Dense: passes over the whole graph count the dense tasks 512 at a time, one bit
 *     each (SIMD). It needs nothing from phase 1.
 * Lists hold unfinished tasks only (a done task reached adds nothing to a count), and
 * an unfinished successor already listed through an earlier one is skipped: its list
 * adds nothing (a transitively implied edge).
 * Memory: one WebAssembly memory of ~115 bytes a task and 12 an edge (64 of them the
 * pass's lanes), plus the lists, 16 MB at most: ~31 MB at 100k tasks / 300k edges.
 * Measured there (2 shared cores): ~11k dense tasks, ~35-45 ms in all, about 55% of it in
 * the passes, 30% merging lists and 10% laying out the rows (docs/performance.md).
 */
const LIST_BUDGET = 4 * 1024 * 1024;
/** Bit planes of the dense counters, per quarter of a pass's lanes: counts below 2^32. */
const PLANES = 32;
/**
 * Beyond ~512 entries merging lists costs more than a dense task's share of a pass; at
 * 100k tasks, limits from 256 to 768 measured within 1 ms of each other.
 */
const sparseLimitFor = (n: number): number => Math.min(512, Math.max(16, n >>> 6));

/** Size limits, overridable so tests can force every phase and pass boundary. */
export interface BlockingLimits {
  listBudget?: number;
  sparseLimit?: number;
  /** Dense tasks per pass, 1 to 512. */
  passSources?: number;
}

export function blockingCounts(
  g: Graph,
  order: Uint32Array,
  progress: Uint8Array,
  limits: BlockingLimits = {},
): Uint32Array {
  const { n, predStart, pred } = g;
  const edges = pred.length;
  const limit = limits.sparseLimit ?? sparseLimitFor(n);
  // Lists never hold more than `limit` entries a task.
  const budget = Math.min(limits.listBudget ?? LIST_BUDGET, n * limit);
  const perPass = limits.passSources ?? PASS_LANES;
  // The kernel's memory, areas as its .wat describes; the arena last, so that the part
  // no list reaches is never touched. Areas the kernel reads before it writes are cleared.
  let top = 0;
  const area = (bytes: number, align = 16): number => {
    const at = Math.ceil(top / align) * align;
    top = at + bytes;
    return at;
  };
  const orderAt = area(4 * n);
  const predStartAt = area(4 * (n + 1));
  const predAt = area(4 * edges);
  const progressAt = area(n);
  const pos = area(4 * n);
  const open = area(n);
  const pstart = area(4 * (n + 1));
  const ppos = area(4 * edges);
  const sstart = area(4 * (n + 1));
  const sadj = area(4 * edges);
  const first = area(4 * n); // also prepare's fill cursors
  const counts = area(4 * n);
  const stamp = area(4 * n);
  const dense = area(4 * n);
  const opens = area(4 * (n + 7));
  const sources = area(4 * (PASS_LANES + 1));
  const lanes = area(64 * PASS_LANES);
  const planes = area(4 * 16 * PLANES);
  const out = area(64 * (n + 1), 64);
  const result = area(4 * n);
  const arena = area(4 * budget);
  const { kernel, buffer } = blockingKernel(top);
  const words = new Int32Array(buffer);
  words.set(order, orderAt >> 2);
  words.set(predStart, predStartAt >> 2);
  words.set(pred, predAt >> 2);
  new Uint8Array(buffer).set(progress, progressAt);
  words.fill(0, sstart >> 2, (sstart >> 2) + n + 1);

  kernel.prepare(
    n,
    PROGRESS.done,
    orderAt,
    predStartAt,
    predAt,
    progressAt,
    pos,
    open,
    pstart,
    ppos,
    sstart,
    sadj,
    first,
  );
  words.fill(-1, counts >> 2, (counts >> 2) + n);
  words.fill(-1, stamp >> 2, (stamp >> 2) + n);
  kernel.sparse(n, sstart, sadj, open, counts, first, stamp, arena, limit, budget);
  const denseTasks = kernel.denseTasks(n, counts, dense);
  if (denseTasks > 0) {
    const openEnd = kernel.openTasks(n, open, opens);
    words.fill(0, out >> 2, (out + 64 * (n + 1)) >> 2);
    words.fill(0, lanes >> 2, (lanes + 64 * PASS_LANES) >> 2);
    for (let l = 0; l < PASS_LANES; l++) words[(lanes >> 2) + 16 * l + (l >>> 5)] = 1 << (l & 31);
    const bits = 32 - Math.clz32(n); // a count is below n < 2^bits
    // Last group first: each pass starts lower than the one before, so positions below
    // its start were never written and still hold the zero the kernel expects there.
    for (let s0 = Math.floor((denseTasks - 1) / perPass) * perPass; s0 >= 0; s0 -= perPass) {
      const group = Math.min(perPass, denseTasks - s0);
      words.copyWithin(sources >> 2, (dense >> 2) + s0, (dense >> 2) + s0 + group);
      words[(sources >> 2) + group] = n;
      words.fill(0, planes >> 2, (planes >> 2) + 4 * 4 * PLANES);
      kernel.pass(n, pstart, ppos, out, sources, lanes, planes, opens, openEnd);
      kernel.settle(group, bits, planes, sources, open, counts);
    }
  }
  kernel.byNode(n, orderAt, counts, result);
  return new Uint32Array(buffer, result, n).slice();
}

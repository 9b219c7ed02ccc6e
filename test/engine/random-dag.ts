/**
 * Seeded random DAGs for the large cases (pool test, benchmark): about `deps`
 * dependencies per task drawn uniformly from earlier positions of a random
 * permutation, the first `doneShare` of that order done (a dependency-closed set),
 * and half of the tasks that are then ready marked started.
 */
import type { RecomputeInput } from '../../src/engine/recompute.ts';

/** mulberry32: small, fast, reproducible. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function randomDag(
  n: number,
  opts: { seed?: number; deps?: number; doneShare?: number } = {},
): RecomputeInput {
  const random = rng(opts.seed ?? 1);
  const deps = opts.deps ?? 3;
  const doneCut = Math.floor(n * (opts.doneShare ?? 0.3));
  const perm = new Uint32Array(n);
  for (let i = 0; i < n; i++) perm[i] = i;
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    const t = perm[i]!;
    perm[i] = perm[j]!;
    perm[j] = t;
  }
  const edgeCount = Math.max(0, (n - 1) * deps);
  const from = new Uint32Array(edgeCount);
  const to = new Uint32Array(edgeCount);
  const progress = new Uint8Array(n);
  const duration = new Uint32Array(n);
  let e = 0;
  for (let p = 0; p < n; p++) {
    const v = perm[p]!;
    duration[v] = 1 + Math.floor(random() * 5);
    if (p === 0) continue;
    for (let d = 0; d < deps; d++) {
      from[e] = perm[Math.floor(random() * p)]!;
      to[e] = v;
      e++;
    }
  }
  for (let p = 0; p < doneCut; p++) progress[perm[p]!] = 2;
  // Tasks whose dependencies are all done may have been started.
  const waiting = new Uint32Array(n);
  for (let i = 0; i < edgeCount; i++) if (progress[from[i]!] !== 2) waiting[to[i]!]!++;
  for (let p = doneCut; p < n; p++) {
    const v = perm[p]!;
    if (waiting[v] === 0 && random() < 0.5) progress[v] = 1;
  }
  return { n, from, to, progress, duration, withCounts: false };
}

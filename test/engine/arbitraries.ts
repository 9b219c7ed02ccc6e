/**
 * fast-check generators for the graph property tests: DAGs whose edges all run from
 * a lower to a higher position of a random permutation, with progress drawn so a
 * task is started or done only when all its dependencies are done.
 */
import fc from 'fast-check';
import type { RefGraph } from './reference.ts';
import type { RecomputeInput } from '../../src/engine/recompute.ts';

export interface DagCase extends RefGraph {
  /** The permutation the edges respect (one topological order). */
  perm: number[];
}

export function dagArb(maxNodes = 60, minNodes = 1): fc.Arbitrary<DagCase> {
  return fc.integer({ min: minNodes, max: maxNodes }).chain((n) =>
    fc
      .record({
        perm: fc.shuffledSubarray([...Array(n).keys()], { minLength: n, maxLength: n }),
        pairs: fc.array(fc.tuple(fc.nat(n - 1), fc.nat(n - 1)), { maxLength: n * 3 }),
        wish: fc.array(fc.integer({ min: 0, max: 2 }), { minLength: n, maxLength: n }),
        duration: fc.array(fc.integer({ min: 1, max: 5 }), { minLength: n, maxLength: n }),
      })
      .map(({ perm, pairs, wish, duration }) => {
        const edges: DagCase['edges'] = pairs
          .filter(([a, b]) => a !== b)
          .map(([a, b]) => [perm[Math.min(a, b)]!, perm[Math.max(a, b)]!]);
        const preds: number[][] = Array.from({ length: n }, () => []);
        for (const [f, t] of edges) preds[t]!.push(f);
        // Walk in topological order: a wish for started/done holds only once every dependency is done.
        const progress = new Array<number>(n).fill(0);
        for (const v of perm) {
          progress[v] = preds[v]!.every((p) => progress[p] === 2) ? wish[v]! : 0;
        }
        return { n, perm, edges, progress, duration };
      }),
  );
}

export function toInput(g: RefGraph, withCounts = true): RecomputeInput {
  return {
    n: g.n,
    from: Uint32Array.from(g.edges, (e) => e[0]),
    to: Uint32Array.from(g.edges, (e) => e[1]),
    progress: Uint8Array.from(g.progress),
    duration: Uint32Array.from(g.duration),
    withCounts,
  };
}

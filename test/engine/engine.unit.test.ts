import t from 'tap';
import fc from 'fast-check';
import assert from 'node:assert/strict';
import { buildGraph, CycleError, topoOrder } from '../../src/engine/graph.ts';
import { TASK_STATUSES } from '../../src/contract/vocabulary.ts';
import { computeStatus } from '../../src/engine/status.ts';
import { cpm } from '../../src/engine/cpm.ts';
import { blockingCounts } from '../../src/engine/blocking.ts';
import { recompute } from '../../src/engine/recompute.ts';
import { dagArb, toInput } from './arbitraries.ts';
import {
  refBlockingCounts,
  refCpm,
  refIsTopological,
  refReachable,
  refStatus,
} from './reference.ts';

// Properties assert by throwing (node:assert) so fast-check can shrink a failure.
const RUNS = { numRuns: 150 };

t.test('engine equals the reference on random DAGs', async (t) => {
  fc.assert(
    fc.property(dagArb(), (dag) => {
      const input = toInput(dag);
      const g = buildGraph(dag.n, input.from, input.to);
      const topo = topoOrder(g);
      assert.ok(topo.order !== null, 'a DAG has an order');
      assert.ok(refIsTopological(dag.n, dag.edges, topo.order), 'order respects every edge');
      const c = cpm(g, topo.order, input.progress, input.duration);
      const ref = refCpm(dag);
      assert.deepEqual(
        [...computeStatus(g, input.progress)].map((s) => TASK_STATUSES[s]),
        refStatus(dag),
      );
      assert.deepEqual(
        {
          es: [...c.es],
          ef: [...c.ef],
          ls: [...c.ls],
          lf: [...c.lf],
          slack: [...c.slack],
          critical: [...c.critical].map(Boolean),
          finish: c.finish,
        },
        ref,
      );
      const counts = refBlockingCounts(dag);
      assert.deepEqual([...blockingCounts(g, topo.order, input.progress)], counts);
      // Tiny limits force each phase: all dense with one task per pass, a mix with two per
      // pass, lists cut short by their budget. None may change the answer.
      for (const limits of [
        { sparseLimit: 0, passSources: 1 },
        { sparseLimit: 3, passSources: 2 },
        { listBudget: 10 },
      ]) {
        assert.deepEqual(
          [...blockingCounts(g, topo.order, input.progress, limits)],
          counts,
          JSON.stringify(limits),
        );
      }
    }),
    RUNS,
  );
  t.pass('engine matches reference');
});

t.test('recompute bundles the same answers', async (t) => {
  fc.assert(
    fc.property(dagArb(30), fc.boolean(), (dag, withCounts) => {
      const out = recompute(toInput(dag, withCounts));
      const ref = refCpm(dag);
      assert.deepEqual(
        [...out.status].map((s) => TASK_STATUSES[s]),
        refStatus(dag),
      );
      assert.deepEqual([...out.es], ref.es);
      assert.deepEqual([...out.ef], ref.ef);
      assert.deepEqual([...out.slack], ref.slack);
      assert.deepEqual([...out.critical].map(Boolean), ref.critical);
      assert.equal(out.finish, ref.finish);
      assert.deepEqual(out.counts && [...out.counts], withCounts ? refBlockingCounts(dag) : null);
      assert.ok(refIsTopological(dag.n, dag.edges, out.order));
    }),
    { numRuns: 60 },
  );
  t.pass('recompute matches reference');
});

t.test('an injected cycle is always refused with a real cycle', async (t) => {
  const withCycle = dagArb().chain((dag) =>
    fc.record({ dag: fc.constant(dag), start: fc.nat(dag.n - 1), pick: fc.nat() }),
  );
  fc.assert(
    fc.property(withCycle, ({ dag, start, pick }) => {
      // Close a loop: an edge back from something downstream of `start` (or itself).
      const downstream = refReachable(dag, start);
      const back = downstream.length === 0 ? start : downstream[pick % downstream.length]!;
      const edges: typeof dag.edges = [...dag.edges, [back, start]];
      const input = toInput({ ...dag, edges });
      const topo = topoOrder(buildGraph(dag.n, input.from, input.to));
      assert.ok(topo.cycle !== null, 'cycle found');
      const { cycle } = topo;
      const edgeSet = new Set(edges.map(([f, to]) => `${f}>${to}`));
      assert.ok(cycle.length > 0 && new Set(cycle).size === cycle.length, 'distinct nodes');
      cycle.forEach((v, i) =>
        assert.ok(
          edgeSet.has(`${v}>${cycle[(i + 1) % cycle.length]}`),
          'consecutive nodes are edges',
        ),
      );
      assert.throws(() => recompute(input), CycleError);
    }),
    RUNS,
  );
  t.pass('cycles refused');
});

t.test('schedule respects dependencies, durations and the critical path', async (t) => {
  fc.assert(
    fc.property(dagArb(), fc.array(fc.nat(), { maxLength: 20 }), (dag, choices) => {
      const input = toInput(dag);
      // The generator's permutation is itself a valid topological order.
      const out = cpm(
        buildGraph(dag.n, input.from, input.to),
        Uint32Array.from(dag.perm),
        input.progress,
        input.duration,
      );
      const open = (v: number): boolean => dag.progress[v] !== 2;
      const succs: number[][] = Array.from({ length: dag.n }, () => []);
      for (const [f, to] of dag.edges) {
        succs[f]!.push(to);
        if (open(f) && open(to))
          assert.ok(out.es[to]! > out.ef[f]!, 'starts after its dependency ends');
      }
      for (let v = 0; v < dag.n; v++) {
        if (!open(v)) continue;
        assert.ok(out.es[v]! >= 0 && out.slack[v]! >= 0 && out.ef[v]! <= out.finish);
        assert.equal(out.ef[v]! - out.es[v]! + 1, dag.duration[v]);
      }
      const starts = [...Array(dag.n).keys()].filter(open);
      if (starts.length === 0) return assert.equal(out.finish, -1);
      // Any path of unfinished tasks (here a random walk) fits within the critical path.
      let v = starts[choices.length % starts.length]!;
      let days = dag.duration[v]!;
      for (const c of choices) {
        const next = succs[v]!.filter(open);
        if (next.length === 0) break;
        v = next[c % next.length]!;
        days += dag.duration[v]!;
      }
      assert.ok(days - 1 <= out.finish, 'path no longer than the critical path');
      assert.ok(
        criticalChainSpans(dag.n, out, succs),
        'a back-to-back critical chain spans 0..finish',
      );
    }),
    RUNS,
  );
  t.pass('schedule consistent');
});

t.test('buildGraph rejects out-of-range edges; an empty graph is fine', async (t) => {
  t.throws(() => buildGraph(2, [0], [2]), RangeError);
  const empty = new Uint32Array(0);
  const out = recompute({
    n: 0,
    from: empty,
    to: empty,
    progress: new Uint8Array(0),
    duration: empty,
    withCounts: true,
  });
  t.equal(out.finish, -1);
  t.same([...out.counts!], []);
});

function criticalChainSpans(n: number, out: ReturnType<typeof cpm>, succs: number[][]): boolean {
  const isCritical = (v: number): boolean => out.critical[v] === 1;
  const stack = [...Array(n).keys()].filter((v) => isCritical(v) && out.es[v] === 0);
  const seen = new Set<number>();
  while (stack.length > 0) {
    const v = stack.pop()!;
    if (out.ef[v] === out.finish) return true;
    if (seen.has(v)) continue;
    seen.add(v);
    stack.push(...succs[v]!.filter((s) => isCritical(s) && out.es[s] === out.ef[v]! + 1));
  }
  return false;
}

import t from 'tap';
import fc from 'fast-check';
import assert from 'node:assert/strict';
import { buildGraph, topoOrder } from '../../src/engine/graph.ts';
import { blockingCounts, type BlockingLimits } from '../../src/engine/blocking.ts';
import { PASS_LANES } from '../../src/engine/blocking-kernel.ts';
import { dagArb, toInput } from './arbitraries.ts';
import { randomDag } from './random-dag.ts';
import { refBlockingCounts, type RefGraph } from './reference.ts';

// Properties assert by throwing (node:assert) so fast-check can shrink a failure.

function countsWith(dag: RefGraph, limits: BlockingLimits): number[] {
  const input = toInput(dag);
  const g = buildGraph(dag.n, input.from, input.to);
  const topo = topoOrder(g);
  assert.ok(topo.order !== null, 'a DAG has an order');
  return [...blockingCounts(g, topo.order, input.progress, limits)];
}

t.test('dense passes: every lane of a pass, many passes, chunks of 255 tasks', async (t) => {
  // Up to 300 tasks, all dense: lanes 0..127 of full passes, a partial last pass, and
  // chunks of 255 tasks inside one pass (the kernel's register counts flush at 255).
  const passSources = fc.constantFrom(PASS_LANES, PASS_LANES - 1, 33, 32, 7);
  fc.assert(
    fc.property(dagArb(300), passSources, (dag, perPass) => {
      assert.deepEqual(
        countsWith(dag, { sparseLimit: 0, passSources: perPass }),
        refBlockingCounts(dag),
      );
    }),
    { numRuns: 40 },
  );
  t.pass('dense passes match the reference');
});

t.test('a full pass: all 512 lanes, every quarter, then a partial pass', async (t) => {
  // 520 to 700 tasks, all dense, done anywhere: the four quarters of a 512-lane pass,
  // each counted in groups of 8 open tasks (padded at the end), and chunks of 240 tasks.
  const bigDag = dagArb(700, 520).chain((dag) =>
    fc
      .array(fc.integer({ min: 0, max: 2 }), { minLength: dag.n, maxLength: dag.n })
      .map((progress) => ({ ...dag, progress })),
  );
  fc.assert(
    fc.property(bigDag, (dag) => {
      assert.deepEqual(countsWith(dag, { sparseLimit: 0 }), refBlockingCounts(dag));
    }),
    { numRuns: 8 },
  );
  t.pass('full passes match the reference');
});

t.test('the sparse limit may fall anywhere', async (t) => {
  fc.assert(
    fc.property(dagArb(200), fc.nat(64), fc.nat(300), (dag, sparseLimit, listBudget) => {
      const ref = refBlockingCounts(dag);
      assert.deepEqual(countsWith(dag, { sparseLimit }), ref);
      assert.deepEqual(countsWith(dag, { sparseLimit, listBudget, passSources: 5 }), ref);
    }),
    { numRuns: 60 },
  );
  t.pass('every split matches the reference');
});

/**
 * Wide fan-outs and fan-ins: a few hubs each joined to a large share of the tasks (fed
 * by those below it, feeding those above; edges run from lower to higher index), over a
 * random sparse background, with random progress (done anywhere).
 */
const hubbyArb = fc.integer({ min: 2, max: 300 }).chain((n) =>
  fc
    .record({
      hubs: fc.array(
        fc.record({ at: fc.nat(n - 1), share: fc.double({ min: 0.2, max: 1, noNaN: true }) }),
        { minLength: 1, maxLength: 4 },
      ),
      pairs: fc.array(fc.tuple(fc.nat(n - 1), fc.nat(n - 1)), { maxLength: n }),
      progress: fc.array(fc.integer({ min: 0, max: 2 }), { minLength: n, maxLength: n }),
      seed: fc.nat(),
    })
    .map(({ hubs, pairs, progress, seed }): RefGraph => {
      const edges: RefGraph['edges'] = pairs
        .filter(([a, b]) => a !== b)
        .map(([a, b]) => [Math.min(a, b), Math.max(a, b)]);
      let r = seed;
      for (const hub of hubs) {
        for (let v = 0; v < n; v++) {
          r = (Math.imul(r, 1103515245) + 12345) >>> 0;
          if (v === hub.at || r / 2 ** 32 >= hub.share) continue;
          edges.push([Math.min(hub.at, v), Math.max(hub.at, v)]);
        }
      }
      return { n, edges, progress, duration: new Array<number>(n).fill(1) };
    }),
);

t.test('wide fan-outs and fan-ins', async (t) => {
  fc.assert(
    fc.property(hubbyArb, (dag) => {
      const ref = refBlockingCounts(dag);
      assert.deepEqual(countsWith(dag, {}), ref);
      assert.deepEqual(countsWith(dag, { sparseLimit: 0 }), ref);
      assert.deepEqual(countsWith(dag, { sparseLimit: 8, passSources: 3 }), ref);
    }),
    { numRuns: 60 },
  );
  t.pass('hubs match the reference');
});

t.test('a 50,000-deep chain with done stretches, all dense', async (t) => {
  // Counts reach 49,999 (16 bits of the kernel's counters) over 391 passes.
  const n = 50_000;
  const from = Uint32Array.from({ length: n - 1 }, (_, i) => i);
  const to = Uint32Array.from({ length: n - 1 }, (_, i) => i + 1);
  const progress = Uint8Array.from({ length: n }, (_, i) => (i % 1000 < 300 ? 2 : 0));
  const g = buildGraph(n, from, to);
  const order = topoOrder(g).order!;
  // Unfinished tasks after position i, counted from the back.
  const expected = new Uint32Array(n);
  for (let i = n - 2; i >= 0; i--) expected[i] = expected[i + 1]! + (progress[i + 1] === 2 ? 0 : 1);
  t.same([...blockingCounts(g, order, progress, { sparseLimit: 0 })], [...expected]);
});

t.test('a count after a larger one reads nothing the larger one left behind', async (t) => {
  // The kernel's memory is kept between counts: fill all of it with a 20k-task count first.
  const big = randomDag(20_000, { seed: 7, doneShare: 0.5 });
  const g = buildGraph(big.n, big.from, big.to);
  const order = topoOrder(g).order;
  assert.ok(order !== null, 'a DAG has an order');
  blockingCounts(g, order, big.progress, { sparseLimit: 8 });
  fc.assert(
    fc.property(hubbyArb, fc.nat(64), (dag, sparseLimit) => {
      assert.deepEqual(countsWith(dag, { sparseLimit }), refBlockingCounts(dag));
    }),
    { numRuns: 30 },
  );
  t.pass('later counts match the reference');
});

import t from 'tap';
import { buildGraph, topoOrder } from '../../src/engine/graph.ts';
import { cpm } from '../../src/engine/cpm.ts';
import { blockingCounts } from '../../src/engine/blocking.ts';
import { recompute } from '../../src/engine/recompute.ts';
import { STATUS_BLOCKED, STATUS_DONE, STATUS_READY } from '../../src/engine/status.ts';

// A 50,000-long chain would overflow any recursive pass; every pass here must be iterative.
const N = 50_000;

function chain(n: number): { from: Uint32Array; to: Uint32Array } {
  // Edges listed back to front so the input order is no hint of the topological order.
  const from = new Uint32Array(n - 1);
  const to = new Uint32Array(n - 1);
  for (let k = 0; k < n - 1; k++) {
    const i = n - 2 - k;
    from[k] = i;
    to[k] = i + 1;
  }
  return { from, to };
}

t.test('open chain: order, CPM and counts are exact', async (t) => {
  const { from, to } = chain(N);
  const g = buildGraph(N, from, to);
  const topo = topoOrder(g);
  t.ok(topo.order, 'acyclic');
  const order = topo.order!;
  t.ok(
    order.every((v, i) => v === i),
    'order is 0..n-1',
  );
  const progress = new Uint8Array(N);
  const c = cpm(g, order, progress, new Uint32Array(N).fill(1));
  t.equal(c.finish, N - 1);
  t.ok(c.es.every((v, i) => v === i) && c.ls.every((v, i) => v === i), 'es = ls = i');
  t.ok(c.slack.every((s) => s === 0) && c.critical.every((x) => x === 1), 'all critical');
  const counts = blockingCounts(g, order, progress);
  t.ok(
    counts.every((x, i) => x === N - 1 - i),
    'count = n - 1 - i',
  );
});

t.test('chain with a done prefix and a started head', async (t) => {
  const { from, to } = chain(N);
  const done = 1000;
  const progress = new Uint8Array(N);
  progress.fill(2, 0, done);
  progress[done] = 1;
  const out = recompute({
    n: N,
    from,
    to,
    progress,
    duration: new Uint32Array(N).fill(2),
    withCounts: true,
  });
  t.equal(out.status[0], STATUS_DONE);
  t.equal(out.status[done + 1], STATUS_BLOCKED);
  t.equal(out.es[done - 1], -1);
  t.equal(out.es[done], 0);
  t.equal(out.ef[N - 1], 2 * (N - done) - 1);
  t.equal(out.finish, 2 * (N - done) - 1);
  // Done tasks still block everything unfinished downstream of them.
  t.ok(
    out.counts!.every((x, i) => x === (i < done ? N - done : N - 1 - i)),
    'counts exact',
  );
});

t.test('a 50,000-node cycle is found without recursion', async (t) => {
  const { from, to } = chain(N);
  const topo = topoOrder(buildGraph(N, [...from, N - 1], [...to, 0]));
  const cycle = topo.cycle ?? [];
  t.equal(cycle.length, N);
  t.ok(
    cycle.every((v, i) => cycle[(i + 1) % N] === (v + 1) % N),
    'each node a dependency of the next',
  );
});

t.test('a lone ready task', async (t) => {
  const one = new Uint32Array(0);
  const out = recompute({
    n: 1,
    from: one,
    to: one,
    progress: new Uint8Array(1),
    duration: Uint32Array.of(3),
    withCounts: true,
  });
  t.equal(out.status[0], STATUS_READY);
  t.equal(out.finish, 2);
  t.same([...out.counts!], [0]);
});

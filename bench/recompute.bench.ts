/**
 * Recompute benchmark: random DAGs of 1k/10k/100k tasks (~3 dependencies each,
 * 30% done), median wall time of
 *   engineMs  recompute without counts (CSR build + topo + status + both passes), FS links only,
 *   typedMs   the same on the same DAG with typed links (three in ten SS, FF or SF, as many with
 *             a lag or a lead), milestones and constraints whose days a calendar of 2,000
 *             holidays gave (test/engine/random-flow.ts),
 *   countsMs  the FS-only recompute with blocking counts,
 *   incrementalMs  the next version after one `complete`, derived from the last (deriveNext),
 *   incrementalTypedMs  the same on the typed flow,
 *   datesMs   every open task's four shown days named on that holiday calendar,
 *   poolMs    a round trip through the worker pool (transfer both ways),
 *   peerMs    the same status + CPM written plainly on graphology + graphology-dag,
 * and heapMB: memory held by the 10k graph's input and output arrays.
 * Prints one JSON line. Run: node --import tsx bench/recompute.bench.ts
 */
import os from 'node:os';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { DirectedGraph } from 'graphology';
import { topologicalSort } from 'graphology-dag';
import { recompute } from '../src/engine/recompute.ts';
import { derivedFrom, deriveNext } from '../src/engine/incremental.ts';
import { PROGRESS } from '../src/engine/status.ts';
import type { RecomputeInput, RecomputeOutput } from '../src/engine/recompute.ts';
import { RecomputePool } from '../src/services/flows/recompute-pool.ts';
import { randomDag } from '../test/engine/random-dag.ts';
import { holidayCalendar, typedRandomFlow } from '../test/engine/random-flow.ts';
import { machine } from './support.ts';

const SIZES = [1_000, 10_000, 100_000];
// Repetitions per size: fewer where one run is long, to keep the whole bench within minutes.
const REPS: Record<number, { engine: number; counts: number; pool: number; peer: number }> = {
  1_000: { engine: 200, counts: 100, pool: 50, peer: 30 },
  10_000: { engine: 50, counts: 20, pool: 20, peer: 10 },
  100_000: { engine: 9, counts: 3, pool: 5, peer: 2 },
};

async function median(reps: number, once: () => unknown): Promise<number> {
  const times: number[] = [];
  for (let r = 0; r < reps; r++) {
    const t0 = performance.now();
    await once();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return round(times[times.length >> 1]!);
}

const round = (x: number): number => Math.round(x * 100) / 100;

function copy(input: RecomputeInput): RecomputeInput {
  const { from, to, progress, duration } = input;
  return {
    ...input,
    from: from.slice(),
    to: to.slice(),
    progress: progress.slice(),
    duration: duration.slice(),
  };
}

/** Status + CPM with the same semantics as the engine, on graphology's API. */
function peer(input: RecomputeInput): { status: Map<string, string>; finish: number } {
  const { n, from, to, progress, duration } = input;
  const graph = new DirectedGraph();
  for (let v = 0; v < n; v++)
    graph.addNode(String(v), { progress: progress[v], duration: duration[v] });
  for (let i = 0; i < from.length; i++) graph.mergeEdge(String(from[i]), String(to[i]));
  const order = topologicalSort(graph);
  const done = (v: string): boolean => graph.getNodeAttribute(v, 'progress') === 2;
  const dur = (v: string): number => graph.getNodeAttribute(v, 'duration');
  const status = new Map<string, string>();
  graph.forEachNode((v, attrs) => {
    if (attrs.progress === 2) status.set(v, 'done');
    else if (attrs.progress === 1) status.set(v, 'in_progress');
    else status.set(v, graph.inNeighbors(v).every(done) ? 'ready' : 'blocked');
  });
  const es = new Map<string, number>();
  const ef = new Map<string, number>();
  let finish = -1;
  for (const v of order) {
    if (done(v)) continue;
    let start = 0;
    for (const p of graph.inNeighbors(v)) if (!done(p)) start = Math.max(start, ef.get(p)! + 1);
    es.set(v, start);
    ef.set(v, start + dur(v) - 1);
    finish = Math.max(finish, start + dur(v) - 1);
  }
  const ls = new Map<string, number>();
  const critical = new Set<string>();
  for (let i = order.length - 1; i >= 0; i--) {
    const v = order[i]!;
    if (done(v)) continue;
    let lf = finish;
    for (const s of graph.outNeighbors(v)) if (!done(s)) lf = Math.min(lf, ls.get(s)! - 1);
    ls.set(v, lf - dur(v) + 1);
    if (ls.get(v) === es.get(v)) critical.add(v);
  }
  return { status, finish };
}

function gcFunction(): () => void {
  const existing = (globalThis as { gc?: () => void }).gc;
  if (existing) return existing;
  // Without --expose-gc: switch the flag on and fetch gc from a fresh context.
  v8.setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

/** Heap + array-buffer memory held by one graph's input and output (typed arrays live outside the JS heap). */
function heapMB(n: number): number {
  const used = (): number => {
    gc();
    gc();
    const m = process.memoryUsage();
    return m.heapUsed + m.arrayBuffers;
  };
  const before = used();
  const input = randomDag(n);
  const held: [RecomputeInput, RecomputeOutput] = [
    input,
    recompute({ ...input, withCounts: true }),
  ];
  const after = used();
  if (held[1].order.length !== n) throw new Error('unreachable');
  return round((after - before) / 2 ** 20);
}

/**
 * The next version after one `complete` of an unfinished task, derived from the last
 * (deriveNext on a copy of progress with that task done), one after another as a flow's
 * commands come: median of 50.
 */
async function incremental(input: RecomputeInput): Promise<number> {
  // Each version's facts are the last's: deriveNext is given none, as a completion gives none.
  let current = derivedFrom(input, recompute(input));
  const open = [...current.progress.keys()].filter((v) => current.progress[v] !== PROGRESS.done);
  let next = 0;
  return median(50, () => {
    const v = open[(next = (next + 7919) % open.length)]!;
    const progress = current.progress.slice();
    progress[v] = PROGRESS.done;
    current = deriveNext(current, [v], progress, current.duration);
  });
}

/** Every open task's shown days named on `calendar` from a start, as a schedule's read names them. */
function dates(output: RecomputeOutput, calendar: ReturnType<typeof holidayCalendar>): number {
  const days = calendar.days('2026-01-05');
  let named = 0;
  for (const a of [output.es, output.ef, output.ls, output.lf])
    for (let v = 0; v < a.length; v++)
      if (output.status[v] !== 3) named += days.date(a[v] ?? 0).length;
  return named;
}

const gc = gcFunction();
const calendar = holidayCalendar();
const pool = new RecomputePool({
  threads: Math.max(1, os.cpus().length),
  timeoutMs: 120_000,
  maxInFlight: 8,
});
// Measured first, while the heap is quiet, so other phases' garbage cannot blur it.
const heap10k = heapMB(10_000);
const results = [];
for (const n of SIZES) {
  const reps = REPS[n]!;
  const input = randomDag(n, { seed: n });
  const withCounts = { ...input, withCounts: true };
  await pool.run(copy(input), 'bench'); // warm the workers before timing
  const copies = Array.from({ length: reps.pool }, () => copy(input));
  // Collect between phases so no phase pays for another's garbage (the peer's above all).
  gc();
  const engineMs = await median(reps.engine, () => recompute(input));
  gc();
  const typed = typedRandomFlow(n, { seed: n, calendar });
  const typedMs = await median(reps.engine, () => recompute(typed));
  gc();
  const typedOutput = recompute(typed);
  const datesMs = await median(reps.pool, () => dates(typedOutput, calendar));
  gc();
  const countsMs = await median(reps.counts, () => recompute(withCounts));
  gc();
  const poolMs = await median(reps.pool, () => pool.run(copies.pop()!, 'bench'));
  gc();
  if (peer(input).finish !== recompute(input).finish) throw new Error(`peer disagrees at n=${n}`);
  const peerMs = await median(reps.peer, () => peer(input));
  gc();
  const incrementalMs = await incremental(input);
  gc();
  const incrementalTypedMs = await incremental(typed);
  gc();
  results.push({
    n,
    engineMs,
    typedMs,
    countsMs,
    incrementalMs,
    incrementalTypedMs,
    datesMs,
    poolMs,
    peerMs,
    heapMB: n === 10_000 ? heap10k : null,
  });
}
await pool.close();

console.log(JSON.stringify({ name: 'recompute', machine: machine(), results }));

/**
 * The schedule with typed links against the plain reference (schedule-reference.ts): random flows
 * with every link type, lags and leads, milestones, constraints and work in progress; the same
 * reference with none of those reproduces the old one (reference.ts's refCpm), so the plain
 * schedule is what it was; cycles through any link type are refused; blocking counts run over
 * every link; what holds a start and a completion.
 */
import t from 'tap';
import fc from 'fast-check';
import assert from 'node:assert/strict';
import { TASK_STATUSES } from '../../src/contract/vocabulary.ts';
import { blockingCounts } from '../../src/engine/blocking.ts';
import { NO_BOUND } from '../../src/engine/cpm.ts';
import { buildGraph, CycleError, LINK, topoOrder } from '../../src/engine/graph.ts';
import { recompute, type RecomputeOutput } from '../../src/engine/recompute.ts';
import { finishBlockers, startBlockers } from '../../src/engine/status.ts';
import { dagArb, toInput } from './arbitraries.ts';
import { flowArb, flowInput } from './flow-arbitraries.ts';
import { refBlockingCounts, refCpm, refReachable } from './reference.ts';
import {
  plainFlow,
  at,
  refFinishBlockers,
  refSchedule,
  type RefFlow,
  type RefSchedule,
} from './schedule-reference.ts';

/** The engine's output in the reference's terms (null for done tasks). */
function asReference(flow: RefFlow, out: RecomputeOutput): RefSchedule {
  const open = (v: number) => flow.progress[v] !== 2;
  const field = (a: Int32Array) => Array.from(a, (x, v) => (open(v) ? x : null));
  const { passes } = out;
  const LF = Array.from(passes.tail, (tail, v) =>
    open(v) ? Math.min(passes.projectEnd - tail, at(passes.bound, v)) : null,
  );
  return {
    S: field(passes.start),
    F: field(passes.end),
    LS: LF.map((lf, v) =>
      lf === null ? null : lf - (flow.milestone[v] ? 0 : Math.max(1, at(flow.duration, v))),
    ),
    LF,
    earliestStart: field(out.es),
    earliestFinish: field(out.ef),
    latestStart: field(out.ls),
    latestFinish: field(out.lf),
    totalFloat: field(out.slack),
    freeFloat: field(out.freeFloat),
    critical: Array.from(out.critical, Boolean),
    E: passes.projectEnd < 0 ? null : passes.projectEnd,
    projectedFinish: out.finish < 0 ? null : out.finish,
    status: Array.from(out.status, (s) => at(TASK_STATUSES, s)),
  };
}

t.test('the engine equals the reference on random flows with every link type', async (t) => {
  const seen = { negativeFloat: 0, lead: 0, milestone: 0, atZero: 0, freeBelowTotal: 0 };
  fc.assert(
    fc.property(flowArb(30), (flow) => {
      const out = recompute(flowInput(flow, true));
      const ref = refSchedule(flow);
      assert.deepEqual(asReference(flow, out), ref);
      assert.deepEqual(
        [...(out.counts ?? [])],
        refBlockingCounts({ ...flow, edges: flow.links.map((l) => [l.from, l.to]) }),
      );
      // Done tasks read −1 where the reference has nothing (and bound nothing).
      flow.progress.forEach((p, v) => {
        if (p !== 2) return;
        for (const a of [out.es, out.ef, out.ls, out.lf, out.slack, out.freeFloat, out.passes.tail])
          assert.equal(a[v], -1);
        assert.equal(out.passes.bound[v], NO_BOUND);
      });
      if (ref.totalFloat.some((f) => f !== null && f < 0)) seen.negativeFloat++;
      if (flow.links.some((l) => l.lag < 0)) seen.lead++;
      if (flow.milestone.some((m, v) => m && flow.progress[v] !== 2)) seen.milestone++;
      if (flow.inProgressAtZero && flow.progress.includes(1)) seen.atZero++;
      if (ref.freeFloat.some((f, v) => f !== null && f < (ref.totalFloat[v] ?? 0)))
        seen.freeBelowTotal++;
    }),
    { numRuns: 1500 },
  );
  for (const [what, count] of Object.entries(seen))
    t.ok(count > 50, `${what}: ${count} of 1500 flows`);
});

t.test('flows a history can reach: the engine equals the reference', async (t) => {
  fc.assert(
    fc.property(flowArb(40, { consistent: true }), (flow) => {
      assert.deepEqual(asReference(flow, recompute(flowInput(flow))), refSchedule(flow));
    }),
    { numRuns: 500 },
  );
  t.pass('500 flows');
});

t.test(
  'with no link type, lag, milestone or constraint the reference is the old one',
  async (t) => {
    // refCpm is the plain schedule's reference (shown days, ls and lf as days, slack, critical):
    // the relaxation agrees with it on every plain flow, with or without tasks in progress at day 0
    // (dagArb starts a task only once what it waits on is done).
    fc.assert(
      fc.property(dagArb(40), fc.boolean(), (dag, atZero) => {
        const ref = refSchedule({ ...plainFlow(dag), inProgressAtZero: atZero });
        const old = refCpm(dag);
        const or = (a: (number | null)[]) => a.map((x) => x ?? -1);
        assert.deepEqual(
          {
            es: or(ref.earliestStart),
            ef: or(ref.earliestFinish),
            ls: or(ref.latestStart),
            lf: or(ref.latestFinish),
            slack: or(ref.totalFloat),
            critical: ref.critical,
            finish: ref.projectedFinish ?? -1,
          },
          old,
        );
        // And the engine given every array, all plain, equals the engine given none.
        const plain = recompute(toInput(dag, false));
        const input = { ...flowInput(plainFlow(dag)), inProgressAtZero: atZero };
        assert.deepEqual(recompute(input), plain);
        const g = buildGraph(dag.n, input.from, input.to, input.linkType, input.lag);
        assert.equal(g.links, null, 'no link arrays kept for plain links');
      }),
      { numRuns: 400 },
    );
    t.pass('400 plain flows');
  },
);

t.test('a cycle through links of any type is refused', async (t) => {
  const withCycle = flowArb(20).chain((flow) =>
    fc.record({
      flow: fc.constant(flow),
      start: fc.nat(flow.n - 1),
      pick: fc.nat(),
      type: fc.constantFrom(...(Object.keys(LINK) as (keyof typeof LINK)[])),
      lag: fc.integer({ min: -3, max: 3 }),
    }),
  );
  fc.assert(
    fc.property(withCycle, ({ flow, start, pick, type, lag }) => {
      const edges = flow.links.map((l): [number, number] => [l.from, l.to]);
      const downstream = refReachable({ ...flow, edges }, start);
      const back = downstream.length === 0 ? start : at(downstream, pick % downstream.length);
      const cyclic = { ...flow, links: [...flow.links, { from: back, to: start, type, lag }] };
      const input = flowInput(cyclic);
      const topo = topoOrder(buildGraph(flow.n, input.from, input.to, input.linkType, input.lag));
      assert.ok(topo.cycle !== null && topo.cycle.length > 0);
      assert.throws(() => recompute(input), CycleError);
    }),
    { numRuns: 300 },
  );
  t.pass('cycles refused');
});

t.test('what holds a start and a completion, by link type', async (t) => {
  fc.assert(
    fc.property(flowArb(20), (flow) => {
      const input = flowInput(flow);
      const g = buildGraph(flow.n, input.from, input.to, input.linkType, input.lag);
      for (let v = 0; v < flow.n; v++) {
        assert.deepEqual(finishBlockers(g, input.progress, v), refFinishBlockers(flow, v));
        const holding = flow.links.filter(
          (l) =>
            l.to === v &&
            ((l.type === 'FS' && flow.progress[l.from] !== 2) ||
              (l.type === 'SS' && flow.progress[l.from] === 0)),
        );
        assert.deepEqual(
          startBlockers(g, input.progress, v),
          holding.map((l) => l.from),
        );
      }
      // Blocking counts run over every edge whatever its type: the plain graph's counts.
      const order = topoOrder(g).order ?? new Uint32Array();
      const plain = buildGraph(flow.n, input.from, input.to);
      assert.deepEqual(
        blockingCounts(g, order, input.progress),
        blockingCounts(plain, order, input.progress),
      );
    }),
    { numRuns: 300 },
  );
  t.pass('blockers by type');
});

t.test(
  'links are checked: a type outside the four, a lag not whole, arrays of the wrong length',
  async (t) => {
    const from = [0];
    const to = [1];
    t.throws(() => buildGraph(2, from, to, [4], [0]), RangeError);
    t.throws(() => buildGraph(2, from, to, [0], [1.5]), RangeError);
    t.throws(() => buildGraph(2, from, to, [0, 0]), RangeError);
    t.throws(() => buildGraph(2, from, to, undefined, [2 ** 30]), RangeError);
    t.not(buildGraph(2, from, to, undefined, [-2]).links, null, 'a lead alone keeps the links');
    // Typed arrays, as the service gives them: the same checks.
    const one = Uint32Array.of(0);
    const two = Uint32Array.of(1);
    t.throws(() => buildGraph(2, one, two, Uint8Array.of(4), Int32Array.of(0)), RangeError);
    t.throws(
      () => buildGraph(2, one, two, Uint8Array.of(1), Int32Array.of(-(2 ** 29))),
      RangeError,
    );
    t.equal(
      buildGraph(2, one, two, Uint8Array.of(0), Int32Array.of(0)).links,
      null,
      'all plain: none',
    );
    t.equal(
      buildGraph(2, one, two, Uint8Array.of(3), Int32Array.of(-7)).links?.predLink[0],
      -7 * 4 + 3,
    );
    t.throws(
      () =>
        recompute({
          ...flowInput(plainFlow({ n: 2, edges: [[0, 1]], progress: [0, 0], duration: [1, 1] })),
          milestone: new Uint8Array(1),
        }),
      RangeError,
    );
  },
);

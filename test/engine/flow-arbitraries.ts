/**
 * fast-check generators of flows with every link type, lags and leads, milestones, constraints
 * and work in progress (schedule-reference.ts's RefFlow), over DAGs as arbitraries.ts draws
 * them; and the engine input of such a flow.
 */
import fc from 'fast-check';
import { dagArb } from './arbitraries.ts';
import { at, type LinkName, type RefFlow } from './schedule-reference.ts';
import { NO_BOUND } from '../../src/engine/cpm.ts';
import { LINK } from '../../src/engine/graph.ts';
import type { RecomputeInput } from '../../src/engine/recompute.ts';

export interface FlowCase extends RefFlow {
  /** The permutation the links respect (one topological order). */
  perm: number[];
}

const TYPES: LinkName[] = ['FS', 'SS', 'FF', 'SF'];

/** A value one time in five, else null. */
const sometimes = (arb: fc.Arbitrary<number>) =>
  fc.oneof({ arbitrary: fc.constant(null), weight: 4 }, { arbitrary: arb, weight: 1 });

/**
 * Progress is drawn freely (a task may be started while what it waits on is not done), so the
 * passes meet every state a flow's history or an import may leave; `consistent` draws it as the
 * status rules allow a flow to reach it instead.
 */
export function flowArb(
  maxNodes = 30,
  opts: { consistent?: boolean; minNodes?: number } = {},
): fc.Arbitrary<FlowCase> {
  return dagArb(maxNodes, opts.minNodes ?? 1).chain((dag) => {
    const n = dag.n;
    const m = dag.edges.length;
    const perTask = <T>(arb: fc.Arbitrary<T>) => fc.array(arb, { minLength: n, maxLength: n });
    return fc
      .record({
        types: fc.array(fc.constantFrom(...TYPES), { minLength: m, maxLength: m }),
        lags: fc.array(fc.oneof(fc.constant(0), fc.integer({ min: -4, max: 4 })), {
          minLength: m,
          maxLength: m,
        }),
        milestone: perTask(fc.nat(5).map((x) => x === 0)),
        startNoEarlier: perTask(sometimes(fc.integer({ min: -3, max: 12 }))),
        finishNoLater: perTask(sometimes(fc.integer({ min: -3, max: 20 }))),
        progress: perTask(fc.integer({ min: 0, max: 2 })),
        duration: perTask(fc.integer({ min: 0, max: 5 })),
        inProgressAtZero: fc.boolean(),
      })
      .map((drawn) => {
        const links = dag.edges.map(([from, to], i) => ({
          from,
          to,
          type: at(drawn.types, i),
          lag: at(drawn.lags, i),
        }));
        const progress = opts.consistent
          ? reachable(dag.perm, links, drawn.progress)
          : drawn.progress;
        return {
          n,
          perm: dag.perm,
          links,
          progress,
          duration: drawn.duration,
          milestone: drawn.milestone,
          startNoEarlier: drawn.startNoEarlier,
          finishNoLater: drawn.finishNoLater,
          inProgressAtZero: drawn.inProgressAtZero,
        };
      });
  });
}

/**
 * Progress a flow can reach, walked in topological order: a task starts once no FS or SS link
 * holds it, and completes once, besides, no FF or SF link holds its finish.
 */
function reachable(perm: number[], links: FlowCase['links'], wish: number[]): number[] {
  const progress = wish.map(() => 0);
  for (const v of perm) {
    const into = links.filter((l) => l.to === v);
    const startHeld = into.some(
      (l) =>
        (l.type === 'FS' && progress[l.from] !== 2) || (l.type === 'SS' && progress[l.from] === 0),
    );
    const finishHeld = into.some(
      (l) =>
        (l.type === 'FF' && progress[l.from] !== 2) || (l.type === 'SF' && progress[l.from] === 0),
    );
    const want = at(wish, v);
    progress[v] = startHeld ? 0 : finishHeld ? Math.min(want, 1) : want;
  }
  return progress;
}

/** The engine's input for a flow: every optional array given. */
export function flowInput(flow: RefFlow, withCounts = false): RecomputeInput {
  return {
    n: flow.n,
    from: Uint32Array.from(flow.links, (l) => l.from),
    to: Uint32Array.from(flow.links, (l) => l.to),
    linkType: Uint8Array.from(flow.links, (l) => LINK[l.type]),
    lag: Int32Array.from(flow.links, (l) => l.lag),
    progress: Uint8Array.from(flow.progress),
    duration: Uint32Array.from(flow.duration),
    milestone: Uint8Array.from(flow.milestone, Number),
    startNoEarlier: Int32Array.from(flow.startNoEarlier, (c) => c ?? 0),
    finishNoLater: Int32Array.from(flow.finishNoLater, (c) => c ?? NO_BOUND),
    inProgressAtZero: flow.inProgressAtZero,
    withCounts,
  };
}

/**
 * The forecast engine against the naive reference: on random DAGs with random ranges, each
 * sample's finish and critical tasks equal refCpm's over the same draws (drawn here by a
 * generator and an inverse CDF written from their definitions); any split of the samples sums
 * to the whole; the triangular draw meets its ends and its mode.
 */
import t from 'tap';
import fc from 'fast-check';
import {
  forecastPart,
  sampleState,
  triangular,
  type ForecastModel,
} from '../../src/engine/forecast.ts';
import { dagArb, type DagCase } from './arbitraries.ts';
import { refCpm } from './reference.ts';

interface Piece {
  low: number;
  mode: number;
  high: number;
}

interface Case {
  dag: DagCase;
  /** Per task (by position in dag.perm): the drawn pieces and the hours not drawn; none: fixed days. */
  draws: ({ pieces: Piece[]; fixed: number } | null)[];
  seed: number;
}

const pieceArb = fc.tuple(fc.nat(80), fc.nat(80), fc.nat(80)).map(([a, b, c]) => {
  const [low = 0, mode = 0, high = 0] = [a, b, c].sort((x, y) => x - y);
  return { low, mode, high };
});

const caseArb: fc.Arbitrary<Case> = dagArb(25).chain((dag) =>
  fc.record({
    dag: fc.constant(dag),
    draws: fc.array(
      fc.option(
        fc.record({
          pieces: fc.array(pieceArb, { minLength: 1, maxLength: 3 }),
          fixed: fc.nat(20),
        }),
      ),
      { minLength: dag.n, maxLength: dag.n },
    ),
    seed: fc.nat(0xffffffff),
  }),
);

/** The model of a case: tasks numbered by their place in dag.perm (a topological order), all open. */
function modelOf({ dag, draws }: Case): ForecastModel {
  const m = dag.n;
  const at = new Map(dag.perm.map((v, k) => [v, k]));
  const lists = Array.from({ length: m }, () => [] as number[]);
  for (const [from, to] of dag.edges) lists[at.get(to) ?? 0]?.push(at.get(from) ?? 0);
  const predStart = new Uint32Array(m + 1);
  lists.forEach((list, k) => (predStart[k + 1] = (predStart[k] ?? 0) + list.length));
  const ranged: number[] = [];
  const fixedHours: number[] = [];
  const pieceStart = [0];
  const pieces: Piece[] = [];
  draws.forEach((draw, k) => {
    if (!draw) return;
    ranged.push(k);
    fixedHours.push(draw.fixed);
    pieces.push(...draw.pieces);
    pieceStart.push(pieces.length);
  });
  return {
    m,
    predStart,
    pred: Uint32Array.from(lists.flat()),
    days: Uint32Array.from(dag.perm, (v) => dag.duration[v] ?? 1),
    ranged: Uint32Array.from(ranged),
    fixedHours: Float64Array.from(fixedHours),
    pieceStart: Uint32Array.from(pieceStart),
    low: Float64Array.from(pieces, (p) => p.low),
    mode: Float64Array.from(pieces, (p) => p.mode),
    high: Float64Array.from(pieces, (p) => p.high),
  };
}

/** mulberry32, as its author wrote it. */
function mulberry32(a: number): () => number {
  return () => {
    a |= 0;
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The inverse of the triangular CDF, from its two halves. */
function refTriangular(u: number, { low, mode, high }: Piece): number {
  if (high === low) return mode;
  const atMode = (mode - low) / (high - low);
  return u < atMode
    ? low + Math.sqrt(u * (high - low) * (mode - low))
    : high - Math.sqrt((1 - u) * (high - low) * (high - mode));
}

/** Sample `k`'s finish and critical tasks (by place in perm), from refCpm over its draws. */
function refSample(c: Case, k: number): { finish: number; critical: boolean[] } {
  const next = mulberry32(sampleState(c.seed, k));
  const duration = c.dag.perm.map((v, place) => {
    const draw = c.draws[place];
    if (!draw) return c.dag.duration[v] ?? 1;
    const hours = draw.pieces.reduce(
      (sum, piece) => sum + refTriangular(next(), piece),
      draw.fixed,
    );
    return Math.max(1, Math.ceil(hours / 8));
  });
  const cpm = refCpm({
    n: c.dag.n,
    edges: c.dag.edges.map(([from, to]) => [c.dag.perm.indexOf(from), c.dag.perm.indexOf(to)]),
    progress: new Array<number>(c.dag.n).fill(0),
    duration,
  });
  return { finish: cpm.finish, critical: cpm.critical };
}

t.test('each sample equals refCpm over the same draws', (t) => {
  fc.assert(
    fc.property(caseArb, fc.integer({ min: 1, max: 6 }), (c, count) => {
      const part = forecastPart(modelOf(c), { seed: c.seed, first: 0, count });
      const critical = new Array<number>(c.dag.n).fill(0);
      for (let k = 0; k < count; k++) {
        const ref = refSample(c, k);
        if (part.finishes[k] !== ref.finish) return false;
        ref.critical.forEach((on, v) => (critical[v] = (critical[v] ?? 0) + (on ? 1 : 0)));
      }
      return critical.every((times, v) => part.critical[v] === times);
    }),
    { numRuns: 300 },
  );
  t.end();
});

t.test('samples split at any points sum to the whole', (t) => {
  fc.assert(
    fc.property(
      caseArb,
      fc.array(fc.integer({ min: 1, max: 15 }), { minLength: 1, maxLength: 4 }),
      (c, sizes) => {
        const model = modelOf(c);
        const total = sizes.reduce((a, b) => a + b, 0);
        const whole = forecastPart(model, { seed: c.seed, first: 0, count: total });
        const finishes: number[] = [];
        const critical = new Array<number>(model.m).fill(0);
        let first = 0;
        for (const count of sizes) {
          const part = forecastPart(model, { seed: c.seed, first, count });
          finishes.push(...part.finishes);
          part.critical.forEach((times, v) => (critical[v] = (critical[v] ?? 0) + times));
          first += count;
        }
        return (
          finishes.every((f, k) => f === whole.finishes[k]) &&
          critical.every((times, v) => times === whole.critical[v])
        );
      },
    ),
    { numRuns: 200 },
  );
  t.end();
});

t.test(
  'the triangular draw: its ends at 0 and 1, its mode at the mode’s share, rising between',
  async (t) => {
    t.equal(triangular(0, 2, 5, 11), 2);
    t.equal(triangular(1, 2, 5, 11), 11);
    t.ok(Math.abs(triangular(3 / 9, 2, 5, 11) - 5) < 1e-12);
    t.equal(triangular(0.7, 4, 4, 4), 4, 'no width: the estimate');
    let last = -Infinity;
    for (let u = 0; u <= 1; u += 0.01) {
      const x = triangular(u, 2, 5, 11);
      t.ok(x >= last, `rises at ${u.toFixed(2)}`);
      last = x;
    }
    t.not(sampleState(1, 0), sampleState(1, 1), 'samples have streams of their own');
    t.not(sampleState(1, 0), sampleState(2, 0), 'and seeds');
  },
);

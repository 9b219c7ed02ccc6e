/**
 * The forecast with typed links, leads, milestones, constraints, work in progress and a calendar's
 * hours a day: each sample's finish and critical tasks equal the plain reference's schedule
 * (schedule-reference.ts) over the same draws; any split of the samples sums to the whole.
 */
import t from 'tap';
import fc from 'fast-check';
import { NO_BOUND } from '../../src/engine/cpm.ts';
import { forecastPart, sampleState, type ForecastModel } from '../../src/engine/forecast.ts';
import { LINK, packLink } from '../../src/engine/graph.ts';
import { flowArb, type FlowCase } from './flow-arbitraries.ts';
import { at, refSchedule, type RefFlow } from './schedule-reference.ts';

interface Piece {
  low: number;
  mode: number;
  high: number;
}

interface Case {
  /** Open tasks only, numbered in topological order (perm is 0 … n − 1). */
  flow: FlowCase;
  draws: ({ pieces: Piece[]; fixed: number } | null)[];
  hoursPerDay: number;
  seed: number;
}

const pieceArb = fc.tuple(fc.nat(80), fc.nat(80), fc.nat(80)).map(([a, b, c]) => {
  const [low = 0, mode = 0, high = 0] = [a, b, c].sort((x, y) => x - y);
  return { low, mode, high };
});

/** A flow's open tasks, renumbered by their place in its topological order. */
function openPart(flow: FlowCase): FlowCase {
  const kept = flow.perm.filter((v) => flow.progress[v] !== 2);
  const number = new Map(kept.map((v, k) => [v, k]));
  const pick = <T>(a: T[]) => kept.map((v) => at(a, v));
  return {
    ...flow,
    n: kept.length,
    perm: kept.map((_, k) => k),
    links: flow.links
      .filter((l) => number.has(l.from) && number.has(l.to))
      .map((l) => ({ ...l, from: number.get(l.from) ?? 0, to: number.get(l.to) ?? 0 })),
    progress: pick(flow.progress),
    duration: pick(flow.duration).map((d) => Math.max(1, d)),
    milestone: pick(flow.milestone),
    startNoEarlier: pick(flow.startNoEarlier),
    finishNoLater: pick(flow.finishNoLater),
  };
}

const caseArb: fc.Arbitrary<Case> = flowArb(20, { minNodes: 2 })
  .map(openPart)
  .chain((flow) =>
    fc.record({
      flow: fc.constant(flow),
      // Milestones draw nothing.
      draws: fc.tuple(
        ...flow.milestone.map((m) =>
          m
            ? fc.constant(null)
            : fc.option(
                fc.record({
                  pieces: fc.array(pieceArb, { minLength: 1, maxLength: 3 }),
                  fixed: fc.nat(20),
                }),
              ),
        ),
      ),
      hoursPerDay: fc.constantFrom(8, 6, 7.5, 10, 24),
      seed: fc.nat(0xffffffff),
    }),
  );

function modelOf({ flow, draws, hoursPerDay }: Case): ForecastModel {
  const m = flow.n;
  const rows = Array.from({ length: m }, () => [] as RefFlow['links']);
  for (const l of flow.links) at(rows, l.to).push(l);
  const predStart = new Uint32Array(m + 1);
  rows.forEach((row, v) => (predStart[v + 1] = (predStart[v] ?? 0) + row.length));
  const all = rows.flat();
  const ranged: number[] = [];
  const fixedHours: number[] = [];
  const pieceStart = [0];
  const pieces: Piece[] = [];
  draws.forEach((draw, v) => {
    if (!draw) return;
    ranged.push(v);
    fixedHours.push(draw.fixed);
    pieces.push(...draw.pieces);
    pieceStart.push(pieces.length);
  });
  return {
    m,
    predStart,
    pred: Uint32Array.from(all, (l) => l.from),
    predLink: Int32Array.from(all, (l) => packLink(LINK[l.type], l.lag)),
    days: Uint32Array.from(flow.duration, (d, v) => (flow.milestone[v] ? 0 : d)),
    started: Uint8Array.from(flow.progress, (p) => (flow.inProgressAtZero && p === 1 ? 1 : 0)),
    startNoEarlier: Int32Array.from(flow.startNoEarlier, (c) => c ?? 0),
    finishNoLater: Int32Array.from(flow.finishNoLater, (c) => c ?? NO_BOUND),
    hoursPerDay,
    ranged: Uint32Array.from(ranged),
    fixedHours: Float64Array.from(fixedHours),
    pieceStart: Uint32Array.from(pieceStart),
    low: Float64Array.from(pieces, (p) => p.low),
    mode: Float64Array.from(pieces, (p) => p.mode),
    high: Float64Array.from(pieces, (p) => p.high),
  };
}

function mulberry32(a: number): () => number {
  return () => {
    a |= 0;
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function refTriangular(u: number, { low, mode, high }: Piece): number {
  if (high === low) return mode;
  const atMode = (mode - low) / (high - low);
  return u < atMode
    ? low + Math.sqrt(u * (high - low) * (mode - low))
    : high - Math.sqrt((1 - u) * (high - low) * (high - mode));
}

/** Sample k: the reference's schedule over its draws (in progress tasks open when not at day 0). */
function refSample(c: Case, k: number) {
  const next = mulberry32(sampleState(c.seed, k));
  const duration = c.flow.duration.map((d, v) => {
    const draw = c.draws[v];
    if (!draw) return d;
    const hours = draw.pieces.reduce(
      (sum, piece) => sum + refTriangular(next(), piece),
      draw.fixed,
    );
    return Math.max(1, Math.ceil(hours / c.hoursPerDay));
  });
  const progress = c.flow.progress.map((p) => (c.flow.inProgressAtZero ? p : 0));
  return refSchedule({ ...c.flow, duration, progress });
}

t.test('each sample equals the reference schedule over the same draws', (t) => {
  fc.assert(
    fc.property(caseArb, fc.integer({ min: 1, max: 20 }), (c, count) => {
      const part = forecastPart(modelOf(c), { seed: c.seed, first: 0, count });
      const critical = new Array<number>(c.flow.n).fill(0);
      for (let k = 0; k < count; k++) {
        const ref = refSample(c, k);
        if (part.finishes[k] !== (ref.projectedFinish ?? -1)) return false;
        ref.critical.forEach((on, v) => (critical[v] = (critical[v] ?? 0) + (on ? 1 : 0)));
      }
      return critical.every((times, v) => part.critical[v] === times);
    }),
    { numRuns: 400 },
  );
  t.end();
});

t.test('samples split at any points sum to the whole', (t) => {
  fc.assert(
    fc.property(
      caseArb,
      fc.array(fc.integer({ min: 1, max: 20 }), { minLength: 1, maxLength: 4 }),
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

t.test('a lone milestone finishes on day 0; no open task, no finish', (t) => {
  const empty = new Uint32Array(0);
  const base = {
    predStart: Uint32Array.of(0, 0),
    pred: empty,
    ranged: empty,
    fixedHours: new Float64Array(0),
    pieceStart: Uint32Array.of(0),
    low: new Float64Array(0),
    mode: new Float64Array(0),
    high: new Float64Array(0),
  };
  // E = 0 (S = F = 0): projectedFinish is day max(E − 1, 0) = 0, and it is critical.
  const one = forecastPart(
    { ...base, m: 1, days: Uint32Array.of(0) },
    { seed: 1, first: 0, count: 3 },
  );
  t.strictSame([...one.finishes], [0, 0, 0]);
  t.strictSame([...one.critical], [3]);
  const none = forecastPart(
    { ...base, m: 0, predStart: Uint32Array.of(0), days: empty, started: new Uint8Array(0) },
    { seed: 1, first: 0, count: 2 },
  );
  t.strictSame([...none.finishes], [-1, -1]);
  t.end();
});

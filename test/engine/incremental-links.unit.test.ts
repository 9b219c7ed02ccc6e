/**
 * Incremental derivation with typed links equals a whole one: random change sequences (progress,
 * durations, milestones, start and finish constraints, several at once, tasks appended with
 * links of every type) on random flows with lags and leads, compared after every step with the
 * full derivation production runs (recompute, then derivedFrom) and with the plain reference;
 * and on large chains and fans, where a change must cost what it moves.
 */
import t from 'tap';
import fc from 'fast-check';
import { NO_BOUND } from '../../src/engine/cpm.ts';
import { LINK } from '../../src/engine/graph.ts';
import {
  derivedFrom,
  deriveNext,
  floatsOf,
  slackOf,
  type Derived,
} from '../../src/engine/incremental.ts';
import { recompute, type RecomputeInput } from '../../src/engine/recompute.ts';
import { PROGRESS } from '../../src/engine/status.ts';
import { flowArb, flowInput } from './flow-arbitraries.ts';
import { rng } from './random-dag.ts';
import { at, refSchedule, type LinkName, type RefFlow } from './schedule-reference.ts';

const FIELDS = [
  'status',
  'es',
  'ef',
  'critical',
  'start',
  'end',
  'tail',
  'bound',
  'milestone',
  'startNoEarlier',
  'finishNoLater',
] as const;

/** The first difference between two derivations (and their floats), or null. */
function difference(a: Derived, b: Derived): string | null {
  if (a.n !== b.n) return `n ${a.n} ≠ ${b.n}`;
  if (a.projectEnd !== b.projectEnd) return `E ${a.projectEnd} ≠ ${b.projectEnd}`;
  if (a.finish !== b.finish) return `finish ${a.finish} ≠ ${b.finish}`;
  const fa = floatsOf(a);
  const fb = floatsOf(b);
  const arrays = (d: Derived, f: ReturnType<typeof floatsOf>) => ({
    ...Object.fromEntries(FIELDS.map((k) => [k, d[k] ?? new Int32Array(d.n)])),
    ...f,
    slackOf: slackOf(d),
  });
  const x = arrays(a, fa);
  const y = arrays(b, fb);
  for (const key of Object.keys(x) as (keyof typeof x)[])
    for (let v = 0; v < a.n; v++)
      if ((x[key] as ArrayLike<number>)[v] !== (y[key] as ArrayLike<number>)[v])
        return `${key}[${v}] ${(x[key] as ArrayLike<number>)[v]} ≠ ${(y[key] as ArrayLike<number>)[v]}`;
  return null;
}

/** From scratch: a whole recompute, then the state deriveNext starts from. */
function full(input: RecomputeInput): Derived {
  return derivedFrom(input, recompute(input));
}

/** The first difference between a derivation and the reference of the same flow, or null. */
function referenceDifference(d: Derived, flow: RefFlow): string | null {
  const ref = refSchedule(flow);
  const floats = floatsOf(d);
  const or = (a: (number | null)[]) => a.map((x) => x ?? -1);
  const pairs: [string, ArrayLike<number>, number[]][] = [
    ['es', d.es, or(ref.earliestStart)],
    ['ef', d.ef, or(ref.earliestFinish)],
    ['ls', floats.ls, or(ref.latestStart)],
    ['lf', floats.lf, or(ref.latestFinish)],
    ['slack', floats.slack, or(ref.totalFloat)],
    ['freeFloat', floats.freeFloat, or(ref.freeFloat)],
    ['critical', d.critical, ref.critical.map(Number)],
  ];
  if (d.finish !== (ref.projectedFinish ?? -1))
    return `finish ${d.finish} ≠ ${ref.projectedFinish}`;
  for (const [name, got, want] of pairs)
    for (let v = 0; v < d.n; v++)
      if (got[v] !== want[v]) return `${name}[${v}] ${got[v]} ≠ reference ${want[v]}`;
  return null;
}

const TYPES: LinkName[] = ['FS', 'SS', 'FF', 'SF'];

const changeArb = fc.record({
  v: fc.nat(),
  progress: fc.option(fc.constantFrom(PROGRESS.open, PROGRESS.started, PROGRESS.done)),
  duration: fc.option(fc.integer({ min: 0, max: 6 })),
  milestone: fc.option(fc.boolean(), { freq: 3 }),
  startNoEarlier: fc.option(fc.option(fc.integer({ min: -2, max: 12 })), { freq: 3 }),
  finishNoLater: fc.option(fc.option(fc.integer({ min: -2, max: 20 })), { freq: 3 }),
});

const appendArb = fc.record({
  deps: fc.array(
    fc.record({
      on: fc.nat(),
      type: fc.constantFrom(...TYPES),
      lag: fc.integer({ min: -3, max: 3 }),
    }),
    { maxLength: 3 },
  ),
  progress: fc.constantFrom(PROGRESS.open, PROGRESS.started, PROGRESS.done),
  duration: fc.integer({ min: 0, max: 5 }),
  milestone: fc.boolean(),
  startNoEarlier: fc.option(fc.integer({ min: 0, max: 10 }), { freq: 3 }),
  finishNoLater: fc.option(fc.integer({ min: 0, max: 15 }), { freq: 3 }),
});

const stepArb = fc.record({
  changes: fc.array(changeArb, { minLength: 0, maxLength: 3 }),
  added: fc.array(appendArb, { maxLength: 2 }),
  // Whether facts are passed as whole arrays or left to the previous version's.
  passFacts: fc.boolean(),
  readRows: fc.boolean(),
});

t.test(
  'random flows and change sequences: every step equals a full derivation and the reference',
  async (t) => {
    const seen = { appended: 0, factsKept: 0, negativeFloat: 0, moved: 0 };
    fc.assert(
      fc.property(
        flowArb(30),
        fc.array(stepArb, { minLength: 1, maxLength: 12 }),
        (start, steps) => {
          const flow: RefFlow = structuredClone(start);
          let current = full(flowInput(flow));
          for (const step of steps) {
            const old = flow.n;
            const changed = new Set<number>();
            for (const c of step.changes) {
              const v = c.v % old;
              if (c.progress !== null) flow.progress[v] = c.progress;
              if (c.duration !== null) flow.duration[v] = c.duration;
              if (c.milestone !== null) flow.milestone[v] = c.milestone;
              if (c.startNoEarlier !== null) flow.startNoEarlier[v] = c.startNoEarlier;
              if (c.finishNoLater !== null) flow.finishNoLater[v] = c.finishNoLater;
              changed.add(v);
            }
            const newLinks: RefFlow['links'] = [];
            step.added.forEach((a, k) => {
              const v = old + k;
              const seenDeps = new Set<number>();
              for (const dep of a.deps) {
                const from = dep.on % v;
                if (seenDeps.has(from)) continue;
                seenDeps.add(from);
                newLinks.push({ from, to: v, type: dep.type, lag: dep.lag });
              }
              flow.progress.push(a.progress);
              flow.duration.push(a.duration);
              flow.milestone.push(a.milestone);
              flow.startNoEarlier.push(a.startNoEarlier);
              flow.finishNoLater.push(a.finishNoLater);
            });
            flow.n += step.added.length;
            flow.links.push(...newLinks);
            const input = flowInput(flow);
            // Facts left out are the previous version's (appended tasks having none): only a step
            // that changes no fact may leave them out.
            const factsKept =
              step.changes.every(
                (c) =>
                  c.milestone === null && c.startNoEarlier === null && c.finishNoLater === null,
              ) &&
              step.added.every(
                (a) => !a.milestone && a.startNoEarlier === null && a.finishNoLater === null,
              );
            const passFacts = step.passFacts || !factsKept;
            if (!passFacts) seen.factsKept++;
            if (step.added.length > 0) seen.appended++;
            const before = structuredClone({
              es: current.es,
              tail: current.tail,
              bound: current.bound,
              start: current.start,
            });
            const next = deriveNext(
              current,
              [...changed],
              input.progress,
              input.duration,
              {
                added: step.added.length,
                from: Uint32Array.from(newLinks, (l) => l.from),
                to: Uint32Array.from(newLinks, (l) => l.to),
                linkType: Uint8Array.from(newLinks, (l) => LINK[l.type]),
                lag: Int32Array.from(newLinks, (l) => l.lag),
              },
              passFacts
                ? {
                    milestone: input.milestone,
                    startNoEarlier: input.startNoEarlier,
                    finishNoLater: input.finishNoLater,
                  }
                : {},
            );
            for (const [key, copy] of Object.entries(before))
              if (!copy.every((x, i) => x === current[key as keyof typeof before][i]))
                throw new Error(`deriveNext changed the previous version's ${key}`);
            const diff = difference(next, full(input)) ?? referenceDifference(next, flow);
            if (diff) throw new Error(diff);
            if (next.projectEnd !== current.projectEnd) seen.moved++;
            if (floatsOf(next).slack.some((s, v) => s < 0 && flow.progress[v] !== 2))
              seen.negativeFloat++;
            if (step.readRows) void next.g;
            current = next;
          }
        },
      ),
      { numRuns: 500 },
    );
    for (const [what, count] of Object.entries(seen)) t.ok(count > 20, `${what}: ${count}`);
  },
);

/** A flow of `n` tasks with links `links`, all open, one day each, and facts as given. */
function bigFlow(n: number, links: RefFlow['links'], inProgressAtZero = true): RefFlow {
  return {
    n,
    links,
    progress: new Array<number>(n).fill(0),
    duration: new Array<number>(n).fill(1),
    milestone: new Array<boolean>(n).fill(false),
    startNoEarlier: new Array<number | null>(n).fill(null),
    finishNoLater: new Array<number | null>(n).fill(null),
    inProgressAtZero,
  };
}

/** Random single-task changes on a large flow, each checked against a whole derivation. */
function randomWalk(
  name: string,
  flow: RefFlow,
  steps: number,
  seed: number,
  pick: (r: () => number) => number,
): string {
  const random = rng(seed);
  let current = full(flowInput(flow));
  for (let s = 0; s < steps; s++) {
    const v = pick(random);
    const r = random();
    if (r < 0.4) flow.progress[v] = random() < 0.6 ? PROGRESS.done : PROGRESS.open;
    else if (r < 0.55) flow.progress[v] = PROGRESS.started;
    else if (r < 0.7) flow.duration[v] = 1 + Math.floor(random() * 5);
    else if (r < 0.8) flow.milestone[v] = !flow.milestone[v];
    else if (r < 0.9)
      flow.startNoEarlier[v] = random() < 0.3 ? null : Math.floor(random() * flow.n);
    else flow.finishNoLater[v] = random() < 0.3 ? null : Math.floor(random() * flow.n);
    const input = flowInput(flow);
    current = deriveNext(current, [v], input.progress, input.duration, undefined, {
      milestone: input.milestone,
      startNoEarlier: input.startNoEarlier,
      finishNoLater: input.finishNoLater,
    });
    const diff = difference(current, full(input));
    if (diff) return `${name}, step ${s}: ${diff}`;
  }
  return '';
}

t.test('a 20,000-deep chain of mixed links with leads and lags', async (t) => {
  const n = 20_000;
  const random = rng(3);
  const links = Array.from({ length: n - 1 }, (_, i) => ({
    from: i,
    to: i + 1,
    type: at(TYPES, Math.floor(random() * 4)),
    lag: Math.floor(random() * 5) - 2,
  }));
  const flow = bigFlow(n, links);
  const message = randomWalk('chain', flow, 30, 4, (r) => {
    const x = r();
    return x < 0.3
      ? Math.floor(r() * 10)
      : x < 0.6
        ? n - 1 - Math.floor(r() * 10)
        : Math.floor(r() * n);
  });
  t.equal(message, '', '30 steps equal a whole derivation');
});

t.test('a wide fan-out and fan-in of SS and FF links', async (t) => {
  const width = 10_000;
  const n = width + 2;
  const links: RefFlow['links'] = [];
  for (let i = 1; i <= width; i++) {
    links.push({ from: 0, to: i, type: 'SS', lag: 1 });
    links.push({ from: i, to: n - 1, type: 'FF', lag: -1 });
  }
  const message = randomWalk('fan', bigFlow(n, links), 40, 5, (r) => {
    const x = r();
    return x < 0.2 ? 0 : x < 0.4 ? n - 1 : 1 + Math.floor(r() * width);
  });
  t.equal(message, '', '40 steps equal a whole derivation');
});

t.test(
  'a change far from the end moves only its cone: the arrays it leaves are shared',
  async (t) => {
    // Two chains side by side; a change on the short one moves nothing on the long one, and with
    // E unmoved the critical flags are the previous version's but for the touched tasks.
    const long = 1000;
    const links: RefFlow['links'] = [];
    for (let i = 0; i + 1 < long; i++) links.push({ from: i, to: i + 1, type: 'FS', lag: 0 });
    links.push({ from: long, to: long + 1, type: 'SS', lag: 2 });
    const flow = bigFlow(long + 2, links);
    const before = full(flowInput(flow));
    flow.finishNoLater[long + 1] = 5;
    const input = flowInput(flow);
    const next = deriveNext(before, [long + 1], input.progress, input.duration, undefined, {
      finishNoLater: input.finishNoLater,
    });
    t.equal(next.start, before.start, 'no date moved: the same start array');
    t.equal(next.tail, before.tail, 'no tail moved');
    t.not(next.bound, before.bound, 'bounds moved');
    t.equal(
      next.bound[long],
      5 - 1 - 2 + 1,
      'SS+2 back from LF 5 of a 1-day task: LF(t) ≤ 5 − 1 − 2 + 1',
    );
    t.equal(next.projectEnd, long);
    t.equal(difference(next, full(input)), null);
    t.equal(next.finishNoLater, input.finishNoLater, 'the facts passed are the next version’s');
    const kept = deriveNext(next, [], input.progress, input.duration);
    t.equal(kept.finishNoLater, next.finishNoLater, 'facts not passed: the previous version’s');
    t.equal(kept.bound[long], 3);
    t.equal(NO_BOUND, kept.bound[0], 'the long chain bounds nothing');
  },
);

/**
 * Incremental derivation equals a full one: random command sequences (start, complete,
 * reopen, estimate changes, several at once) on random DAGs, a 50,000-deep chain and wide
 * fan-outs, compared after every step with the full derivation production runs (recompute,
 * then derivedFrom, as a session derives a flow's first version) and, on the small graphs,
 * with the naive reference of reference.ts.
 */
import t, { type Test } from 'tap';
import fc from 'fast-check';
import { blockingCounts } from '../../src/engine/blocking.ts';
import {
  countsAfter,
  derivedFrom,
  deriveNext,
  slackOf,
  type Derived,
} from '../../src/engine/incremental.ts';
import { buildGraph, edgeLists } from '../../src/engine/graph.ts';
import { recompute } from '../../src/engine/recompute.ts';
import { TASK_STATUSES, type TaskStatus } from '../../src/contract/vocabulary.ts';
import { PROGRESS } from '../../src/engine/status.ts';
import { dagArb, toInput } from './arbitraries.ts';
import { rng } from './random-dag.ts';
import { refCpm, refStatus } from './reference.ts';

const FIELDS = ['status', 'es', 'ef', 'slack', 'critical', 'tail'] as const;

/** A derivation's per-task fields, slack read off its tails as a snapshot reads it. */
const fieldsOf = (d: Derived) => ({
  n: d.n,
  finish: d.finish,
  status: d.status,
  es: d.es,
  ef: d.ef,
  critical: d.critical,
  tail: d.tail,
  slack: slackOf(d),
});

/** The first field and task where two derivations differ, or null. */
function difference(derivedA: Derived, derivedB: Derived): string | null {
  const a = fieldsOf(derivedA);
  const b = fieldsOf(derivedB);
  if (a.finish !== b.finish) return `finish ${a.finish} ≠ ${b.finish}`;
  for (const field of FIELDS) {
    for (let v = 0; v < a.n; v++)
      if (a[field][v] !== b[field][v]) return `${field}[${v}] ${a[field][v]} ≠ ${b[field][v]}`;
  }
  return null;
}

/** From scratch, the way production does it: a whole recompute, then the state deriveNext starts from. */
function fullDerivation(
  n: number,
  from: Uint32Array,
  to: Uint32Array,
  progress: Uint8Array,
  duration: Uint32Array,
): Derived {
  const input = { n, from, to, progress, duration, withCounts: false };
  const output = recompute(input);
  const derived = derivedFrom(input, output);
  // Slack read off the tails is the recompute's own.
  const slack = slackOf(derived);
  if (!output.slack.every((s, v) => s === slack[v])) throw new Error('slackOf ≠ recompute');
  return derived;
}

/** The first field and task where a derivation differs from the naive reference, or null. */
function referenceDifference(engine: Derived, from: Uint32Array, to: Uint32Array): string | null {
  const derived = fieldsOf(engine);
  const { n } = derived;
  const { progress } = engine;
  // The engine counts a duration below 1 as 1; the reference takes durations as given.
  const g = {
    n,
    edges: Array.from(from, (f, e): [number, number] => [f, to[e]!]),
    progress: Array.from(progress),
    duration: Array.from(engine.duration, (d) => Math.max(1, d)),
  };
  const cpm = refCpm(g);
  if (derived.finish !== cpm.finish) return `finish ${derived.finish} ≠ reference ${cpm.finish}`;
  const expected: Record<(typeof FIELDS)[number], number[]> = {
    status: refStatus(g).map((name) => TASK_STATUSES.indexOf(name as TaskStatus)),
    es: cpm.es,
    ef: cpm.ef,
    slack: cpm.slack,
    critical: cpm.critical.map(Number),
    tail: cpm.lf.map((lf, v) => (progress[v] === PROGRESS.done ? -1 : cpm.finish - lf)),
  };
  for (const field of FIELDS) {
    for (let v = 0; v < n; v++)
      if (derived[field][v] !== expected[field][v])
        return `${field}[${v}] ${derived[field][v]} ≠ reference ${expected[field][v]}`;
  }
  return null;
}

interface Change {
  v: number;
  progress: number | null;
  duration: number | null;
}

/** Applies the changes to copies of the arrays and derives both ways. */
function step(
  previous: Derived,
  from: Uint32Array,
  to: Uint32Array,
  changes: readonly Change[],
): { next: Derived; full: Derived } {
  const progress = previous.progress.slice();
  const duration = previous.duration.slice();
  const changed = new Set<number>();
  for (const { v, progress: p, duration: d } of changes) {
    if (p !== null) progress[v] = p;
    if (d !== null) duration[v] = d;
    changed.add(v);
  }
  const kept = ['progress', 'duration', 'status', 'es', 'ef', 'tail', 'critical'] as const;
  const before = kept.map((name) => [name, previous[name].slice()] as const);
  const next = deriveNext(previous, [...changed], progress, duration);
  // The previous version is still read by others (and shares the arrays a change left alone):
  // it must be left as it was.
  if (before.some(([name, copy]) => !copy.every((x, i) => x === previous[name][i]))) {
    throw new Error('deriveNext changed the previous version');
  }
  return { next, full: fullDerivation(previous.n, from, to, progress, duration) };
}

const changeArb = (n: number) =>
  fc.record({
    v: fc.nat(n - 1),
    progress: fc.option(fc.constantFrom(PROGRESS.open, PROGRESS.started, PROGRESS.done)),
    duration: fc.option(fc.integer({ min: 0, max: 6 })),
  });

t.test('random DAGs: every step equals a full derivation and the reference', async (t) => {
  fc.assert(
    fc.property(
      dagArb(60).chain((dag) =>
        fc.tuple(
          fc.constant(dag),
          fc.array(fc.array(changeArb(dag.n), { minLength: 1, maxLength: 3 }), {
            minLength: 1,
            maxLength: 25,
          }),
        ),
      ),
      ([dag, steps]) => {
        const { n, from, to, progress, duration } = toInput(dag);
        let current = fullDerivation(n, from, to, progress, duration);
        for (const changes of steps) {
          const { next, full } = step(current, from, to, changes);
          const diff = difference(next, full) ?? referenceDifference(next, from, to);
          if (diff) throw new Error(diff);
          current = next;
        }
      },
    ),
    { numRuns: 400 },
  );
  t.pass('400 random sequences');
});

/** Random single-task commands on a big graph, checked after each. */
function randomWalk(
  t: Test,
  name: string,
  n: number,
  from: Uint32Array,
  to: Uint32Array,
  steps: number,
  seed: number,
  pick: (random: () => number) => number,
): void {
  const random = rng(seed);
  let current = fullDerivation(n, from, to, new Uint8Array(n), new Uint32Array(n).fill(1));
  for (let s = 0; s < steps; s++) {
    const v = pick(random);
    const r = random();
    const change: Change =
      r < 0.6
        ? { v, progress: random() < 0.7 ? PROGRESS.done : PROGRESS.open, duration: null }
        : r < 0.8
          ? { v, progress: PROGRESS.started, duration: null }
          : { v, progress: null, duration: 1 + Math.floor(random() * 5) };
    const { next, full } = step(current, from, to, [change]);
    const diff = difference(next, full);
    if (diff) {
      t.fail(`${name}, step ${s}: ${diff}`);
      return;
    }
    current = next;
  }
  t.pass(`${name}: ${steps} steps equal a full derivation`);
}

t.test('a 50,000-deep chain', async (t) => {
  const n = 50_000;
  const from = Uint32Array.from({ length: n - 1 }, (_, i) => i);
  const to = Uint32Array.from({ length: n - 1 }, (_, i) => i + 1);
  // Near the head (moves everything after it), near the tail, and anywhere.
  randomWalk(t, 'chain', n, from, to, 30, 1, (random) => {
    const r = random();
    return r < 0.3
      ? Math.floor(random() * 10)
      : r < 0.6
        ? n - 1 - Math.floor(random() * 10)
        : Math.floor(random() * n);
  });
});

t.test('wide fan-out and fan-in', async (t) => {
  // One root, 20,000 tasks after it, one sink after them all.
  const width = 20_000;
  const n = width + 2;
  const from = new Uint32Array(2 * width);
  const to = new Uint32Array(2 * width);
  for (let i = 0; i < width; i++) {
    from[i] = 0;
    to[i] = i + 1;
    from[width + i] = i + 1;
    to[width + i] = n - 1;
  }
  randomWalk(t, 'fan', n, from, to, 40, 2, (random) => {
    const r = random();
    return r < 0.2 ? 0 : r < 0.4 ? n - 1 : 1 + Math.floor(random() * width);
  });
});

t.test('blocking counts after completions and reopenings equal a full count', async (t) => {
  fc.assert(
    fc.property(
      dagArb(50).chain((dag) =>
        fc.tuple(
          fc.constant(dag),
          fc.array(
            fc.array(fc.tuple(fc.nat(dag.n - 1), fc.boolean()), { minLength: 1, maxLength: 3 }),
            { minLength: 1, maxLength: 15 },
          ),
        ),
      ),
      ([dag, steps]) => {
        const { n, from, to, progress, duration } = toInput(dag);
        const derived = fullDerivation(n, from, to, progress, duration);
        let counts = blockingCounts(derived.g, derived.order, progress);
        for (const flips of steps) {
          const changed: { v: number; done: boolean }[] = [];
          for (const [v, done] of flips) {
            // Only a real change of done-ness moves counts; a task listed twice keeps its last.
            if ((progress[v] === PROGRESS.done) === done || changed.some((c) => c.v === v))
              continue;
            progress[v] = done ? PROGRESS.done : PROGRESS.open;
            changed.push({ v, done });
          }
          counts = countsAfter(derived.g, counts, changed);
          const full = blockingCounts(derived.g, derived.order, progress);
          const v = full.findIndex((c, i) => c !== counts[i]);
          if (v >= 0) throw new Error(`counts[${v}] ${counts[v]} ≠ ${full[v]}`);
        }
      },
    ),
    { numRuns: 300 },
  );
  t.pass('300 random sequences');
});

t.test(
  'tasks appended after earlier ones, beside changes to old tasks, equal a full derivation and the reference',
  async (t) => {
    fc.assert(
      fc.property(
        dagArb(40).chain((dag) =>
          fc.tuple(
            fc.constant(dag),
            // Per step: new tasks, each with dependencies on earlier tasks (old or new), progress
            // and duration; changes to old tasks (indexes taken modulo the tasks there are); and
            // whether the rows are read before the next step (else the next derivation reads them).
            fc.array(
              fc.record({
                added: fc.array(
                  fc.record({
                    deps: fc.array(fc.nat(), { maxLength: 4 }),
                    progress: fc.constantFrom(PROGRESS.open, PROGRESS.started, PROGRESS.done),
                    duration: fc.integer({ min: 0, max: 6 }),
                  }),
                  { minLength: 1, maxLength: 3 },
                ),
                changes: fc.array(changeArb(1_000), { maxLength: 3 }),
                readRows: fc.boolean(),
              }),
              { minLength: 1, maxLength: 10 },
            ),
          ),
        ),
        ([dag, steps]) => {
          let { n, from, to, progress, duration } = toInput(dag);
          let current = fullDerivation(n, from, to, progress, duration);
          for (const { added, changes, readRows } of steps) {
            const newFrom: number[] = [];
            const newTo: number[] = [];
            added.forEach((task, k) => {
              const v = n + k;
              for (const d of new Set(task.deps.map((d) => d % v)))
                (newFrom.push(d), newTo.push(v));
            });
            const old = n;
            n += added.length;
            progress = Uint8Array.from([...progress, ...added.map((a) => a.progress)]);
            duration = Uint32Array.from([...duration, ...added.map((a) => a.duration)]);
            const changed = new Set<number>();
            for (const change of changes) {
              const v = change.v % old;
              if (change.progress !== null) progress[v] = change.progress;
              if (change.duration !== null) duration[v] = change.duration;
              changed.add(v);
            }
            from = Uint32Array.from([...from, ...newFrom]);
            to = Uint32Array.from([...to, ...newTo]);
            const kept = ['status', 'es', 'ef', 'tail', 'critical'] as const;
            const before = kept.map((name) => [name, current[name].slice()] as const);
            const next = deriveNext(current, [...changed], progress, duration, {
              added: added.length,
              from: Uint32Array.from(newFrom),
              to: Uint32Array.from(newTo),
            });
            if (before.some(([name, copy]) => !copy.every((x, i) => x === current[name][i])))
              throw new Error('deriveNext changed the previous version');
            const diff =
              difference(next, fullDerivation(n, from, to, progress, duration)) ??
              referenceDifference(next, from, to);
            if (diff) throw new Error(diff);
            current = next;
            if (!readRows) continue;
            // The rows, built when read, hold the same successors and predecessors as rows built anew.
            const built = buildGraph(n, from, to);
            const rows = (start: Uint32Array, list: Uint32Array, v: number) =>
              [...list.subarray(start[v], start[v + 1])].sort((a, b) => a - b).join();
            for (let v = 0; v < n; v++)
              if (
                rows(next.g.succStart, next.g.succ, v) !== rows(built.succStart, built.succ, v) ||
                rows(next.g.predStart, next.g.pred, v) !== rows(built.predStart, built.pred, v)
              )
                throw new Error(`rows of task ${v} differ`);
            // Its edge lists (a derived version's input for a whole recompute) build it again.
            const lists = edgeLists(next.g);
            const again = buildGraph(n, lists.from, lists.to);
            for (let v = 0; v < n; v++)
              if (
                rows(again.succStart, again.succ, v) !== rows(built.succStart, built.succ, v) ||
                rows(again.predStart, again.pred, v) !== rows(built.predStart, built.pred, v)
              )
                throw new Error(`edge lists of task ${v} differ`);
            // The order still puts every task after what it waits on, and pos is its inverse.
            for (let e = 0; e < from.length; e++)
              if ((next.pos[from[e] ?? 0] ?? 0) >= (next.pos[to[e] ?? 0] ?? 0))
                throw new Error(`edge ${from[e]} -> ${to[e]} runs backwards in the order`);
            for (let p = 0; p < n; p++)
              if (next.pos[next.order[p] ?? 0] !== p)
                throw new Error(`pos is not order's inverse at ${p}`);
          }
        },
      ),
      { numRuns: 300 },
    );
    t.pass('300 random sequences');
  },
);

t.test(
  'appended tasks: the rows are built only when read, and a backward edge is refused',
  async (t) => {
    const from = Uint32Array.of(0, 1);
    const to = Uint32Array.of(1, 2);
    const current = fullDerivation(3, from, to, new Uint8Array(3), Uint32Array.of(1, 2, 3));
    const appended = { added: 1, from: Uint32Array.of(1), to: Uint32Array.of(3) };
    const next = deriveNext(current, [], new Uint8Array(4), Uint32Array.of(1, 2, 3, 4), appended);
    t.ok(Object.getOwnPropertyDescriptor(next, 'g')?.get, 'unread, the graph is not built');
    t.equal(next.es[3], 3, 'the new task starts after the one it waits on (days 1 and 2)');
    t.same([...next.g.succ.subarray(next.g.succStart[1], next.g.succStart[2])].sort(), [2, 3]);
    t.equal(Object.getOwnPropertyDescriptor(next, 'g')?.get, undefined, 'once read, a plain field');
    t.same([...next.order], [0, 1, 2, 3]);
    t.throws(
      () =>
        deriveNext(current, [], new Uint8Array(4), Uint32Array.of(1, 2, 3, 4), {
          added: 1,
          from: Uint32Array.of(3),
          to: Uint32Array.of(2),
        }),
      RangeError,
    );
  },
);

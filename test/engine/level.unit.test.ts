import t from 'tap';
import fc from 'fast-check';
import assert from 'node:assert/strict';
import { buildGraph, topoOrder } from '../../src/engine/graph.ts';
import { cpm } from '../../src/engine/cpm.ts';
import { level } from '../../src/engine/level.ts';
import { dagArb, toInput, type DagCase } from './arbitraries.ts';
import { refCpm } from './reference.ts';

/** A flow of up to 8 tasks and 1–3 people: each task someone's (or nobody's), each person's hours. */
interface LevelCase extends DagCase {
  people: number;
  /** −1: unassigned. */
  person: number[];
  /** Levelled working days; 0 where the person has no hours. */
  days: number[];
}

/** `a[i]`, which the cases below always hold (a missing one reads NaN and fails the comparison). */
const at = (a: ArrayLike<number>, i: number): number => a[i] ?? NaN;

const caseArb: fc.Arbitrary<LevelCase> = dagArb(8).chain((dag) =>
  fc.integer({ min: 1, max: 3 }).chain((people) =>
    fc
      .record({
        person: fc.array(fc.integer({ min: -1, max: people - 1 }), {
          minLength: dag.n,
          maxLength: dag.n,
        }),
        // A person with no hours (hoursPerDay 0) one time in four.
        idle: fc.array(fc.integer({ min: 0, max: 3 }), { minLength: people, maxLength: people }),
        stretch: fc.array(fc.integer({ min: 1, max: 3 }), { minLength: dag.n, maxLength: dag.n }),
      })
      .map(({ person, idle, stretch }) => ({
        ...dag,
        people,
        person,
        days: person.map((who, v) =>
          who < 0 ? at(dag.duration, v) : idle[who] === 0 ? 0 : at(stretch, v),
        ),
      })),
  ),
);

/**
 * The serial rule as the contract words it, day by day: a set of busy days per person, each
 * start tried one day at a time. Critical: finishing on the last day, or right before a
 * successor (a dependent, or the person's next task) that is critical.
 */
function refLevel(c: LevelCase) {
  const cp = refCpm(c);
  const tasks = [...Array(c.n).keys()];
  const open = (v: number) => c.progress[v] !== 2;
  const preds = (v: number) => c.edges.filter(([, to]) => to === v).map(([from]) => from);
  const order = tasks
    .filter(open)
    .sort((a, b) => at(cp.es, a) - at(cp.es, b) || at(cp.slack, a) - at(cp.slack, b) || a - b);
  const start = tasks.map(() => -1);
  const finish = tasks.map(() => -1);
  const unscheduled = tasks.map(() => false);
  const busy = Array.from({ length: c.people }, () => new Set<number>());
  for (const v of order) {
    const before = preds(v).filter(open);
    const days = at(c.days, v);
    const mine = busy[at(c.person, v)];
    if (days === 0 || before.some((p) => unscheduled[p])) {
      unscheduled[v] = true;
      continue;
    }
    let day = Math.max(0, ...before.map((p) => at(finish, p) + 1));
    const span = (from: number) => [...Array(days).keys()].map((k) => from + k);
    while (mine && span(day).some((d) => mine.has(d))) day++;
    for (const d of mine ? span(day) : []) mine?.add(d);
    start[v] = day;
    finish[v] = day + days - 1;
  }
  const last = Math.max(-1, ...finish);
  const placed = (v: number) => at(start, v) >= 0;
  const samePerson = (u: number, v: number) => at(c.person, v) >= 0 && c.person[u] === c.person[v];
  const successors = (v: number): number[] => {
    const dependents = c.edges.filter(([from]) => from === v).map(([, to]) => to);
    const next = tasks
      .filter((u) => placed(u) && samePerson(u, v) && at(start, u) > at(start, v))
      .sort((a, b) => at(start, a) - at(start, b))
      .slice(0, 1);
    return [...dependents, ...next].filter(placed);
  };
  const critical = (v: number): boolean =>
    at(finish, v) === last ||
    successors(v).some((s) => at(start, s) === at(finish, v) + 1 && critical(s));
  return {
    start,
    finish,
    unscheduled,
    critical: tasks.map((v) => placed(v) && critical(v)),
    last,
  };
}

function engineLevel(c: LevelCase) {
  const input = toInput(c, false);
  const g = buildGraph(c.n, input.from, input.to);
  const order = topoOrder(g).order ?? new Uint32Array();
  const { es, slack } = cpm(g, order, input.progress, input.duration);
  const out = level({
    g,
    progress: input.progress,
    es,
    slack,
    duration: Uint32Array.from(c.days),
    person: Int32Array.from(c.person),
    people: c.people,
  });
  return {
    start: [...out.start],
    finish: [...out.finish],
    unscheduled: [...out.unscheduled].map((u) => u === 1),
    critical: [...out.critical].map((u) => u === 1),
    last: out.last,
  };
}

t.test('levelling equals the day-by-day reference on small random flows', async (t) => {
  fc.assert(
    fc.property(caseArb, (c) => {
      assert.deepEqual(engineLevel(c), refLevel(c));
    }),
    { numRuns: 2000 },
  );
  t.pass('2000 flows of up to 8 tasks and 3 people agree');
});

t.test('the generator reaches the cases that matter', async (t) => {
  const seen = { idle: 0, unassigned: 0, done: 0, started: 0, delayed: 0 };
  fc.assert(
    fc.property(caseArb, (c) => {
      const ref = refLevel(c);
      const cp = refCpm(c);
      if (c.days.includes(0)) seen.idle++;
      if (c.person.includes(-1)) seen.unassigned++;
      if (c.progress.includes(2)) seen.done++;
      if (c.progress.includes(1)) seen.started++;
      if (ref.start.some((s, v) => s > at(cp.es, v))) seen.delayed++;
    }),
    { numRuns: 2000 },
  );
  for (const [what, count] of Object.entries(seen)) t.ok(count > 10, `${what}: ${count} of 2000`);
});

t.test('a person holding up two parallel branches', async (t) => {
  // 0 → 1 and 0 → 2, both of person 0, two days each: one branch waits two days.
  const g = buildGraph(3, [0, 0], [1, 2]);
  const progress = new Uint8Array(3);
  const out = level({
    g,
    progress,
    es: Int32Array.from([0, 1, 1]),
    slack: Int32Array.from([0, 0, 0]),
    duration: Uint32Array.from([1, 2, 2]),
    person: Int32Array.from([-1, 0, 0]),
    people: 1,
  });
  t.strictSame([...out.start], [0, 1, 3]);
  t.strictSame([...out.finish], [0, 2, 4]);
  t.strictSame([...out.critical], [1, 1, 1], 'the person chains both branches into one path');
  t.equal(out.last, 4);
});

t.test("a task placed later fills the gap before a person's earlier-placed task", async (t) => {
  // y (3 days) and x (1) are person 1's; x → u, person 0's; w (nobody's, 2 days) → v, person 0's.
  const [y, x, u, w, v] = [0, 1, 2, 3, 4];
  const g = buildGraph(5, [x, w], [u, v]);
  const progress = new Uint8Array(5);
  const { es, slack } = cpm(
    g,
    topoOrder(g).order ?? new Uint32Array(),
    progress,
    Uint32Array.from([3, 1, 1, 2, 2]),
  );
  const out = level({
    g,
    progress,
    es,
    slack,
    duration: Uint32Array.from([3, 1, 1, 2, 2]),
    person: Int32Array.from([1, 1, 0, -1, 0]),
    people: 2,
  });
  // u is placed before v (earlier unlevelled start) but waits for x behind y: v takes days 2–3.
  t.strictSame([...out.start], [0, 3, 4, 0, 2]);
  t.ok(
    at(out.start, v) < at(out.start, u) && at(es, u) < at(es, v),
    'placed after u, v starts first',
  );
  t.equal(out.start[y], 0);
});

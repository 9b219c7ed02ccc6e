/**
 * Levelling with typed links, leads, milestones, constraints, work in progress and time off,
 * against a day-by-day reference written from the rule: the highest-ranked task (unlevelled S,
 * then least total float, then index) whose predecessors are all placed goes next, at the least
 * S its links and start constraint allow on which its person is free for its whole span, each
 * start tried one day at a time; critical where total float ≤ 0 on the levelled schedule, each
 * person's next task a successor by an FS link (relaxed to a fixed point, −∞ on a cycle no
 * schedule meets).
 */
import t from 'tap';
import fc from 'fast-check';
import assert from 'node:assert/strict';
import { cpm } from '../../src/engine/cpm.ts';
import { buildGraph, topoOrder } from '../../src/engine/graph.ts';
import { level } from '../../src/engine/level.ts';
import { flowArb, flowInput, type FlowCase } from './flow-arbitraries.ts';
import { at, days, refSchedule } from './schedule-reference.ts';

interface LevelCase extends FlowCase {
  people: number;
  person: number[];
  /** Levelled days; 0 where the person has no hours. */
  levelDays: number[];
  taken: [number, number][][];
}

const caseArb: fc.Arbitrary<LevelCase> = flowArb(9).chain((flow) =>
  fc.integer({ min: 1, max: 3 }).chain((people) =>
    fc
      .record({
        person: fc.array(fc.integer({ min: -1, max: people - 1 }), {
          minLength: flow.n,
          maxLength: flow.n,
        }),
        idle: fc.array(fc.integer({ min: 0, max: 5 }), { minLength: people, maxLength: people }),
        stretch: fc.array(fc.integer({ min: 1, max: 3 }), { minLength: flow.n, maxLength: flow.n }),
        taken: fc.array(
          fc.array(
            fc
              .tuple(fc.integer({ min: -2, max: 12 }), fc.nat(3))
              .map(([first, length]): [number, number] => [first, first + length]),
            { maxLength: 3 },
          ),
          { minLength: people, maxLength: people },
        ),
      })
      .map(({ person, idle, stretch, taken }) => ({
        ...flow,
        people,
        person,
        taken,
        levelDays: person.map((who, v) =>
          who < 0 ? days(flow, v) : idle[who] === 0 ? 0 : at(stretch, v),
        ),
      })),
  ),
);

function refLevel(c: LevelCase) {
  const unlevelled = refSchedule(c);
  const tasks = [...Array(c.n).keys()];
  const open = (v: number) => c.progress[v] !== 2;
  const rank = tasks
    .filter(open)
    .sort(
      (a, b) =>
        (unlevelled.S[a] ?? 0) - (unlevelled.S[b] ?? 0) ||
        (unlevelled.totalFloat[a] ?? 0) - (unlevelled.totalFloat[b] ?? 0) ||
        a - b,
    );
  const into = (v: number) => c.links.filter((l) => l.to === v && open(l.from));
  const d = (v: number) => (c.milestone[v] ? 0 : at(c.levelDays, v));
  const S = tasks.map(() => -1);
  const F = tasks.map(() => -1);
  const resolved = new Set<number>();
  const unscheduled = new Set<number>();
  const busy = Array.from({ length: c.people }, (_, who) => {
    const set = new Set<number>();
    for (const [first, last] of at(c.taken, who)) for (let x = first; x <= last; x++) set.add(x);
    return set;
  });
  while (resolved.size < rank.length) {
    const v = rank.find((u) => !resolved.has(u) && into(u).every((l) => resolved.has(l.from)));
    if (v === undefined) throw new Error('nothing can be placed');
    resolved.add(v);
    if (
      (at(c.levelDays, v) === 0 && !c.milestone[v]) ||
      into(v).some((l) => unscheduled.has(l.from))
    ) {
      unscheduled.add(v);
      continue;
    }
    const days = d(v);
    const atZero = c.inProgressAtZero && c.progress[v] === 1;
    let least = atZero ? 0 : Math.max(0, c.startNoEarlier[v] ?? 0);
    let finishNeed = days;
    for (const l of into(v)) {
      const from = l.type === 'SS' || l.type === 'SF' ? at(S, l.from) : at(F, l.from);
      const holdsFinish = l.type === 'FF' || l.type === 'SF';
      if (atZero) finishNeed = holdsFinish ? Math.max(finishNeed, from + l.lag) : finishNeed;
      else least = Math.max(least, from + l.lag - (holdsFinish ? days : 0));
    }
    const mine = days > 0 ? busy[at(c.person, v)] : undefined;
    let s = least;
    const span = (x: number) => [...Array(days).keys()].map((k) => x + k);
    while (mine && span(s).some((x) => mine.has(x))) s++;
    for (const x of mine ? span(s) : []) mine?.add(x);
    S[v] = s;
    F[v] = Math.max(s + days, atZero ? finishNeed : 0);
  }
  const placed = tasks.filter((v) => at(S, v) >= 0);
  const E = placed.length === 0 ? -1 : Math.max(...placed.map((v) => at(F, v)));
  // The next task of the same person by start (milestones take no day: in no one's order).
  const next = (v: number) =>
    placed
      .filter(
        (u) =>
          d(v) > 0 &&
          d(u) > 0 &&
          at(c.person, v) >= 0 &&
          c.person[u] === c.person[v] &&
          at(S, u) > at(S, v),
      )
      .sort((a, b) => at(S, a) - at(S, b))[0];
  const LF = tasks.map((v) => Math.min(E, c.finishNoLater[v] ?? Infinity));
  const relaxed = () => {
    const changed: number[] = [];
    for (const v of placed) {
      let lf = at(LF, v);
      for (const l of c.links.filter((l) => l.from === v && at(S, l.to) >= 0)) {
        const LSs = at(LF, l.to) - d(l.to);
        if (l.type === 'FS') lf = Math.min(lf, LSs - l.lag);
        if (l.type === 'SS') lf = Math.min(lf, LSs - l.lag + d(v));
        if (l.type === 'FF') lf = Math.min(lf, at(LF, l.to) - l.lag);
        if (l.type === 'SF') lf = Math.min(lf, at(LF, l.to) - l.lag + d(v));
      }
      const after = next(v);
      if (after !== undefined) lf = Math.min(lf, at(LF, after) - d(after));
      // A person's task ends where its days can all be worked: back past any day off.
      const off = at(c.person, v) >= 0 && d(v) > 0 ? at(c.taken, at(c.person, v)) : [];
      const isOff = (x: number) => off.some(([first, last]) => x >= first && x <= last);
      while (Number.isFinite(lf) && [...Array(d(v)).keys()].some((k) => isOff(lf - d(v) + k))) lf--;
      if (lf < at(LF, v)) changed.push(v);
      LF[v] = lf;
    }
    return changed;
  };
  // Bellman and Ford: settled within as many rounds as tasks, else what still falls is on a
  // cycle no schedule meets, and falls for ever: −∞, and so does all that waits on it.
  let changed = relaxed();
  for (let round = 0; round < placed.length && changed.length > 0; round++) changed = relaxed();
  for (const v of changed) LF[v] = -Infinity;
  while (relaxed().length > 0);
  const critical = tasks.map(
    (v) => at(S, v) >= 0 && Math.min(at(LF, v) - d(v) - at(S, v), at(LF, v) - at(F, v)) <= 0,
  );
  const shown = (v: number, x: number) =>
    at(S, v) < 0 ? -1 : c.milestone[v] ? Math.max(at(S, v) - 1, 0) : x;
  return {
    start: tasks.map((v) => shown(v, at(S, v))),
    finish: tasks.map((v) => shown(v, at(F, v) - 1)),
    unscheduled: tasks.map((v) => unscheduled.has(v)),
    critical,
    last: E < 0 ? -1 : Math.max(E - 1, 0),
  };
}

function engineLevel(c: LevelCase) {
  const input = flowInput(c);
  const g = buildGraph(c.n, input.from, input.to, input.linkType, input.lag);
  const order = topoOrder(g).order ?? new Uint32Array();
  const unlevelled = cpm(g, order, input.progress, input.duration, input);
  const out = level({
    g,
    progress: input.progress,
    es: unlevelled.es,
    slack: unlevelled.slack,
    start: unlevelled.passes.start,
    duration: Uint32Array.from(c.levelDays),
    person: Int32Array.from(c.person),
    people: c.people,
    facts: input,
    taken: c.taken,
  });
  return {
    start: [...out.start],
    finish: [...out.finish],
    unscheduled: [...out.unscheduled].map((u) => u === 1),
    critical: [...out.critical].map((u) => u === 1),
    last: out.last,
  };
}

t.test(
  'levelling with links, leads, milestones, constraints and time off equals the day-by-day reference',
  async (t) => {
    const seen = { delayed: 0, takenMoved: 0, rankedFirst: 0, milestone: 0, unscheduled: 0 };
    fc.assert(
      fc.property(caseArb, (c) => {
        const ref = refLevel(c);
        assert.deepEqual(engineLevel(c), ref);
        const unlevelled = refSchedule(c);
        if (ref.start.some((s, v) => s > (unlevelled.earliestStart[v] ?? s))) seen.delayed++;
        if (
          c.taken.some((runs) => runs.length > 0) &&
          ref.start.some((s, v) => s > (unlevelled.earliestStart[v] ?? s))
        )
          seen.takenMoved++;
        if (
          c.links.some(
            (l) => at(ref.start, l.to) >= 0 && at(ref.start, l.to) < at(ref.start, l.from),
          )
        )
          seen.rankedFirst++;
        if (c.milestone.some((m, v) => m && at(ref.start, v) >= 0)) seen.milestone++;
        if (ref.unscheduled.includes(true)) seen.unscheduled++;
      }),
      { numRuns: 2500 },
    );
    for (const [what, count] of Object.entries(seen)) t.ok(count > 20, `${what}: ${count}`);
  },
);

t.test('time off moves a task past the taken days; a milestone takes none', async (t) => {
  // a (2 days) → m (a milestone) → b (3 days), all person 0's, who is off on days 2–4.
  const g = buildGraph(3, [0, 1], [1, 2]);
  const progress = new Uint8Array(3);
  const milestone = Uint8Array.of(0, 1, 0);
  const unlevelled = cpm(g, Uint32Array.of(0, 1, 2), progress, Uint32Array.of(2, 0, 3), {
    milestone,
  });
  const out = level({
    g,
    progress,
    es: unlevelled.es,
    slack: unlevelled.slack,
    start: unlevelled.passes.start,
    duration: Uint32Array.of(2, 0, 3),
    person: Int32Array.of(0, 0, 0),
    people: 1,
    facts: { milestone },
    taken: [[[2, 4]]],
  });
  // a: days 0–1 (S 0, F 2). m: S = F = 2, shown on day 1 (max(S − 1, 0)), on a day off: no day
  // taken. b: S ≥ 2, but days 2–4 are off: S = 5, F = 8, shown days 5–7.
  t.strictSame([...out.start], [0, 1, 5]);
  t.strictSame([...out.finish], [1, 1, 7]);
  t.equal(out.last, 7);
  // Backward: LF(b) = E = 8, LS(b) = 5; m may finish by 5 (float 3: it takes no day); a by 5
  // too, but days 2–4 are off, so its two days must end by day 2: LF(a) = 2, float 0.
  t.strictSame([...out.critical], [1, 0, 1], 'a and b critical; the milestone has 3 days of float');
});

/**
 * Hand-worked schedules, each with its arithmetic beside it: every link type with a lag and a
 * lead, a milestone, a start-no-earlier-than, a finish-no-later-than missed (negative float), a
 * holiday inside a span, a calendar that works Saturdays, tasks in progress with their remaining
 * days; what holds a start and a completion; levelling where a successor ranks before its
 * predecessor. Days are boundaries: a task occupies days S … F − 1, shown from day S to day F − 1.
 */
import t from 'tap';
import { DEFAULT_CALENDAR, WorkCalendar } from '../../src/engine/calendar.ts';
import { cpm, NO_BOUND } from '../../src/engine/cpm.ts';
import { buildGraph, edgeLists, LINK, topoOrder } from '../../src/engine/graph.ts';
import { level } from '../../src/engine/level.ts';
import { recompute, type RecomputeInput } from '../../src/engine/recompute.ts';
import {
  finishBlockers,
  PROGRESS,
  STATUS_BLOCKED,
  STATUS_IN_PROGRESS,
  STATUS_READY,
  startBlockers,
} from '../../src/engine/status.ts';

type Link = [from: number, to: number, type: keyof typeof LINK, lag: number];

interface Case {
  duration: number[];
  links?: Link[];
  progress?: number[];
  milestone?: number[];
  startNoEarlier?: number[];
  finishNoLater?: (number | null)[];
}

function run(c: Case) {
  const n = c.duration.length;
  const links = c.links ?? [];
  const input: RecomputeInput = {
    n,
    from: Uint32Array.from(links, (l) => l[0]),
    to: Uint32Array.from(links, (l) => l[1]),
    linkType: Uint8Array.from(links, (l) => LINK[l[2]]),
    lag: Int32Array.from(links, (l) => l[3]),
    progress: Uint8Array.from(c.progress ?? new Array<number>(n).fill(PROGRESS.open)),
    duration: Uint32Array.from(c.duration),
    milestone: c.milestone && Uint8Array.from(c.milestone),
    startNoEarlier: c.startNoEarlier && Int32Array.from(c.startNoEarlier),
    finishNoLater: c.finishNoLater && Int32Array.from(c.finishNoLater, (b) => b ?? NO_BOUND),
    inProgressAtZero: true,
    withCounts: false,
  };
  const out = recompute(input);
  return {
    es: [...out.es],
    ef: [...out.ef],
    ls: [...out.ls],
    lf: [...out.lf],
    total: [...out.slack],
    free: [...out.freeFloat],
    critical: [...out.critical],
    finish: out.finish,
    E: out.passes.projectEnd,
    status: [...out.status],
  };
}

t.test('FS with a lag and with a lead', async (t) => {
  // A (2 days) → B (3 days), FS+2: S(A) = 0, F(A) = 2; S(B) ≥ F(A) + 2 = 4, F(B) = 7 = E.
  // Back: LF(B) = 7, LS(B) = 4; LF(A) ≤ LS(B) − 2 = 2, LS(A) = 0. Both float 0.
  const lag = run({ duration: [2, 3], links: [[0, 1, 'FS', 2]] });
  t.strictSame(lag.es, [0, 4]);
  t.strictSame(lag.ef, [1, 6], 'A shows days 0–1, B days 4–6');
  t.strictSame(lag.ls, [0, 4]);
  t.strictSame(lag.lf, [1, 6]);
  t.strictSame(lag.total, [0, 0]);
  t.strictSame(lag.free, [0, 0], 'A: S(B) − 2 − F(A) = 4 − 2 − 2 = 0');
  t.equal(lag.finish, 6, 'projected finish: day E − 1');
  // A (4 days) → B (2 days), FS−2: S(B) ≥ 4 − 2 = 2, F(B) = 4 = F(A) = E.
  // Back: LF(B) = 4, LS(B) = 2; LF(A) ≤ LS(B) + 2 = 4. Both float 0.
  const lead = run({ duration: [4, 2], links: [[0, 1, 'FS', -2]] });
  t.strictSame(lead.es, [0, 2]);
  t.strictSame(lead.ef, [3, 3], 'B overlaps the last two days of A');
  t.strictSame(lead.total, [0, 0]);
  t.equal(lead.finish, 3);
});

t.test('SS with a lag, FF with a lag and a lead, SF with a lag', async (t) => {
  // A (2) SS+1 → B (5): S(B) ≥ S(A) + 1 = 1, F(B) = 6 = E. Back: LF(B) = 6, LS(B) = 1;
  // LF(A) ≤ LS(B) − 1 + d(A) = 1 − 1 + 2 = 2: float 0. Free float of A: S(B) − 1 − S(A) = 0.
  const ss = run({ duration: [2, 5], links: [[0, 1, 'SS', 1]] });
  t.strictSame(ss.es, [0, 1]);
  t.strictSame(ss.ef, [1, 5]);
  t.strictSame(ss.lf, [1, 5]);
  t.strictSame(ss.total, [0, 0]);
  t.strictSame(ss.free, [0, 0]);
  // A (3) FF+2 → B (1): F(B) ≥ F(A) + 2 = 5, so S(B) = 5 − 1 = 4; E = 5.
  // Back: LF(A) ≤ LF(B) − 2 = 3: float 0.
  const ff = run({ duration: [3, 1], links: [[0, 1, 'FF', 2]] });
  t.strictSame(ff.es, [0, 4]);
  t.strictSame(ff.ef, [2, 4]);
  t.strictSame(ff.total, [0, 0]);
  // A (5) FF−1 → B (2): F(B) ≥ 5 − 1 = 4, S(B) = 2; E = F(A) = 5.
  // Back: LF(B) = E = 5, LS(B) = 3: B's float 1; LF(A) ≤ min(E, LF(B) + 1 = 6) = 5: float 0.
  // Free: B has no successor, E − F(B) = 1; A: F(B) + 1 − F(A) = 0.
  const lead = run({ duration: [5, 2], links: [[0, 1, 'FF', -1]] });
  t.strictSame(lead.es, [0, 2]);
  t.strictSame(lead.ef, [4, 3]);
  t.strictSame(lead.ls, [0, 3]);
  t.strictSame(lead.lf, [4, 4]);
  t.strictSame(lead.total, [0, 1]);
  t.strictSame(lead.free, [0, 1]);
  t.strictSame(lead.critical, [1, 0]);
  // A (2) SF+4 → B (3): F(B) ≥ S(A) + 4 = 4, S(B) = 1; E = 4.
  // Back: LF(A) ≤ LF(B) − 4 + d(A) = 4 − 4 + 2 = 2: float 0.
  const sf = run({ duration: [2, 3], links: [[0, 1, 'SF', 4]] });
  t.strictSame(sf.es, [0, 1]);
  t.strictSame(sf.ef, [1, 3]);
  t.strictSame(sf.total, [0, 0]);
  t.equal(sf.finish, 3);
});

t.test('a milestone between two tasks, and one alone', async (t) => {
  // A (2) → M (milestone) → B (1), FS: S(M) = F(M) = 2, shown on day max(2 − 1, 0) = 1 (the
  // day A ends); S(B) = 2, F(B) = 3 = E. Back: LF(M) = LS(B) = 2, shown latest day LF − 1 = 1.
  const mid = run({
    duration: [2, 5, 1],
    milestone: [0, 1, 0],
    links: [
      [0, 1, 'FS', 0],
      [1, 2, 'FS', 0],
    ],
  });
  t.strictSame(mid.es, [0, 1, 2]);
  t.strictSame(mid.ef, [1, 1, 2], 'the milestone takes no day whatever its duration says');
  t.strictSame(mid.ls, [0, 1, 2]);
  t.strictSame(mid.lf, [1, 1, 2]);
  t.strictSame(mid.critical, [1, 1, 1]);
  t.equal(mid.finish, 2);
  // A milestone alone: S = F = 0 = E; shown day 0 (max(−1, 0)), and so is the finish.
  const alone = run({ duration: [0], milestone: [1] });
  t.strictSame([alone.es, alone.ef, alone.ls, alone.lf], [[0], [0], [-1], [-1]]);
  t.equal(alone.E, 0);
  t.equal(alone.finish, 0, 'projected finish: day max(E − 1, 0) = 0');
  t.strictSame(alone.total, [0]);
});

t.test('a start-no-earlier-than, and a finish-no-later-than missed', async (t) => {
  // A (2) may start no earlier than day 5: S = 5, F = 7 = E. B (1) alone: S = 0, F = 1,
  // LF(B) = E = 7: total float 6, free float E − F(B) = 6.
  const snet = run({ duration: [2, 1], startNoEarlier: [5, 0] });
  t.strictSame(snet.es, [5, 0]);
  t.strictSame(snet.ef, [6, 0]);
  t.strictSame(snet.total, [0, 6]);
  t.strictSame(snet.free, [0, 6]);
  // A (3) → B (2) FS; B must finish by day 3 (LF ≤ 1 + 3 = 4). Forward: S(B) = 3, F(B) = 5 = E,
  // unmoved. Back: LF(B) = min(E, 4) = 4, LS(B) = 2: float min(2 − 3, 4 − 5) = −1; LF(A) ≤ LS(B)
  // = 2, LS(A) = −1: float −1. Both critical; free float max(0, min(0, −1)) = 0.
  const missed = run({ duration: [3, 2], links: [[0, 1, 'FS', 0]], finishNoLater: [null, 4] });
  t.strictSame(missed.es, [0, 3], 'no early date moves');
  t.strictSame(missed.ls, [-1, 2], 'A should have started the day before day 0');
  t.strictSame(missed.lf, [1, 3]);
  t.strictSame(missed.total, [-1, -1]);
  t.strictSame(missed.free, [0, 0]);
  t.strictSame(missed.critical, [1, 1]);
  t.equal(missed.finish, 4);
});

t.test(
  'tasks in progress: remaining days from day 0, and FF and SF still hold their finish',
  async (t) => {
    // A in progress, 12 hours remaining at 8 a day: max(1, ceil(12 / 8)) = 2 days, S = 0, F = 2.
    // B (1) waits FS on A: S = 2. C in progress, 1 day remaining, but FF+0 from D (4, open):
    // F(C) = max(d, F(D)) = 4, S(C) = 0: C shows days 0–3. E (in progress, 2 days) SS+3 from D:
    // its SS link is behind it, S = 0. E = 4.
    const days = new WorkCalendar(DEFAULT_CALENDAR).durationDays(12);
    t.equal(days, 2);
    const wip = run({
      duration: [days, 1, 1, 4, 2],
      progress: [1, 0, 1, 0, 1],
      links: [
        [0, 1, 'FS', 0],
        [3, 2, 'FF', 0],
        [3, 4, 'SS', 3],
      ],
    });
    t.strictSame(wip.es, [0, 2, 0, 0, 0]);
    t.strictSame(wip.ef, [1, 2, 3, 3, 1]);
    t.equal(wip.E, 4);
    // Back: LF(C) = 4, TF(C) = LF − F = 0. LF(E) = 4, LS(E) = 2; D: LF ≤ LF(C) = 4 (FF) and
    // LS(E) − 3 + d(D) = 2 − 3 + 4 = 3 (SS): LF(D) = 3, LS(D) = −1, float −1: the SS link asks D
    // to have started 3 days before E, whose start is behind it.
    t.strictSame(wip.total, [1, 1, 0, -1, 2]);
    t.strictSame(wip.status, [
      STATUS_IN_PROGRESS,
      STATUS_BLOCKED,
      STATUS_IN_PROGRESS,
      STATUS_READY,
      STATUS_IN_PROGRESS,
    ]);
  },
);

t.test('status and completion by link type', async (t) => {
  // P → Q SS, P → R FF, P → S SF, P → U FS; P open, then started, then done.
  const g = buildGraph(
    5,
    [0, 0, 0, 0],
    [1, 2, 3, 4],
    [LINK.SS, LINK.FF, LINK.SF, LINK.FS],
    [2, 0, -1, 0],
  );
  const at = (p: number) => Uint8Array.of(p, 0, 0, 0, 0);
  const open = recompute({
    n: 5,
    ...edgeLists(g),
    progress: at(PROGRESS.open),
    duration: new Uint32Array(5).fill(1),
    withCounts: false,
  });
  t.strictSame(
    [...open.status].slice(1),
    [STATUS_BLOCKED, STATUS_READY, STATUS_READY, STATUS_BLOCKED],
    'SS and FS hold a start; FF and SF never do',
  );
  t.strictSame(startBlockers(g, at(PROGRESS.open), 1), [0]);
  t.strictSame(finishBlockers(g, at(PROGRESS.open), 2), [0], 'FF: P not done');
  t.strictSame(finishBlockers(g, at(PROGRESS.open), 3), [0], 'SF: P not started');
  t.strictSame(finishBlockers(g, at(PROGRESS.open), 1), [], 'SS never holds a completion');
  const started = at(PROGRESS.started);
  t.strictSame(startBlockers(g, started, 1), [], 'P started: Q may start');
  t.strictSame(startBlockers(g, started, 4), [0], 'FS: until P is done');
  t.strictSame(finishBlockers(g, started, 2), [0], 'FF: still until P is done');
  t.strictSame(finishBlockers(g, started, 3), [], 'SF: P started');
  t.strictSame(finishBlockers(g, at(PROGRESS.done), 2), []);
});

t.test('a holiday inside a span, and a calendar that works Saturdays', async (t) => {
  // Monday to Friday, Wednesday 2024-06-12 a holiday, from Monday 2024-06-10 (day 0).
  // A (16 h: 2 days) → B (24 h: 3 days): A days 0–1 (Mon 10, Tue 11); B days 2–4: Thu 13,
  // Fri 14 and, past the weekend, Mon 17.
  const cal = new WorkCalendar({ ...DEFAULT_CALENDAR, holidays: ['2024-06-12'] });
  const days = cal.days('2024-06-10');
  const a = run({
    duration: [cal.durationDays(16), cal.durationDays(24)],
    links: [[0, 1, 'FS', 0]],
  });
  t.strictSame(
    a.es.map((d) => days.date(d)),
    ['2024-06-10', '2024-06-13'],
  );
  t.strictSame(
    a.ef.map((d) => days.date(d)),
    ['2024-06-11', '2024-06-17'],
  );
  t.equal(days.date(a.finish), '2024-06-17');
  // A finish-no-later-than Friday 14th: the last working day on or before it is day 3, so
  // LF ≤ 4; F(B) = 5: float −1, latest start day LF − d = 1 (Tue 11).
  const bound = 1 + days.onOrBefore('2024-06-14');
  t.equal(bound, 4);
  const late = run({ duration: [2, 3], links: [[0, 1, 'FS', 0]], finishNoLater: [null, bound] });
  t.strictSame(late.total, [-1, -1]);
  t.equal(days.date(late.ls[1] ?? 0), '2024-06-11');
  t.equal(days.date(late.ls[0] ?? 0), '2024-06-07', 'A: day −1, the Friday before the start');
  // Monday to Saturday, 6 hours a day, from Friday 2024-06-07 (day 0).
  // A (20 h: ceil(20 / 6) = 4 days): Fri 7, Sat 8, Mon 10, Tue 11. B (2 h: 1 day), FS+1:
  // S ≥ 4 + 1 = 5: day 4 is Wed 12, day 5 Thu 13. A start-no-earlier-than Sunday 9th reads the
  // first working day on or after it: Monday, day 2.
  const six = new WorkCalendar({ workingDays: [1, 2, 3, 4, 5, 6], hoursPerDay: 6, holidays: [] });
  const sat = six.days('2024-06-07');
  const b = run({
    duration: [six.durationDays(20), six.durationDays(2)],
    links: [[0, 1, 'FS', 1]],
  });
  t.strictSame(
    b.es.map((d) => sat.date(d)),
    ['2024-06-07', '2024-06-13'],
  );
  t.strictSame(
    b.ef.map((d) => sat.date(d)),
    ['2024-06-11', '2024-06-13'],
  );
  t.equal(sat.onOrAfter('2024-06-09'), 2);
  t.equal(sat.date(2), '2024-06-10');
});

t.test('levelling: a successor that ranks before its predecessor waits for it', async (t) => {
  // P (nobody's, 2 days) may start no earlier than day 5: S 5, F 7 = E. Q (person 0's, 1 day)
  // FF−5 from P: F(Q) ≥ 7 − 5 = 2, S(Q) = 1. R (person 0's, 3 days) has no link: S 0.
  // Rank by S: R (0), Q (1), P (5). R goes first: days 0–2. Q ranks next but waits for P; P is
  // placed at 5; then Q at the least S its link allows (1) on which person 0 is free: 3.
  const g = buildGraph(3, [0], [1], [LINK.FF], [-5]);
  const progress = new Uint8Array(3);
  const facts = { startNoEarlier: Int32Array.of(5, 0, 0) };
  const order = topoOrder(g).order ?? new Uint32Array();
  const unlevelled = cpm(g, order, progress, Uint32Array.of(2, 1, 3), facts);
  t.strictSame([...unlevelled.passes.start], [5, 1, 0]);
  const out = level({
    g,
    progress,
    es: unlevelled.es,
    slack: unlevelled.slack,
    start: unlevelled.passes.start,
    duration: Uint32Array.of(2, 1, 3),
    person: Int32Array.of(-1, 0, 0),
    people: 1,
    facts,
  });
  t.strictSame([...out.start], [5, 3, 0]);
  t.strictSame([...out.finish], [6, 3, 2]);
  t.equal(out.last, 6);
  // Back from E = 7: Q's link asks LF(Q) ≤ LF(P) + 5 = 12, so Q: LF 7, float 7 − 4 = 3. R's
  // next task is Q: LF(R) ≤ LS(Q) = 6, float 6 − 3 = 3. P ends on E: float 0.
  t.strictSame([...out.critical], [1, 0, 0]);
});

/**
 * GET /forecast (CONTRACT §5, issue 33 items 2–3) checked against oracles that do not share its
 * code: a three-task flow whose finish distribution is enumerated from the triangular CDF, a
 * flow without ranges whose every quantile is the CPM date, criticality on a chain and on two
 * equal branches, convergence as samples grow, and the same answer from any pool size.
 */
import t from 'tap';
import { assertError, startTestServer, type TestServer } from '../../helpers/server.ts';
import { newFlow, ok, startFlowServer, taskIdOf } from '../../helpers/flows.ts';
import type { Flow, Refusal, Schedule } from '../../helpers/wire.ts';
import type { ForecastView } from '../../../src/services/flows/forecast.ts';

const START = '2030-01-07'; // a Monday
/** Working day `offset` from START (offset 0 is START), for the few weeks these flows last. */
const day = (offset: number): string => {
  const date = new Date(`${START}T00:00:00Z`);
  for (let left = offset; left > 0;) {
    date.setUTCDate(date.getUTCDate() + 1);
    if (date.getUTCDay() % 6 !== 0) left--;
  }
  return date.toISOString().slice(0, 10);
};

const forecast = (s: TestServer, flowId: string, query: string) =>
  s.api<ForecastView>('GET', `/v1/flows/${flowId}/forecast?startDate=${START}&${query}`, {
    token: s.adminKey,
  });

/** The triangular CDF, written from its definition. */
function cdf(x: number, low: number, mode: number, high: number): number {
  if (x <= low) return 0;
  if (x >= high) return 1;
  return x <= mode
    ? (x - low) ** 2 / ((high - low) * (mode - low))
    : 1 - (high - x) ** 2 / ((high - low) * (high - mode));
}

/** P(days = d) for d = 1, 2, …: a task lasts max(1, ceil(hours / 8)) working days. */
function daysOf(low: number, mode: number, high: number): Map<number, number> {
  const odds = new Map<number, number>();
  for (let d = 1; 8 * (d - 1) < high; d++) {
    const p = cdf(8 * d, low, mode, high) - (d === 1 ? 0 : cdf(8 * (d - 1), low, mode, high));
    if (p > 0) odds.set(d, p);
  }
  return odds;
}

t.test(
  'a three-task flow: the finish distribution, its quantiles and criticality match the enumerated one',
  async (t) => {
    const s = await startFlowServer(t);
    // A (0–16 h around 8) then B (8–24 h, 8 most likely); C alone, a fixed 3 days.
    const flow = await newFlow(t, s, {
      name: 'Three',
      tasks: [
        { name: 'A', estimateHours: 8, estimateRange: { low: 0, high: 16 } },
        { name: 'B', estimateHours: 8, estimateRange: { low: 8, high: 24 }, after: [0] },
        { name: 'C', estimateHours: 24 },
      ],
    });
    const id = taskIdOf(flow);
    // The oracle: every combination of A's and B's days, against C's 3.
    const finish = new Map<number, number>();
    let cCritical = 0;
    for (const [a, pa] of daysOf(0, 8, 16))
      for (const [b, pb] of daysOf(8, 8, 24)) {
        const days = Math.max(a + b, 3);
        finish.set(days, (finish.get(days) ?? 0) + pa * pb);
        if (a + b <= 3) cCritical += pa * pb;
      }
    const exactCdf = (days: number) =>
      [...finish].filter(([d]) => d <= days).reduce((sum, [, p]) => sum + p, 0);
    const exactQuantile = (p: number) =>
      Math.min(...[...finish.keys()].filter((d) => exactCdf(d) >= p));
    t.strictSame([...finish.keys()].sort(), [3, 4, 5], 'the oracle: 3, 4 or 5 working days');

    const res = await forecast(s, flow.id, 'samples=40000&seed=7');
    t.equal(res.status, 200, res.text);
    t.equal(res.body.samples, 40000);
    t.equal(res.body.seed, 7);
    t.equal(res.body.startDate, START);
    t.strictSame(res.body.finish, {
      p50: day(exactQuantile(0.5) - 1),
      p80: day(exactQuantile(0.8) - 1),
      p95: day(exactQuantile(0.95) - 1),
    });
    t.equal(res.body.onTimeProbability, null, 'no due date: null');
    const criticality = new Map(res.body.tasks.map((task) => [task.taskId, task.criticality]));
    t.equal(criticality.get(id('A')), 1, 'A is on every sample’s critical path');
    t.equal(criticality.get(id('B')), 1);
    t.ok(
      Math.abs((criticality.get(id('C')) ?? 0) - cCritical) < 0.02,
      `C critical in ${criticality.get(id('C'))} of samples, enumerated ${cCritical.toFixed(4)}`,
    );
    t.strictSame(
      res.body.tasks.map((task) => task.taskId),
      [id('A'), id('B'), id('C')],
      'most often critical first, ties in flow order',
    );

    // The empirical CDF, read through onTimeProbability with the due date on each day.
    for (const days of [3, 4, 5]) {
      await ok(t, s, 'PATCH', `/v1/flows/${flow.id}`, { dueDate: day(days - 1) });
      const at = await forecast(s, flow.id, 'samples=40000&seed=7');
      t.ok(
        Math.abs((at.body.onTimeProbability ?? -1) - exactCdf(days)) < 0.01,
        `on or before day ${days}: ${at.body.onTimeProbability}, enumerated ${exactCdf(days).toFixed(4)}`,
      );
    }

    // Convergence: the largest error of the CDF at the three days, at 100 and at 100,000 samples.
    const error = async (samples: number) => {
      let worst = 0;
      for (const days of [3, 4]) {
        await ok(t, s, 'PATCH', `/v1/flows/${flow.id}`, { dueDate: day(days - 1) });
        const at = await forecast(s, flow.id, `samples=${samples}&seed=11`);
        worst = Math.max(worst, Math.abs((at.body.onTimeProbability ?? -1) - exactCdf(days)));
      }
      return worst;
    };
    const few = await error(100);
    const many = await error(100_000);
    t.ok(many < 0.006, `100,000 samples within 0.006 of the exact CDF (${many.toFixed(4)})`);
    t.ok(many < few, `closer than 100 samples (${few.toFixed(4)})`);
  },
);

t.test(
  'without ranges every quantile is the CPM date, and the critical path is critical in every sample',
  async (t) => {
    const s = await startFlowServer(t);
    const flow = await newFlow(t, s, {
      name: 'Exact',
      dueDate: '2030-01-10',
      tasks: [
        { name: 'Design', estimateHours: 16 },
        { name: 'Build', estimateHours: 40, after: [0] },
        { name: 'Docs', estimateHours: 8, after: [0] },
        { name: 'Release', after: [1, 2] },
      ],
    });
    const id = taskIdOf(flow);
    const schedule = await ok<Schedule>(
      t,
      s,
      'GET',
      `/v1/flows/${flow.id}/schedule?startDate=${START}`,
    );
    const res = await forecast(s, flow.id, 'samples=500&seed=1');
    t.equal(res.status, 200, res.text);
    const cpm = schedule.projectedFinish;
    t.strictSame(res.body.finish, { p50: cpm, p80: cpm, p95: cpm });
    t.equal(res.body.onTimeProbability, 0, 'the CPM date is after the due date: never on time');
    t.strictSame(res.body.tasks, [
      { taskId: id('Design'), criticality: 1 },
      { taskId: id('Build'), criticality: 1 },
      { taskId: id('Release'), criticality: 1 },
    ]);

    // Everything done: nothing to forecast.
    const empty = await newFlow(t, s, { name: 'Empty' });
    const none = await forecast(s, empty.id, 'samples=100&seed=1');
    t.strictSame(none.body.finish, { p50: null, p80: null, p95: null });
    t.strictSame(none.body.tasks, []);
  },
);

t.test(
  'criticality: 1 along a chain, about a half on each of two equal parallel branches',
  async (t) => {
    const s = await startFlowServer(t);
    const wide = { low: 0, high: 400 };
    const flow = await newFlow(t, s, {
      name: 'Branches',
      tasks: [
        { name: 'Start', estimateHours: 8, estimateRange: { low: 4, high: 30 } },
        { name: 'Left', estimateHours: 200, estimateRange: wide, after: [0] },
        { name: 'Right', estimateHours: 200, estimateRange: wide, after: [0] },
        { name: 'End', estimateHours: 8, estimateRange: { low: 2, high: 40 }, after: [1, 2] },
      ],
    });
    const id = taskIdOf(flow);
    // Both branches are critical when they tie: P(Left ≥ Right), enumerated.
    const branch = [...daysOf(0, 200, 400)];
    let leftCritical = 0;
    for (const [l, pl] of branch) for (const [r, pr] of branch) if (l >= r) leftCritical += pl * pr;
    const res = await forecast(s, flow.id, 'samples=40000&seed=3');
    t.equal(res.status, 200, res.text);
    const criticality = new Map(res.body.tasks.map((task) => [task.taskId, task.criticality]));
    t.equal(criticality.get(id('Start')), 1);
    t.equal(criticality.get(id('End')), 1);
    for (const name of ['Left', 'Right'])
      t.ok(
        Math.abs((criticality.get(id(name)) ?? 0) - leftCritical) < 0.015,
        `${name}: ${criticality.get(id(name))}, enumerated ${leftCritical.toFixed(4)} (a half, and ties)`,
      );
    t.ok(leftCritical > 0.5 && leftCritical < 0.53, 'ties are rare at this width');
  },
);

/** A flow of `n` tasks in layers, every third one ranged: enough work for the pool. */
function layered(n: number) {
  return {
    name: `Layered ${n}`,
    dueDate: '2030-06-28',
    tasks: Array.from({ length: n }, (_, i) => ({
      name: `T${i}`,
      estimateHours: 8 + (i % 5) * 4,
      ...(i % 3 === 0 ? { estimateRange: { low: 4, high: 40 + (i % 7) * 8 } } : {}),
      ...(i >= 10 ? { after: [i - 10, i - 1 - (i % 9)] } : {}),
    })),
  };
}

t.test(
  'the same seed gives the same answer: again, on the event loop or the pool, with one worker or two',
  async (t) => {
    const one = await startFlowServer(t, { workers: 1 });
    const two = await startFlowServer(t, { workers: 2 });
    const body = layered(200);
    const answers: ForecastView[] = [];
    for (const s of [one, two]) {
      const flow = await newFlow(t, s, body);
      const names = new Map(flow.tasks.map((task) => [task.id, task.name]));
      // 30,000 samples of 200 tasks go to the pool (split in one part per worker); 1,000 do not.
      for (const samples of [1000, 30000]) {
        const res = await forecast(s, flow.id, `samples=${samples}&seed=42`);
        t.equal(res.status, 200, res.text);
        const again = await forecast(s, flow.id, `samples=${samples}&seed=42`);
        t.strictSame(again.body, res.body, 'asked again: the same answer');
        // Each server has its own flow: tasks are compared by name.
        answers.push({
          ...res.body,
          tasks: res.body.tasks.map((task) => ({ ...task, taskId: names.get(task.taskId) ?? '' })),
        });
      }
    }
    t.strictSame(answers[2], answers[0], 'two workers or one: the same 1,000-sample answer');
    t.strictSame(answers[3], answers[1], 'and the same 30,000-sample answer');
    const [, pooled] = answers;
    t.not(pooled?.finish.p95 ?? null, null);
    t.ok(pooled && pooled.tasks.length > 0 && pooled.tasks.length <= 50, 'at most 50 tasks');
  },
);

t.test('a seeded forecast has an ETag: the same question again is a 304', async (t) => {
  const s = await startFlowServer(t);
  const flow = await newFlow(t, s, layered(20));
  const first = await forecast(s, flow.id, 'samples=1000&seed=5');
  const etag = first.headers.get('etag');
  t.ok(etag, 'an ETag');
  const again = await s.api(
    'GET',
    `/v1/flows/${flow.id}/forecast?startDate=${START}&samples=1000&seed=5`,
    {
      token: s.adminKey,
      headers: { 'if-none-match': etag ?? '' },
    },
  );
  t.equal(again.status, 304);
  const unseeded = await forecast(s, flow.id, 'samples=1000');
  t.equal(unseeded.status, 200);
  t.ok(Number.isInteger(unseeded.body.seed) && unseeded.body.seed >= 0, 'a seed chosen and echoed');
  const replay = await forecast(s, flow.id, `samples=1000&seed=${unseeded.body.seed}`);
  t.strictSame(replay.body, unseeded.body, 'the echoed seed gives that answer again');
});

t.test('bad questions are refused with the bound, and change nothing', async (t) => {
  const s = await startFlowServer(t);
  const flow: Flow = await newFlow(t, s, layered(2000));
  for (const query of ['samples=99', 'samples=100001', 'seed=-1', 'seed=4294967296', 'samples=abc'])
    assertError(t, await forecast(s, flow.id, query), 400, 'VALIDATION_FAILED');
  // 2,000 open tasks × 100,000 samples is twice the bound.
  const tooMuch = await forecast(s, flow.id, 'samples=100000');
  assertError(t, tooMuch, 400, 'VALIDATION_FAILED');
  t.match(tooMuch.body, { error: { details: { bound: 100_000_000 } } });
  t.match((tooMuch.body as unknown as Refusal).error.message, /at most 50000 samples/);
});

t.test(
  'a forecast costs rate budget by its work: one request and one more per million task schedules',
  async (t) => {
    const s = await startTestServer(t, { rateLimitPerMinute: 1, rateLimitBurst: 20 });
    const flow = await newFlow(t, s, layered(2000));
    const remaining = (res: { headers: Headers }) =>
      Number(res.headers.get('x-ratelimit-remaining'));
    // 2,000 open tasks × 100 samples: 200,000 schedules, the request alone.
    const small = await forecast(s, flow.id, 'samples=100&seed=1');
    t.equal(small.status, 200);
    // 2,000 open tasks × 5,000 samples: 10 million, ten more tokens.
    const large = await forecast(s, flow.id, 'samples=5000&seed=1');
    t.equal(large.status, 200, large.text);
    t.equal(remaining(small) - remaining(large), 11, 'the large one spent 11');
    // 8 are left of the burst of 20: not enough for 11.
    const refused = await forecast(s, flow.id, 'samples=5000&seed=2');
    assertError(t, refused, 429, 'RATE_LIMITED');
    // Three more tokens at one a minute: the wait is for the price, not for a single token.
    t.ok(Number(refused.headers.get('retry-after')) > 60, 'with Retry-After until 11 are there');
    // What the large one could not spend is still there for a cheap request.
    t.equal((await forecast(s, flow.id, 'samples=100&seed=1')).status, 200);
  },
);

t.test(
  'an objective of sub-tasks draws its open ones’ ranges and adds the others’ hours',
  async (t) => {
    const s = await startFlowServer(t);
    // O's hours: S1 (0–24 around 8) drawn, S2's 16 added: 16 + T(0, 8, 24).
    const objective = await newFlow(t, s, {
      name: 'Objective',
      tasks: [
        { name: 'Start', estimateHours: 8 },
        { name: 'O', after: [0] },
      ],
    });
    const id = taskIdOf(objective);
    const sub = (body: Record<string, unknown>) =>
      ok<{ id: string }>(
        t,
        s,
        'POST',
        `/v1/flows/${objective.id}/tasks`,
        { parentId: id('O'), ...body },
        201,
      );
    await sub({ name: 'S1', estimateHours: 8, estimateRange: { low: 0, high: 24 } });
    await sub({ name: 'S2', estimateHours: 16 });
    // The same hours as one task: T(16, 24, 40) is 16 + T(0, 8, 24), draw for draw.
    const single = await newFlow(t, s, {
      name: 'Single',
      tasks: [
        { name: 'Start', estimateHours: 8 },
        { name: 'O', estimateHours: 24, estimateRange: { low: 16, high: 40 }, after: [0] },
      ],
    });
    const [a, b] = await Promise.all(
      [objective, single].map((flow) => forecast(s, flow.id, 'samples=5000&seed=9')),
    );
    t.equal(a?.status, 200, a?.text ?? '');
    t.strictSame(a?.body.finish, b?.body.finish, 'the same finishes');
    t.not(a?.body.finish.p50, a?.body.finish.p95, 'and they spread');
  },
);

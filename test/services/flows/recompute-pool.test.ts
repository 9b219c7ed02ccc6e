import t from 'tap';
import { threadId } from 'node:worker_threads';
import { RecomputePool } from '../../../src/services/flows/recompute-pool.ts';
import { DomainError } from '../../../src/platform/errors.ts';
import { workerModule } from '../../../src/platform/worker-pool.ts';
import { recompute } from '../../../src/engine/recompute.ts';
import type { RecomputeInput } from '../../../src/engine/recompute.ts';
import type { ForecastModel } from '../../../src/engine/forecast.ts';
import { randomDag } from '../../engine/random-dag.ts';

const FAULTY = workerModule('../../helpers/faulty-recompute.worker.ts', import.meta.url);

/** The pool takes ownership of (detaches) the input buffers, so tests hand it copies. */
function copy(input: RecomputeInput): RecomputeInput {
  const { from, to, progress, duration } = input;
  return {
    ...input,
    from: from.slice(),
    to: to.slice(),
    progress: progress.slice(),
    duration: duration.slice(),
  };
}

const sameBytes = (a: ArrayBufferView | null, b: ArrayBufferView | null): boolean =>
  a !== null &&
  b !== null &&
  Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(
    Buffer.from(b.buffer, b.byteOffset, b.byteLength),
  );

t.test('a pooled recompute equals the in-thread one and really ran in a worker', async (t) => {
  const pool = new RecomputePool({ threads: 2, timeoutMs: 20_000, maxInFlight: 4 });
  t.teardown(() => pool.close());
  const input = { ...randomDag(5000, { seed: 7 }), withCounts: true };
  const local = recompute(input);
  const sent = copy(input);
  const pooled = await pool.run(sent, 'wsp_a');
  t.not(pooled.threadId, threadId, 'computed on a worker thread');
  t.equal(pool.stats().completed, 1);
  t.equal(sent.from.length, 0, 'input buffers were transferred, not copied');
  t.equal(pooled.finish, local.finish);
  for (const key of ['order', 'status', 'es', 'ef', 'slack', 'critical', 'counts'] as const) {
    t.ok(sameBytes(pooled[key], local[key]), `${key} identical`);
  }
});

t.test(
  'refuses work beyond the bounds instead of queueing it: a workspace past its share 429, the pool past maxInFlight 503',
  async (t) => {
    // maxInFlight 4: one workspace may hold half of it, 2. Each run is admitted or refused
    // when asked, before anything is awaited: none can have ended in between.
    const pool = new RecomputePool({ threads: 1, timeoutMs: 20_000, maxInFlight: 4 });
    t.teardown(() => pool.close());
    const admitted = [
      pool.run(randomDag(2000), 'wsp_a'),
      pool.run(randomDag(10), 'wsp_a'),
      pool.run(randomDag(10), 'wsp_b'),
    ];
    t.equal(pool.stats().inFlight, 3);
    const overShare = pool.run(randomDag(10), 'wsp_a');
    // Another workspace still finds room, up to the pool's own bound.
    admitted.push(pool.run(randomDag(10), 'wsp_b'));
    const overPool = pool.run(randomDag(10), 'wsp_c');
    await t.rejects(overShare, {
      name: 'DomainError',
      code: 'RATE_LIMITED',
      message: /This workspace has 2 recomputes waiting or running, its share of the pool/,
      details: { limit: 2, retryAfter: 1 },
      hints: { retryAfterSeconds: 1 },
    });
    await t.rejects(overPool, {
      name: 'DomainError',
      code: 'SERVICE_UNAVAILABLE',
      message: /Recompute pool is saturated/,
      hints: { retryAfterSeconds: 1 },
    });
    const done = await Promise.all(admitted);
    t.strictSame(
      done.map((output) => output.order.length),
      [2000, 10, 10, 10],
      'the admitted runs still complete',
    );
    t.equal(pool.stats().inFlight, 0);
    const again = await pool.run(randomDag(10), 'wsp_a');
    t.equal(again.order.length, 10, 'capacity is released afterwards');
  },
);

t.test(
  'workspaces are served in turn: a second workspace’s run starts before the first’s queued ones',
  async (t) => {
    // One thread; each run of 19 tasks holds it 1.5 s (faulty worker), so the order in which
    // runs end is the order in which they were started. wsp_a asks for three at once, then
    // wsp_b for one: served in turn, wsp_b's starts right after wsp_a's first (first in, first
    // out would put it last).
    const pool = new RecomputePool({
      threads: 1,
      timeoutMs: 20_000,
      maxInFlight: 8,
      worker: FAULTY,
    });
    t.teardown(() => pool.close());
    const ended: string[] = [];
    const run = (workspace: string, label: string) =>
      pool.run(randomDag(19), workspace).then(() => ended.push(label));
    await Promise.all([
      run('wsp_a', 'a1'),
      run('wsp_a', 'a2'),
      run('wsp_a', 'a3'),
      run('wsp_b', 'b1'),
    ]);
    t.strictSame(ended, ['a1', 'b1', 'a2', 'a3']);
  },
);

t.test('a run past its timeout answers SERVICE_UNAVAILABLE', async (t) => {
  const pool = new RecomputePool({ threads: 1, timeoutMs: 1, maxInFlight: 2 });
  t.teardown(() => pool.close());
  const err = await pool
    .run({ ...randomDag(50_000), withCounts: true }, 'wsp_a')
    .catch((e: unknown) => e);
  t.ok(err instanceof DomainError, 'a DomainError');
  t.equal((err as DomainError).code, 'SERVICE_UNAVAILABLE');
  t.equal(pool.stats().inFlight, 0);
});

t.test('start() starts and warms every worker before the first run', async (t) => {
  const pool = new RecomputePool({ threads: 2, timeoutMs: 20_000, maxInFlight: 4 });
  t.teardown(() => pool.close());
  t.equal(pool.stats().threads, 0, 'nothing runs before start');
  const started = await pool.start();
  t.equal(started.threads, 2);
  t.equal(pool.stats().threads, 2, 'both threads are up');
  t.equal(pool.stats().completed, 0, 'warming is not counted as work');
  t.equal((await pool.run(randomDag(10), 'wsp_a')).order.length, 10);
});

t.test(
  'the timeout counts from when a worker begins a run, not while the run waits for one',
  async (t) => {
    // One cold thread; each run of 19 tasks takes 1.5 s, so the third waits 3 s (and the first
    // waits for the thread to start) before it begins: past the timeout, were that counted from the call.
    const pool = new RecomputePool({ threads: 1, timeoutMs: 3000, maxInFlight: 8, worker: FAULTY });
    t.teardown(() => pool.close());
    const runs = await Promise.allSettled([1, 2, 3].map(() => pool.run(randomDag(19), 'wsp_a')));
    t.strictSame(
      runs.map((r) => r.status),
      ['fulfilled', 'fulfilled', 'fulfilled'],
      'all three ran to the end',
    );
    t.equal(pool.stats().failed, 0);
  },
);

t.test(
  'a forecast whose part fails (past the timeout) answers SERVICE_UNAVAILABLE once every part has settled',
  async (t) => {
    const pool = new RecomputePool({ threads: 1, timeoutMs: 1, maxInFlight: 2 });
    t.teardown(() => pool.close());
    // One task drawn from 1 to 3 hours (mode 2): a million samples a part, far past 1 ms.
    const model: ForecastModel = {
      m: 1,
      predStart: Uint32Array.of(0, 0),
      pred: new Uint32Array(0),
      days: Uint32Array.of(1),
      ranged: Uint32Array.of(0),
      fixedHours: Float64Array.of(0),
      pieceStart: Uint32Array.of(0, 1),
      low: Float64Array.of(1),
      mode: Float64Array.of(2),
      high: Float64Array.of(3),
    };
    const runs = [0, 1].map((i) => ({ seed: 1, first: i * 1_000_000, count: 1_000_000 }));
    await t.rejects(pool.forecast(model, runs, 'wsp_a'), {
      code: 'SERVICE_UNAVAILABLE',
      message: /Recompute timed out/,
    });
    t.strictSame([pool.stats().inFlight, pool.stats().queueSize], [0, 0], 'no part left behind');
  },
);

t.test('closing refuses the runs still waiting; the running one ends', async (t) => {
  // One thread, runs of 19 tasks taking 1.5 s: the first is handed to the thread at once (it
  // runs as soon as the thread is up), the others wait in the pool's queue.
  const pool = new RecomputePool({ threads: 1, timeoutMs: 20_000, maxInFlight: 8, worker: FAULTY });
  const runs = Promise.allSettled([1, 2, 3].map((i) => pool.run(randomDag(19), `wsp_${i}`)));
  await pool.close();
  const settled = await runs;
  t.equal(settled[0]?.status, 'fulfilled', 'the run under way ended');
  for (const refused of settled.slice(1))
    t.match(refused, {
      status: 'rejected',
      reason: { code: 'SERVICE_UNAVAILABLE', message: /the server is shutting down/ },
    });
});

import t from 'tap';
import { threadId } from 'node:worker_threads';
import { RecomputePool } from '../../../src/services/flows/recompute-pool.ts';
import { DomainError } from '../../../src/platform/errors.ts';
import { workerModule } from '../../../src/platform/worker-pool.ts';
import { recompute } from '../../../src/engine/recompute.ts';
import type { RecomputeInput } from '../../../src/engine/recompute.ts';
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
  const pooled = await pool.run(sent);
  t.not(pooled.threadId, threadId, 'computed on a worker thread');
  t.equal(pool.stats().completed, 1);
  t.equal(sent.from.length, 0, 'input buffers were transferred, not copied');
  t.equal(pooled.finish, local.finish);
  for (const key of ['order', 'status', 'es', 'ef', 'slack', 'critical', 'counts'] as const) {
    t.ok(sameBytes(pooled[key], local[key]), `${key} identical`);
  }
});

t.test('refuses work beyond maxInFlight instead of queueing it', async (t) => {
  const pool = new RecomputePool({ threads: 1, timeoutMs: 20_000, maxInFlight: 1 });
  t.teardown(() => pool.close());
  const first = pool.run(randomDag(2000));
  t.equal(pool.stats().inFlight, 1);
  await t.rejects(pool.run(randomDag(10)), {
    name: 'DomainError',
    code: 'SERVICE_UNAVAILABLE',
    hints: { retryAfterSeconds: 1 },
  });
  const done = await first;
  t.equal(done.order.length, 2000, 'the admitted run still completes');
  t.equal(pool.stats().inFlight, 0);
  const again = await pool.run(randomDag(10));
  t.equal(again.order.length, 10, 'capacity is released afterwards');
});

t.test('a run past its timeout answers SERVICE_UNAVAILABLE', async (t) => {
  const pool = new RecomputePool({ threads: 1, timeoutMs: 1, maxInFlight: 2 });
  t.teardown(() => pool.close());
  const err = await pool.run({ ...randomDag(50_000), withCounts: true }).catch((e: unknown) => e);
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
  t.equal((await pool.run(randomDag(10))).order.length, 10);
});

t.test(
  'the timeout counts from when a worker begins a run, not while the run waits for one',
  async (t) => {
    // One cold thread; each run of 19 tasks takes 1.5 s, so the third waits 3 s (and the first
    // waits for the thread to start) before it begins: past the timeout, were that counted from the call.
    const pool = new RecomputePool({ threads: 1, timeoutMs: 3000, maxInFlight: 4, worker: FAULTY });
    t.teardown(() => pool.close());
    const runs = await Promise.allSettled([1, 2, 3].map(() => pool.run(randomDag(19))));
    t.strictSame(
      runs.map((r) => r.status),
      ['fulfilled', 'fulfilled', 'fulfilled'],
      'all three ran to the end',
    );
    t.equal(pool.stats().failed, 0);
  },
);

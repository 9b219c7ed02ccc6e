/**
 * Worker pool faults, through HTTP: a recompute whose worker dies, or runs past the timeout,
 * answers 503 SERVICE_UNAVAILABLE with Retry-After and changes nothing; the pool replaces the
 * worker and the very next request succeeds (the timeout counts from when a worker begins the
 * run, not while the replacement starts); the event loop keeps answering meanwhile, and its
 * lag and the failures are on /metrics.
 */
import t from 'tap';
import { workerModule } from '../../../src/platform/worker-pool.ts';
import { assertError, startTestServer } from '../../helpers/server.ts';
import type { FlowList } from '../../helpers/wire.ts';

const FAULTY = workerModule('../../helpers/faulty-recompute.worker.ts', import.meta.url);
const tasks = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `T${i}` }));
/** Counted from the moment a worker begins a run, so a replacement's start-up is not charged to it. */
const TIMEOUT_MS = 3000;

t.test(
  'a crashed or stuck recompute worker: 503, nothing changed, replaced, next request fine',
  async (t) => {
    // Flows from 10 tasks up are recomputed on the pool; the faulty worker fails on 13 and 17.
    const s = await startTestServer(
      t,
      { offloadTasks: 10, workers: 1 },
      {},
      { recomputeWorker: { url: FAULTY, timeoutMs: TIMEOUT_MS }, coldRecomputePool: false },
    );
    const create = (name: string, n: number) =>
      s.api('POST', '/v1/flows', { token: s.adminKey, body: { name, tasks: tasks(n) } });
    const flowNames = async () =>
      (
        (await s.api<FlowList>('GET', '/v1/flows', { token: s.adminKey })).body.items as {
          name: string;
        }[]
      )
        .map((f) => f.name)
        .sort();

    t.match(await s.metrics(), /^flowplan_pool_threads 1$/m, 'the worker was started at boot');
    t.equal((await create('Warm-up', 12)).status, 201, 'the pool runs a flow of 12');

    const crashed = await create('Crash', 13);
    assertError(t, crashed, 503, 'SERVICE_UNAVAILABLE', 'the worker died mid-run');
    t.equal(crashed.headers.get('retry-after'), '1');
    // Sent while the replacement may still be starting: its start-up is not charged to this run.
    t.equal((await create('After the crash', 12)).status, 201, 'a new worker took its place');

    const started = Date.now();
    let stuckAnswered = false;
    const stuck = create('Stuck', 17).finally(() => (stuckAnswered = true));
    // While a worker spins, the event loop still answers.
    const health = await s.api('GET', '/healthz');
    t.equal(health.status, 200);
    t.notOk(stuckAnswered, 'healthz answered while the recompute was stuck');
    const timedOut = await stuck;
    assertError(t, timedOut, 503, 'SERVICE_UNAVAILABLE', 'stopped at the timeout');
    t.ok(Date.now() - started >= TIMEOUT_MS, 'after the timeout, not before');
    t.equal((await create('After the timeout', 12)).status, 201, 'and replaced again');

    t.strictSame(
      await flowNames(),
      ['After the crash', 'After the timeout', 'Warm-up'],
      'only the flows answered 201 exist',
    );
    const metrics = await s.metrics();
    t.match(
      metrics,
      /^flowplan_pool_failed_runs 2$/m,
      'two failed runs: the crash and the timeout',
    );
    t.match(metrics, /flowplan_nodejs_eventloop_lag_seconds \d/, 'event-loop lag is measured');
    t.match(metrics, /flowplan_nodejs_eventloop_lag_p99_seconds \d/);
  },
);

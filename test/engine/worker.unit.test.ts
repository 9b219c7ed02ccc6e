/**
 * The recompute worker carries every array of a typed flow's input and output: its input moves to
 * the worker (transferred, not copied), its output comes back equal, byte for byte, to the
 * recompute of the same input in this thread.
 */
import t from 'tap';
import { threadId } from 'node:worker_threads';
import { Piscina } from 'piscina';
import { workerModule } from '../../src/platform/worker-pool.ts';
import {
  copyInput,
  inputArrays,
  recompute,
  type RecomputeInput,
  type RecomputeOutput,
} from '../../src/engine/recompute.ts';
import { flowInput } from './flow-arbitraries.ts';
import { rng } from './random-dag.ts';
import type { RefFlow } from './schedule-reference.ts';

const WORKER = workerModule('../../workers/recompute.worker.ts', import.meta.url);

/** A typed flow of `n` tasks: up to three links each to earlier tasks, every type, leads and lags. */
function typedFlow(n: number): RecomputeInput {
  const random = rng(11);
  const links: RefFlow['links'] = [];
  for (let v = 1; v < n; v++)
    for (let k = 0; k < 3; k++)
      links.push({
        from: Math.floor(random() * v),
        to: v,
        type: (['FS', 'SS', 'FF', 'SF'] as const)[Math.floor(random() * 4)] ?? 'FS',
        lag: Math.floor(random() * 7) - 3,
      });
  const each = <T>(f: () => T) => Array.from({ length: n }, f);
  return flowInput(
    {
      n,
      links,
      progress: each(() => (random() < 0.2 ? 2 : random() < 0.1 ? 1 : 0)),
      duration: each(() => Math.floor(random() * 5)),
      milestone: each(() => random() < 0.05),
      startNoEarlier: each(() => (random() < 0.05 ? Math.floor(random() * 50) : null)),
      finishNoLater: each(() => (random() < 0.05 ? Math.floor(random() * 80) : null)),
      inProgressAtZero: true,
    },
    true,
  );
}

const bytes = (a: ArrayBufferView) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

t.test('a typed flow through the worker equals the one in this thread', async (t) => {
  const pool = new Piscina<RecomputeInput, RecomputeOutput & { threadId: number }>({
    filename: WORKER.href,
    maxThreads: 1,
  });
  t.teardown(() => pool.close());
  const input = typedFlow(3000);
  const local = recompute(input);
  const sent = copyInput(input);
  t.equal(inputArrays(sent).length, 9, 'every array of the input, links and facts included');
  const originals = inputArrays(input);
  t.ok(
    inputArrays(sent).every((a, i) => {
      const original = originals[i];
      return original !== undefined && a !== original && bytes(a).equals(bytes(original));
    }),
    'copied, not shared',
  );
  const transferList = inputArrays(sent).map((a) => a.buffer as ArrayBuffer);
  const pooled = await pool.run(sent, { transferList });
  t.not(pooled.threadId, threadId, 'ran on a worker thread');
  t.ok(
    inputArrays(sent).every((a) => a.byteLength === 0),
    'the input moved to the worker',
  );
  const { threadId: _, passes, counts, ...rest } = pooled;
  for (const [key, value] of Object.entries(rest)) {
    const mine = local[key as keyof typeof rest];
    if (typeof value === 'number') t.equal(value, mine, key);
    else t.ok(bytes(value).equals(bytes(mine as ArrayBufferView)), `${key} identical`);
  }
  for (const key of ['start', 'end', 'tail', 'bound'] as const)
    t.ok(bytes(passes[key]).equals(bytes(local.passes[key])), `passes.${key} identical`);
  t.equal(passes.projectEnd, local.passes.projectEnd);
  t.ok(counts && local.counts && bytes(counts).equals(bytes(local.counts)), 'counts identical');
  t.equal(
    inputArrays({ ...input, linkType: undefined, lag: undefined }).length,
    7,
    'absent arrays are left out',
  );
});

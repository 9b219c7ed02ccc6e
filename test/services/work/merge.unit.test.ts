/** mergeFirst: the first `count` of a k-way merge equal the sorted concatenation's, ties kept in run order. */
import t from 'tap';
import fc from 'fast-check';
import assert from 'node:assert/strict';
import { mergeFirst } from '../../../src/services/work/merge.ts';

interface TestRun {
  readonly id: number;
  readonly items: readonly number[];
}

t.test('the first count of the merge equal a full sort cut at count', async (t) => {
  // Few distinct values, so runs tie often and the run order decides.
  const runs = fc
    .array(fc.array(fc.integer({ min: 0, max: 5 }), { maxLength: 12 }), { maxLength: 9 })
    .map((lists) =>
      lists.map((items, id): TestRun => ({ id, items: [...items].sort((a, b) => a - b) })),
    );
  fc.assert(
    fc.property(runs, fc.nat(60), (runs, count) => {
      const compare = (a: TestRun, x: number, b: TestRun, y: number) => x - y || a.id - b.id;
      const merged = mergeFirst(runs, count, compare).map(({ run, item }) => [run.id, item]);
      const sorted = runs
        .flatMap((run) => run.items.map((item) => [run.id, item]))
        .sort((a, b) => a[1]! - b[1]! || a[0]! - b[0]!);
      assert.deepEqual(merged, sorted.slice(0, count));
    }),
    { numRuns: 300 },
  );
  t.pass('merge matches the full sort');
});

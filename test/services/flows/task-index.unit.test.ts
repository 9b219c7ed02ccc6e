import t from 'tap';
import fc from 'fast-check';
import { AppendedIndex } from '../../../src/services/flows/task-index.ts';

t.test('an index grown by appends reads as one map of every id', async (t) => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 200 }),
      fc.array(fc.integer({ min: 1, max: 5 }), { maxLength: 40 }),
      (start, appends) => {
        const expected = new Map(Array.from({ length: start }, (_, i) => [`t${i}`, i]));
        let index: ReadonlyMap<string, number> = new Map(expected);
        for (const count of appends) {
          const from = expected.size;
          const ids = Array.from({ length: count }, (_, k) => `t${from + k}`);
          ids.forEach((id, k) => expected.set(id, from + k));
          index = AppendedIndex.of(index, ids, from);
        }
        const seen: [string, number][] = [];
        index.forEach((at, id, map) => {
          if (map !== index) throw new Error('forEach names another map');
          seen.push([id, at]);
        });
        const same =
          index.size === expected.size &&
          [...expected].every(([id, at]) => index.get(id) === at && index.has(id)) &&
          !index.has('nope') &&
          index.get('nope') === undefined &&
          JSON.stringify([...index]) === JSON.stringify([...expected]) &&
          JSON.stringify(seen) === JSON.stringify([...expected]) &&
          JSON.stringify([...index.keys()]) === JSON.stringify([...expected.keys()]) &&
          JSON.stringify([...index.values()]) === JSON.stringify([...expected.values()]);
        if (!same) throw new Error(`differs after ${appends.length} appends to ${start}`);
      },
    ),
    { numRuns: 300 },
  );
  t.pass('300 random sequences of appends');
});

t.test('a long chain of appends to a large index is flattened, not left deep', async (t) => {
  let index: ReadonlyMap<string, number> = new Map(
    Array.from({ length: 1000 }, (_, i) => [`t${i}`, i]),
  );
  for (let k = 0; k < 40; k++) index = AppendedIndex.of(index, [`n${k}`], 1000 + k);
  t.equal(index.get('n39'), 1039);
  t.equal(index.get('t0'), 0);
  t.equal(index.size, 1040);
});

t.test('an index tells whether it is another with tasks appended', async (t) => {
  const base: ReadonlyMap<string, number> = new Map(
    Array.from({ length: 1000 }, (_, i) => [`t${i}`, i]),
  );
  const once = AppendedIndex.of(base, ['a'], 1000);
  const twice = AppendedIndex.of(once, ['b'], 1001);
  t.ok(AppendedIndex.extends(base, base), 'itself');
  t.ok(AppendedIndex.extends(twice, base), 'through its chain');
  t.ok(AppendedIndex.extends(twice, once));
  t.notOk(AppendedIndex.extends(once, twice), 'not the other way');
  t.notOk(AppendedIndex.extends(new Map(base), base), 'a copy is another index');
  // Flattened (the chain was let go): not known to extend it, so callers compare task by task.
  let long: ReadonlyMap<string, number> = base;
  for (let k = 0; k < 40; k++) long = AppendedIndex.of(long, [`n${k}`], 1000 + k);
  t.notOk(AppendedIndex.extends(long, base));
});

/**
 * A command's next state (model.ts NextState): its task list is built when first read, as
 * withTasks builds it; spread, it is a plain state; and once built it lets go of the state it
 * came from, so no version holds the one before. Layered over the version before (LayeredState),
 * a run of versions reads by position what their built lists hold, and copies no list per version.
 */
import fc from 'fast-check';
import t from 'tap';
import {
  LayeredState,
  NextState,
  withTasks,
  type TaskRecord,
} from '../../../src/services/flows/model.ts';
import type { FlowRecord, FlowState } from '../../../src/storage/flows.store.ts';
import { taskRecord as task } from '../../helpers/task-record.ts';

const flow = { id: 'flw_1', version: 7, updatedAt: '2026-01-01T00:00:00.000Z' } as FlowRecord;

/** A state that counts how often its list is read. */
function counted(tasks: TaskRecord[]) {
  let reads = 0;
  const state: FlowState = {
    flow,
    get tasks() {
      reads++;
      return tasks;
    },
  };
  const before = { state, flow, index: new Map(tasks.map((x, i) => [x.id, i])) };
  return { before, reads: () => reads };
}

t.test('the list is built once, when read, as withTasks builds it', async (t) => {
  const tasks = [task('a', 1), task('b', 2), task('c', 3)];
  const { before, reads } = counted(tasks);
  const changes = { replace: [{ ...task('b', 2), name: 'B' }], add: [task('d', 4)] };
  const next = new NextState(before, changes);
  t.equal(reads(), 0, 'nothing read on making it');
  t.equal(next.flow.version, 8, 'the flow at its next version');
  t.equal(next.changesAfter(before), changes, 'the changes, while the list is unbuilt');
  t.equal(next.changesAfter({ ...before }), null, 'after another state: none');
  const expected = withTasks(before.state, changes, before.index);
  t.same(next.tasks, expected);
  t.equal(next.tasks, next.tasks, 'built once');
  t.equal(reads(), 2, 'the state read once, by this build (and once by the expected one)');
  t.equal(next.changesAfter(before), null, 'built, it no longer names the state it came from');
});

t.test('spread, it is a plain state with its list', async (t) => {
  const { before } = counted([task('a', 1)]);
  const next = new NextState(before, { add: [task('b', 2)] });
  const plain = { ...next, flow: { ...next.flow, version: 9 } };
  t.same(Object.keys(plain).sort(), ['flow', 'tasks']);
  t.same(
    plain.tasks.map((x) => x.id),
    ['a', 'b'],
  );
  t.equal(plain.flow.version, 9);
});

t.test('a removal takes the general path', async (t) => {
  const { before } = counted([task('a', 1), task('b', 2), task('c', 3)]);
  const next = new NextState(before, { remove: new Set(['b']) });
  t.same(
    next.tasks.map((x) => x.id),
    ['a', 'c'],
  );
});

t.test('layered versions read what their lists hold, and copy none per version', async (t) => {
  // Each step: replace a task (by its place in the current list), append one, or read the list whole.
  const step = fc.oneof(
    fc.record({ replace: fc.nat() }),
    fc.record({ add: fc.constant(true) }),
    fc.record({ read: fc.constant(true) }),
  );
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 40 }), fc.array(step, { maxLength: 700 }), (n, steps) => {
      const first = Array.from({ length: n }, (_, i) => task(`t${i}`, i));
      const root = counted(first);
      let before = root.before;
      let expected: readonly TaskRecord[] = first;
      let made = 0;
      for (const s of steps) {
        if ('read' in s) {
          if (before.state.tasks !== before.state.tasks) throw new Error('a list built twice');
          continue;
        }
        let changes;
        if ('replace' in s) {
          const old = expected[s.replace % expected.length]!;
          changes = { replace: [{ ...old, name: `${old.name}'` }] };
        } else changes = { add: [task(`n${made++}`, expected.length)] };
        const next = LayeredState.after(before, new NextState(before, changes));
        if (!next) throw new Error('a change that removes nothing is layered');
        expected = withTasks({ flow, tasks: expected }, changes);
        if (next.size !== expected.length) throw new Error('size');
        for (let i = 0; i < expected.length; i++)
          if (next.at(i) !== expected[i]) throw new Error(`position ${i}`);
        const index = new Map(expected.map((x, i) => [x.id, i]));
        before = { state: next, flow: next.flow, index };
      }
      if (!steps.some((s) => 'read' in s)) {
        // Never read whole: the first version's list was read once, when the first layer was made.
        if (root.reads() > 1) throw new Error(`the first list read ${root.reads()} times`);
      }
      t.same(before.state.tasks, expected);
    }),
    { numRuns: 60 },
  );
});

t.test('a removal is not layered', async (t) => {
  const { before } = counted([task('a', 1), task('b', 2)]);
  t.equal(LayeredState.after(before, new NextState(before, { remove: new Set(['a']) })), null);
  t.equal(LayeredState.after(before, { flow, tasks: [] }), null, 'nor a state not made from it');
});

/**
 * A command's next state (model.ts NextState): its task list is built when first read, as
 * withTasks builds it; spread, it is a plain state; and once built it lets go of the state it
 * came from, so no version holds the one before.
 */
import t from 'tap';
import { NextState, withTasks, type TaskRecord } from '../../../src/services/flows/model.ts';
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

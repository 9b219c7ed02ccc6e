/**
 * A draft's state (draft.ts DraftState): a version derived from it reads its tasks by position
 * through the draft, as from the plain list of the same changes; its list, once read, is that
 * list; spread or cloned, it carries it.
 */
import t from 'tap';
import { recompute } from '../../../src/engine/recompute.ts';
import { Draft, DraftState } from '../../../src/services/flows/draft.ts';
import { PROGRESS, withTasks } from '../../../src/services/flows/model.ts';
import { Snapshot } from '../../../src/services/flows/snapshot.ts';
import type { FlowRecord } from '../../../src/storage/flows.store.ts';
import { taskRecord as task } from '../../helpers/task-record.ts';

const engine = Object.assign(async (input: Parameters<typeof recompute>[0]) => recompute(input), {
  incremental: <T>(derive: () => T): T => derive(),
});
const flow = { id: 'flw_1', version: 3, dueDate: null } as FlowRecord;

t.test('a version derived from a draft reads as one derived from the plain list', async (t) => {
  const tasks = Array.from({ length: 30 }, (_, i) =>
    task(`t${i}`, i, { dependsOn: i > 0 ? [`t${Math.floor(i / 2)}`] : [] }),
  );
  const current = await Snapshot.derive({ flow, tasks }, engine, '');
  const changes = {
    replace: [
      { ...task('t3', 3, { dependsOn: ['t1'] }), estimateHours: 40 },
      { ...task('t7', 7, { dependsOn: ['t3'] }), progress: PROGRESS.started },
    ],
    add: [task('n1', 30, { dependsOn: ['t20'] }), task('n2', 31, { dependsOn: ['n1', 't4'] })],
  };
  const drafted = Draft.after(current, current.next(changes), 4);
  if (!drafted) throw new Error('the changes make a draft');
  const { draft } = drafted;
  let built = 0;
  const whole = draft.list.bind(draft);
  draft.list = () => (built++, whole());
  const state = draft.state;
  t.type(state, DraftState);
  const list = withTasks(current.state, changes, current.index);
  const scenario = await Snapshot.derive(state, engine, '', current, draft.replacedPositions());
  const plain = await Snapshot.derive({ flow: state.flow, tasks: list }, engine, '', current);
  t.equal(scenario.size, list.length);
  t.ok(
    list.every((record, i) => scenario.at(i) === record),
    'each position holds the same record',
  );
  for (const field of ['status', 'critical', 'es', 'ef', 'slack'] as const)
    t.strictSame([...scenario[field]], [...plain[field]], field);
  t.equal(scenario.finish, plain.finish);
  t.equal(built, 0, 'derived and read by position, the list is not built');
  t.strictSame(state.tasks, list, 'read whole, the list of the same changes');
  t.equal(state.tasks, state.tasks);
  t.equal(built, 1, 'built once');
  t.ok(
    list.every((record, i) => scenario.at(i) === record),
    'and read from it after',
  );
  t.strictSame({ ...state }.tasks, list, 'spread, it carries the list');
  t.strictSame(structuredClone(state).tasks, list, 'cloned too');
});

/**
 * A flow's session, once evicted, is memory given back: nothing else keeps its tasks. The first
 * call of each postgres.js query used to keep them: the library keeps an Error per query for its
 * errors' origin, and an Error not yet formatted holds its frames' closures, so the flow's
 * creation (whose transaction's callback holds its tasks) stayed in memory for the life of the
 * process (patches/postgres+3.4.9.patch, cachedError). Without that patch this test fails.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import t from 'tap';
import { newFlow, startFlowServer } from '../../helpers/flows.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

t.test('an evicted flow leaves nothing of its tasks in memory', async (t) => {
  // One hot flow at a time: making the second evicts the first.
  const s = await startFlowServer(t, { flowSessionsMax: 1 });
  const { registry } = s.app.services;
  const first = await newFlow(t, s, {
    name: 'First',
    tasks: [{ name: 'a' }, { name: 'b', after: [0] }],
  });
  const held = new WeakRef((await registry.snapshot(s.workspaceId, first.id)).state.tasks[0]!);
  await newFlow(t, s, { name: 'Second', tasks: [{ name: 'c' }] });
  t.equal(registry.size, 1, 'the first flow was evicted');

  // A collection may need the current macrotask done (what its promises still hold).
  for (let turn = 0; turn < 5 && held.deref() !== undefined; turn++) {
    await new Promise(setImmediate);
    gc();
  }
  t.equal(held.deref(), undefined, "the evicted flow's tasks were collected");
  // Loaded again from Postgres, it is whole.
  const again = await s.api<{ tasks: { name: string }[] }>('GET', `/v1/flows/${first.id}`, {
    token: s.adminKey,
  });
  t.same(
    again.body.tasks.map((task) => task.name),
    ['a', 'b'],
    'read again, the flow is loaded whole from Postgres',
  );
});

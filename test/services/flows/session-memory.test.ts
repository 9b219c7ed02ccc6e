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
  // In a function of its own, so no variable of this test holds the task.
  const held = await (async () => {
    const [task] = (await registry.snapshot(s.workspaceId, first.id)).state.tasks;
    if (!task) throw new Error('the flow has no tasks');
    return new WeakRef(task);
  })();
  await newFlow(t, s, { name: 'Second', tasks: [{ name: 'c' }] });
  t.equal(registry.size, 1, 'the first flow was evicted');

  // What a request still under way holds (its promises, a socket's buffers) is let go once it
  // ends: collect until the task is gone, for 10 s at most.
  for (const deadline = Date.now() + 10_000; held.deref() !== undefined && Date.now() < deadline;) {
    await new Promise((resolve) => setTimeout(resolve, 10));
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

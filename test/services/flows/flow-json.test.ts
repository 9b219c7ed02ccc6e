/**
 * The Flow body is assembled from per-task fragments reused across versions: after any
 * sequence of changes its bytes equal a fresh JSON.stringify of the summary and every
 * taskView (and the blocking counts, carried across versions, a full count), and a change
 * re-serializes only the tasks it changed. Each version's change marks (task-changes.ts) name
 * exactly the tasks whose Task differs from the version before's. Then the same through
 * HTTP: random commands on one process (whose transitions are derived incrementally), every
 * body, schedule and report equal to what a second process derives and serializes from
 * scratch after loading the flow from Postgres.
 */
import t from 'tap';
import fc from 'fast-check';
import { startApp } from '../../../src/compose.ts';
import { loadConfig } from '../../../src/platform/config.ts';
import { recompute } from '../../../src/engine/recompute.ts';
import {
  nextFlow,
  PROGRESS,
  withTasks,
  type FlowState,
  type Progress,
  type TaskRecord,
} from '../../../src/services/flows/model.ts';
import { flowJsonStats } from '../../../src/services/flows/flow-body.ts';
import { Snapshot } from '../../../src/services/flows/snapshot.ts';
import { newFlow, ok, startFlowServer } from '../../helpers/flows.ts';
import { request, until } from '../../helpers/server.ts';
import { rng } from '../../engine/random-dag.ts';
import type { Task } from '../../helpers/wire.ts';
import { taskRecord as task } from '../../helpers/task-record.ts';

const engine = Object.assign(async (input: Parameters<typeof recompute>[0]) => recompute(input), {
  incremental: <T>(derive: () => T): T => derive(),
});
const fresh = (s: Snapshot) =>
  JSON.stringify({ ...s.summary(), tasks: s.state.tasks.map((task) => s.taskView(task.id)) });

type Step =
  | { kind: 'progress'; pick: number; to: Progress }
  | { kind: 'rename' | 'assign' | 'estimate' | 'remove' | 'flow'; pick: number }
  | { kind: 'add' | 'subtask'; pick: number; deps: number[] }
  | { kind: 'depend' | 'undepend'; pick: number; other: number };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    kind: fc.constant('progress' as const),
    pick: fc.nat(),
    to: fc.constantFrom<Progress>(PROGRESS.open, PROGRESS.started, PROGRESS.done),
  }),
  fc.record({
    kind: fc.constantFrom(
      'rename' as const,
      'assign' as const,
      'estimate' as const,
      'remove' as const,
      'flow' as const,
    ),
    pick: fc.nat(),
  }),
  fc.record({
    kind: fc.constantFrom('add' as const, 'subtask' as const),
    pick: fc.nat(),
    deps: fc.array(fc.nat(), { maxLength: 3 }),
  }),
  fc.record({
    kind: fc.constantFrom('depend' as const, 'undepend' as const),
    pick: fc.nat(),
    other: fc.nat(),
  }),
);

/** One change, made the way commands make them: changed tasks get new records, the rest stay. */
function apply(state: FlowState, step: Step, serial: number): FlowState {
  const objectives = state.tasks.filter((x) => x.parentId === null);
  const flow = nextFlow(state.flow, step.kind === 'flow' ? { name: `Flow ${serial}` } : {});
  if (step.kind === 'flow') return { flow, tasks: [...state.tasks] };
  const position = Math.max(0, ...state.tasks.map((x) => x.position)) + 1;
  if (step.kind === 'add' || objectives.length === 0) {
    const deps =
      step.kind === 'add'
        ? [
            ...new Set(
              step.deps.flatMap((d) =>
                objectives.length ? [objectives[d % objectives.length]!.id] : [],
              ),
            ),
          ]
        : [];
    return {
      flow,
      tasks: withTasks(state, { add: [task(`t${serial}`, position, { dependsOn: deps })] }),
    };
  }
  const picked = state.tasks[step.pick % state.tasks.length]!;
  const objective = objectives[step.pick % objectives.length]!;
  const replace = (x: TaskRecord, patch: Partial<TaskRecord>) => ({
    flow,
    tasks: withTasks(state, {
      replace: [
        {
          ...x,
          ...patch,
          updatedAt: `2026-01-02T00:00:${String(serial % 60).padStart(2, '0')}.000Z`,
        },
      ],
    }),
  });
  switch (step.kind) {
    case 'progress':
      return replace(picked, { progress: step.to });
    case 'rename':
      return replace(picked, { name: `${picked.name}é🚀` });
    case 'assign':
      return replace(picked, { assigneeId: picked.assigneeId ? null : 'usr_ada' });
    case 'estimate':
      return replace(picked, { estimateHours: (picked.estimateHours ?? 0) + 8 });
    case 'subtask':
      return {
        flow,
        tasks: withTasks(state, {
          add: [task(`t${serial}`, position, { parentId: objective.id })],
        }),
      };
    case 'remove': {
      // Its sub-tasks go with it, and every dependency on it.
      const gone = new Set([
        picked.id,
        ...state.tasks.filter((x) => x.parentId === picked.id).map((x) => x.id),
      ]);
      const replaceDeps = state.tasks
        .filter((x) => !gone.has(x.id) && x.dependsOn.some((d) => gone.has(d)))
        .map((x) => ({ ...x, dependsOn: x.dependsOn.filter((d) => !gone.has(d)) }));
      return { flow, tasks: withTasks(state, { replace: replaceDeps, remove: gone }) };
    }
    case 'depend':
    case 'undepend': {
      // Only from an earlier objective to a later one: the graph stays acyclic.
      const other = objectives[step.other % objectives.length]!;
      if (other.position >= objective.position) return { flow, tasks: [...state.tasks] };
      const dependsOn =
        step.kind === 'depend'
          ? [...new Set([...objective.dependsOn, other.id])]
          : objective.dependsOn.filter((d) => d !== other.id);
      return replace(objective, { dependsOn });
    }
  }
}

t.test(
  'fragments reused across random changes give the bytes of a fresh serialization',
  async (t) => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(stepArb, fc.boolean()), { minLength: 1, maxLength: 40 }),
        async (steps) => {
          const at = '2026-01-01T00:00:00.000Z';
          let state: FlowState = {
            flow: {
              id: 'flw_1',
              workspaceId: 'wsp_1',
              name: 'Flow',
              description: null,
              dueDate: null,
              archived: false,
              publicToken: null,
              version: 1,
              createdAt: at,
              updatedAt: at,
            },
            tasks: [
              task('a', 1),
              task('b', 2),
              task('c', 3, { dependsOn: ['a', 'b'] }),
              task('d', 4, { dependsOn: ['c'] }),
              task('e', 5, { dependsOn: ['a'] }),
              task('f', 6, { dependsOn: ['d', 'e', 'b'] }),
              task('s', 7, { parentId: 'c' }),
            ],
          };
          let snapshot = await Snapshot.derive(state, engine, 'http://x');
          snapshot.flowJson();
          for (const [[step, read], serial] of steps.map((s, i) => [s, i] as const)) {
            state = apply(state, step, serial);
            snapshot = await Snapshot.derive(state, engine, 'http://x', snapshot);
            // Versions nobody read are skipped: the next one reuses the last fragments made (and counts).
            if (read) {
              t.equal(snapshot.flowJson().toString(), fresh(snapshot));
              const full = recompute({ ...snapshot.input, withCounts: true }).counts!;
              if ((await snapshot.blocking()).some((c, i) => c !== full[i]))
                t.fail(`blocking counts at version ${snapshot.version}`);
            }
          }
          t.equal(snapshot.flowJson().toString(), fresh(snapshot));
        },
      ),
      { numRuns: 200 },
    );
  },
);

t.test(
  "change marks: a task is marked at a version exactly when its Task differs from the version before's",
  async (t) => {
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 1, maxLength: 40 }), async (steps) => {
        let state: FlowState = {
          flow: {
            id: 'flw_1',
            workspaceId: 'wsp_1',
            name: 'Flow',
            description: null,
            dueDate: null,
            archived: false,
            publicToken: null,
            version: 1,
            createdAt: '2026-01-01T00:00:00.000Z',
            updatedAt: '2026-01-01T00:00:00.000Z',
          },
          tasks: [
            task('a', 1),
            task('b', 2),
            task('c', 3, { dependsOn: ['a', 'b'] }),
            task('d', 4, { dependsOn: ['c'] }),
            task('e', 5, { dependsOn: ['a'] }),
            task('s', 6, { parentId: 'c' }),
          ],
        };
        let snapshot = await Snapshot.derive(state, engine, 'http://x');
        t.strictSame([...new Set(snapshot.changedAt)], [1], 'loaded: all marked at its version');
        for (const [step, serial] of steps.map((s, i) => [s, i] as const)) {
          state = apply(state, step, serial);
          const previous = snapshot;
          snapshot = await Snapshot.derive(state, engine, 'http://x', previous);
          t.equal(snapshot.knownSince, 1);
          for (const [i, { id }] of snapshot.state.tasks.entries()) {
            const was = previous.task(id) ? JSON.stringify(previous.taskView(id)) : null;
            const moved = was !== JSON.stringify(snapshot.taskView(id));
            const expected = moved
              ? snapshot.version
              : previous.changedAt[previous.index.get(id) ?? -1];
            if (snapshot.changedAt[i] !== expected)
              t.fail(
                `${id} at version ${snapshot.version}: ${snapshot.changedAt[i]}, not ${expected}`,
              );
          }
        }
      }),
      { numRuns: 200 },
    );
  },
);

t.test('a dependency done shortens the blockedBy of a task still blocked by another', async (t) => {
  const at = '2026-01-01T00:00:00.000Z';
  const tasks = [task('a', 1), task('b', 2), task('c', 3, { dependsOn: ['a', 'b'] })];
  let state: FlowState = {
    flow: {
      id: 'flw_1',
      workspaceId: 'wsp_1',
      name: 'Two',
      description: null,
      dueDate: null,
      archived: false,
      publicToken: null,
      version: 1,
      createdAt: at,
      updatedAt: at,
    },
    tasks,
  };
  let snapshot = await Snapshot.derive(state, engine, 'http://x');
  t.match(JSON.parse(snapshot.flowJson().toString()).tasks[2], { status: 'blocked' });
  t.strictSame(
    JSON.parse(snapshot.flowJson().toString()).tasks[2].blockedBy,
    ['a', 'b'],
    'blocked by a and b',
  );
  state = {
    flow: nextFlow(state.flow),
    tasks: withTasks(state, { replace: [{ ...tasks[0]!, progress: PROGRESS.done }] }),
  };
  snapshot = await Snapshot.derive(state, engine, 'http://x', snapshot);
  t.match(JSON.parse(snapshot.flowJson().toString()).tasks[2], { status: 'blocked' });
  t.strictSame(
    JSON.parse(snapshot.flowJson().toString()).tasks[2].blockedBy,
    ['b'],
    'blocked by b alone once a is done',
  );
});

t.test('a transition re-serializes the tasks it changed, not the flow', async (t) => {
  const at = '2026-01-01T00:00:00.000Z';
  const tasks = Array.from({ length: 1000 }, (_, i) =>
    task(`t${i}`, i + 1, { dependsOn: i > 0 ? [`t${i - 1}`] : [] }),
  );
  let state: FlowState = {
    flow: {
      id: 'flw_1',
      workspaceId: 'wsp_1',
      name: 'Chain',
      description: null,
      dueDate: null,
      archived: false,
      publicToken: null,
      version: 1,
      createdAt: at,
      updatedAt: at,
    },
    tasks,
  };
  let snapshot = await Snapshot.derive(state, engine, 'http://x');
  const whole = snapshot.flowJson().length;
  // Completing the head of a chain: it becomes done and the next one ready; the rest keep their fragments.
  const before = flowJsonStats.taskBytes;
  state = {
    flow: nextFlow(state.flow),
    tasks: withTasks(state, { replace: [{ ...tasks[0]!, progress: PROGRESS.done }] }),
  };
  snapshot = await Snapshot.derive(state, engine, 'http://x', snapshot);
  t.equal(snapshot.flowJson().toString(), fresh(snapshot));
  const reserialized = flowJsonStats.taskBytes - before;
  t.ok(
    reserialized > 0 && reserialized < whole / 100,
    `${reserialized} of ${whole} bytes serialized again`,
  );
});

t.test(
  'through HTTP: every body after random commands equals a fresh one from another process',
  async (t) => {
    const s = await startFlowServer(t);
    const b = await startApp(
      loadConfig(
        { LOG_LEVEL: 'silent' },
        {
          port: 0,
          databaseUrl: s.databaseUrl,
          rateLimitPerMinute: 1_000_000,
          rateLimitBurst: 1_000_000,
        },
      ),
    );
    t.teardown(() => b.close());
    const flow = await newFlow(t, s, {
      name: 'Random',
      tasks: Array.from({ length: 12 }, (_, i) => ({
        name: `T${i}`,
        after: i > 1 ? [i - 1, i - 2] : [],
      })),
    });
    const path = `/v1/flows/${flow.id}`;
    const random = rng(7);
    const ids: string[] = flow.tasks.map((x: { id: string }) => x.id);
    for (let step = 0; step < 60; step++) {
      const id = ids[Math.floor(random() * ids.length)]!;
      const r = random();
      const command =
        r < 0.25
          ? ['POST', `${path}/tasks/${id}/start`]
          : r < 0.5
            ? ['POST', `${path}/tasks/${id}/complete`]
            : r < 0.6
              ? ['POST', `${path}/tasks/${id}/reopen`]
              : r < 0.7
                ? ['PATCH', `${path}/tasks/${id}`, { estimateHours: 1 + Math.floor(random() * 40) }]
                : r < 0.8
                  ? ['POST', `${path}/tasks`, { name: `N${step}`, after: [id] }]
                  : r < 0.9
                    ? ['POST', `${path}/tasks`, { name: `S${step}`, parentId: id }]
                    : ['PATCH', path, { name: `Random ${step}` }];
      // Only a created task's answer is read (its id and parentId).
      const res = await s.api<Partial<Task>>(command[0] as string, command[1] as string, {
        token: s.adminKey,
        body: command[2],
      });
      // Refusals (starting a blocked task, a sub-task of a sub-task…) change nothing; fine too.
      if (res.status === 201 && res.body.id?.startsWith('tsk_') && !res.body.parentId)
        ids.push(res.body.id);
      const here = await s.api('GET', path, { token: s.adminKey });
      // The other process hears of the commit by NOTIFY: asked until it serves the same version.
      const there = await until(
        () => request(b.url, 'GET', path, { token: s.adminKey }),
        (x) => x.headers.get('etag') === here.headers.get('etag'),
      );
      t.equal(here.text, there.text, `step ${step}: ${command[0]} ${command[1]}`);
      // Dates, slack and the projected finish: derived incrementally here, from scratch there.
      for (const derived of ['schedule', 'report']) {
        const mine = await s.api('GET', `${path}/${derived}`, { token: s.adminKey });
        const theirs = await request(b.url, 'GET', `${path}/${derived}`, { token: s.adminKey });
        t.equal(mine.text, theirs.text, `step ${step}: the ${derived}`);
      }
    }
    await ok(t, s, 'GET', path);
  },
);

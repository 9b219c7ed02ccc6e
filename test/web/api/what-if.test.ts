import t from 'tap';
import fc from 'fast-check';
import { PROGRESS } from '../../../src/engine/status.ts';
import { createKey } from '../../../src/services/auth/provision.ts';
import { loadFlowState } from '../../../src/storage/flows.store.ts';
import { assertError, type ApiResponse, type TestServer } from '../../helpers/server.ts';
import {
  assertUnchanged,
  idsByName,
  taskIdOf,
  member,
  newFlow,
  ok,
  startFlowServer,
  visible,
} from '../../helpers/flows.ts';
import type {
  BatchResult,
  Command,
  EventPage,
  Flow,
  Refusal,
  Schedule,
  WhatIf,
} from '../../helpers/wire.ts';

const whatIf = (s: TestServer, flowId: string, body: unknown, token = s.adminKey) =>
  s.api<WhatIf & Refusal>('POST', `/v1/flows/${flowId}/what-if`, { token, body });

const START = '2030-01-07'; // a Monday

t.test(
  'if Build slips 3 days and Docs is dropped, when do we land? Nothing committed',
  async (t) => {
    const s = await startFlowServer(t);
    const flow = await newFlow(t, s, {
      name: 'Launch',
      dueDate: '2030-01-16',
      tasks: [
        { name: 'Design', estimateHours: 16 },
        { name: 'Build', estimateHours: 40, after: [0] },
        { name: 'Docs', estimateHours: 8, after: [0] },
        { name: 'Release', estimateHours: 8, after: [1, 2] },
      ],
    });
    const id = taskIdOf(flow);
    const before = await visible(s, [flow.id]);
    const feed = (await s.api<EventPage>('GET', '/v1/events', { token: s.adminKey })).body.next;
    const res = await whatIf(s, flow.id, {
      startDate: START,
      commands: [
        { op: 'updateTask', taskId: id('Build'), estimateHours: 64 },
        { op: 'deleteTask', taskId: id('Docs') },
      ],
    });
    t.equal(res.status, 200, res.text);
    t.strictSame(res.body, {
      version: 1,
      // Design 2 days, Build 5, Release 1: Mon 7 → Wed 16.
      current: {
        projectedFinish: '2030-01-16',
        onTrack: true,
        criticalPath: [id('Design'), id('Build'), id('Release')],
      },
      // Build takes 8 days: Release lands on Mon 21, past the due date.
      scenario: {
        projectedFinish: '2030-01-21',
        onTrack: false,
        criticalPath: [id('Design'), id('Build'), id('Release')],
      },
      finishDeltaDays: 3,
      changed: [
        {
          taskId: id('Build'),
          before: {
            status: 'blocked',
            earliestStart: '2030-01-09',
            earliestFinish: '2030-01-15',
            critical: true,
          },
          after: {
            status: 'blocked',
            earliestStart: '2030-01-09',
            earliestFinish: '2030-01-18',
            critical: true,
          },
        },
        {
          taskId: id('Release'),
          before: {
            status: 'blocked',
            earliestStart: '2030-01-16',
            earliestFinish: '2030-01-16',
            critical: true,
          },
          after: {
            status: 'blocked',
            earliestStart: '2030-01-21',
            earliestFinish: '2030-01-21',
            critical: true,
          },
        },
        {
          taskId: id('Docs'),
          before: {
            status: 'blocked',
            earliestStart: '2030-01-09',
            earliestFinish: '2030-01-09',
            critical: false,
          },
        },
      ],
    });
    await assertUnchanged(t, s, before, 'a what-if');
    const events = await s.api<EventPage>('GET', `/v1/events?after=${feed}`, {
      token: s.adminKey,
    });
    t.strictSame(events.body.items, [], 'no event');
  },
);

t.test('a task the scenario makes carries its ref and no before', async (t) => {
  const s = await startFlowServer(t);
  const flow = await newFlow(t, s, { name: 'Grow', tasks: [{ name: 'A', estimateHours: 8 }] });
  const id = taskIdOf(flow);
  const res = await whatIf(s, flow.id, {
    startDate: START,
    commands: [
      { op: 'createTask', ref: 'b', name: 'B', estimateHours: 16, after: [id('A')] },
      { op: 'start', taskId: id('A') },
    ],
  });
  t.equal(res.status, 200, res.text);
  const made = res.body.changed.find((c) => c.ref === 'b');
  t.match(made?.taskId, /^tsk_/);
  t.strictSame(made, {
    taskId: made?.taskId,
    ref: 'b',
    after: {
      status: 'blocked',
      earliestStart: '2030-01-08',
      earliestFinish: '2030-01-09',
      critical: true,
    },
  });
  t.equal(res.body.finishDeltaDays, 2);
  const flowAfter = await ok<Flow>(t, s, 'GET', `/v1/flows/${flow.id}`);
  t.equal(flowAfter.tasks.length, 1, 'nothing made');
});

t.test('a viewer may ask; a refusal is the route’s own, with its index', async (t) => {
  const s = await startFlowServer(t);
  const flow = await newFlow(t, s, {
    name: 'Read',
    tasks: [{ name: 'A' }, { name: 'B', after: [0] }],
  });
  const id = taskIdOf(flow);
  const { key: viewer } = await createKey(s.sql, {
    workspaceId: s.workspaceId,
    role: 'viewer',
    scopes: ['flows:read'],
  });
  const asked = await whatIf(s, flow.id, { commands: [{ op: 'start', taskId: id('A') }] }, viewer);
  t.equal(asked.status, 200, 'flows:read and a viewer suffice');
  const blocked = await whatIf(
    s,
    flow.id,
    {
      commands: [
        { op: 'start', taskId: id('A') },
        { op: 'start', taskId: id('B') },
      ],
    },
    viewer,
  );
  assertError(t, blocked, 409, 'TASK_BLOCKED');
  t.strictSame(blocked.body.error.details, { blockedBy: [id('A')], index: 1 });
  const { key: writer } = await createKey(s.sql, {
    workspaceId: s.workspaceId,
    role: 'admin',
    scopes: ['flows:write'],
  });
  assertError(
    t,
    await whatIf(s, flow.id, { commands: [{ op: 'start', taskId: id('A') }] }, writer),
    403,
    'INSUFFICIENT_SCOPE',
  );
  const late = await whatIf(s, flow.id, {
    startDate: '9999-12-30',
    commands: [{ op: 'createTask', name: 'Long', estimateHours: 800, after: [id('B')] }],
  });
  assertError(t, late, 400, 'VALIDATION_FAILED', 'a scenario past the last day');
  t.equal(late.body.error.details.errors[0]?.pointer, '/startDate');
});

/*
 * Correct by construction: two identical flows; a random list is asked as a what-if of one and
 * sent as a batch to the other. Both refuse alike (and the batch leaves no trace), or the
 * what-if's scenario is what the other flow shows afterwards, task by task.
 */
type Sym =
  | { op: 'createTask'; name: string; after: string[]; parent: string | null; hours: number | null }
  | { op: 'updateTask'; task: string; hours: number | null }
  | { op: 'deleteTask' | 'start' | 'complete' | 'reopen'; task: string }
  | { op: 'addDependency' | 'removeDependency'; task: string; on: string }
  | { op: 'assign'; task: string; person: boolean };

interface Seen {
  status: string;
  earliestStart: string | null;
  earliestFinish: string | null;
  critical: boolean;
}

/** Each task's outlook by name, as the flow and its schedule show it. */
async function shown(s: TestServer, flowId: string): Promise<Map<string, Seen>> {
  const flow = await s.api<Flow>('GET', `/v1/flows/${flowId}`, { token: s.adminKey });
  const schedule = await s.api<Schedule>('GET', `/v1/flows/${flowId}/schedule?startDate=${START}`, {
    token: s.adminKey,
  });
  const entries = new Map(schedule.body.entries.map((e) => [e.taskId, e]));
  return new Map(
    flow.body.tasks.map((task) => {
      const entry = entries.get(task.id);
      return [
        task.name,
        {
          status: task.status,
          earliestStart: entry?.earliestStart ?? null,
          earliestFinish: entry?.earliestFinish ?? null,
          critical: task.criticalPath,
        },
      ];
    }),
  );
}

t.test('what-if’s scenario is what a batch of the same list leaves', async (t) => {
  const s = await startFlowServer(t);
  const alice = await member(s, 'Alice');
  const taskArb = fc.record({
    hours: fc.option(fc.integer({ min: 1, max: 40 })),
    after: fc.uniqueArray(fc.nat(6), { maxLength: 3 }),
    progress: fc.constantFrom('open', 'open', 'started', 'done'),
  });
  const name = fc.constantFrom('T0', 'T1', 'T2', 'T3', 'T4', 'T5', 'T6', 'N0', 'N1', 'N2');
  const symArb: fc.Arbitrary<Sym> = fc.oneof(
    fc.record({
      op: fc.constant('createTask' as const),
      name: fc.constant(''),
      after: fc.uniqueArray(name, { maxLength: 2 }),
      parent: fc.option(name, { freq: 4 }),
      hours: fc.option(fc.integer({ min: 1, max: 40 })),
    }),
    fc.record({
      op: fc.constant('updateTask' as const),
      task: name,
      hours: fc.option(fc.integer({ min: 1, max: 80 })),
    }),
    fc.record({
      op: fc.constantFrom(
        'deleteTask' as const,
        'start' as const,
        'complete' as const,
        'reopen' as const,
      ),
      task: name,
    }),
    fc.record({
      op: fc.constantFrom('addDependency' as const, 'removeDependency' as const),
      task: name,
      on: name,
    }),
    fc.record({ op: fc.constant('assign' as const), task: name, person: fc.boolean() }),
  );
  let runs = 0;
  let refusedRuns = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.array(taskArb, { minLength: 1, maxLength: 7 }),
      fc.array(symArb, { minLength: 1, maxLength: 8 }),
      fc.option(fc.constantFrom('2030-01-10', '2030-01-20', '2030-02-15')),
      async (tasks, syms, dueDate) => {
        runs++;
        const body = {
          name: `Copy ${runs}`,
          ...(dueDate && { dueDate }),
          tasks: tasks.map((task, i) => ({
            name: `T${i}`,
            ...(task.hours !== null && { estimateHours: task.hours }),
            after: task.after.filter((k) => k < i),
          })),
        };
        const asked = await newFlow(t, s, body);
        const sent = await newFlow(t, s, body);
        // The same progress on both: done needs started, and both need their dependencies done.
        for (const flow of [asked, sent]) {
          const id = taskIdOf(flow);
          const moves: Command[] = [];
          tasks.forEach((task, i) => {
            if (task.progress === 'open') return;
            if (body.tasks[i]?.after.some((k) => tasks[k]?.progress !== 'done')) return;
            moves.push({ op: 'start', taskId: id(`T${i}`) });
            if (task.progress === 'done') moves.push({ op: 'complete', taskId: id(`T${i}`) });
          });
          // Done in task order, so each one's dependencies are done before it starts.
          if (moves.length > 0)
            await ok(t, s, 'POST', `/v1/flows/${flow.id}/batch`, { commands: moves });
        }
        const commandsFor = (flow: Flow): Command[] => {
          const id = idsByName(flow);
          const made = new Set<string>();
          const ref = (n: string) => (made.has(n) ? `$${n}` : (id[n] ?? `tsk_gone_${n}`));
          return syms.map((sym, k): Command => {
            switch (sym.op) {
              case 'createTask': {
                const newName = `N${made.size}`;
                const command: Command = {
                  op: 'createTask',
                  ref: newName,
                  name: newName,
                  ...(sym.hours !== null && { estimateHours: sym.hours }),
                  ...(sym.parent !== null
                    ? { parentId: ref(sym.parent) }
                    : sym.after.length > 0 && { after: sym.after.map(ref) }),
                };
                made.add(newName);
                return command;
              }
              case 'updateTask':
                return { op: 'updateTask', taskId: ref(sym.task), estimateHours: sym.hours };
              case 'addDependency':
              case 'removeDependency':
                return { op: sym.op, taskId: ref(sym.task), dependsOnId: ref(sym.on) };
              case 'assign':
                return {
                  op: 'assign',
                  taskId: ref(sym.task),
                  assigneeId: sym.person ? alice : null,
                };
              default:
                void k;
                return { op: sym.op, taskId: ref(sym.task) };
            }
          });
        };
        const current = await shown(s, asked.id);
        const askedBefore = await visible(s, [asked.id]);
        const scenario = await whatIf(s, asked.id, {
          startDate: START,
          commands: commandsFor(asked),
        });
        await assertUnchanged(t, s, askedBefore, 'a what-if commits nothing');
        const sentBefore = await visible(s, [sent.id]);
        const batch: ApiResponse<BatchResult & Refusal> = await s.api(
          'POST',
          `/v1/flows/${sent.id}/batch`,
          {
            token: s.adminKey,
            body: { commands: commandsFor(sent) },
          },
        );
        if (scenario.status !== 200) {
          refusedRuns++;
          t.equal(batch.status, scenario.status, `both refuse: ${scenario.text}`);
          t.equal(batch.body.error?.code, scenario.body.error.code);
          t.equal(batch.body.error?.details.index, scenario.body.error.details.index);
          await assertUnchanged(t, s, sentBefore, 'a refused batch leaves no trace');
          return;
        }
        t.equal(batch.status, 200, `the batch is taken as the what-if was: ${batch.text}`);
        // What the what-if says, by name: the current flow, with what it lists as changed.
        const names = new Map(asked.tasks.map((task) => [task.id, task.name]));
        for (const [k, command] of commandsFor(asked).entries())
          if (command.op === 'createTask')
            names.set(
              scenario.body.changed.find((c) => c.ref === command.ref)?.taskId ?? `gone ${k}`,
              command.name,
            );
        const expected = new Map(current);
        for (const change of scenario.body.changed) {
          const taskName = names.get(change.taskId) ?? '';
          t.ok(taskName, `a listed task is known: ${change.taskId}`);
          if (change.after) expected.set(taskName, change.after);
          else expected.delete(taskName);
          if (change.before)
            t.strictSame(change.before, current.get(taskName), `before of ${taskName}`);
        }
        const after = await shown(s, sent.id);
        // What the batch stored is what the session shows: read back from Postgres.
        const stored = await loadFlowState(s.sql, s.workspaceId, sent.id);
        const held = await ok<Flow>(t, s, 'GET', `/v1/flows/${sent.id}`);
        const facts = (task: {
          id: string;
          name: string;
          parentId: string | null;
          dependsOn: readonly string[];
          estimateHours: number | null;
          assigneeId: string | null;
        }) => ({
          id: task.id,
          name: task.name,
          parentId: task.parentId,
          dependsOn: [...task.dependsOn].sort(),
          estimateHours: task.estimateHours,
          assigneeId: task.assigneeId,
        });
        t.strictSame(
          stored?.tasks.map((task) => ({ ...facts(task), progress: task.progress })),
          held.tasks.map((task) => ({
            ...facts(task),
            progress:
              task.status === 'done'
                ? PROGRESS.done
                : task.status === 'in_progress'
                  ? PROGRESS.started
                  : PROGRESS.open,
          })),
          'stored as shown',
        );
        t.strictSame(
          Object.fromEntries(after),
          Object.fromEntries(expected),
          'the scenario, task by task',
        );
        const schedule = await ok<Schedule>(
          t,
          s,
          'GET',
          `/v1/flows/${sent.id}/schedule?startDate=${START}`,
        );
        t.equal(scenario.body.scenario.projectedFinish, schedule.projectedFinish);
        t.equal(scenario.body.scenario.onTrack, schedule.onTrack);
        t.strictSame(
          scenario.body.scenario.criticalPath.map((x) => names.get(x)).sort(),
          schedule.entries
            .filter((e) => e.criticalPath)
            .map((e) => e.taskName)
            .sort(),
        );
        const version = (sentBefore.flows[sent.id]?.body as Flow).version;
        t.ok([version, version + 1].includes(batch.body.version), 'one version step at most');
        t.equal((await ok<Flow>(t, s, 'GET', `/v1/flows/${sent.id}`)).version, batch.body.version);
      },
    ),
    { numRuns: 40, seed: 20261126 },
  );
  t.ok(
    refusedRuns > 0 && refusedRuns < runs,
    `both kinds were tried (${refusedRuns} of ${runs} refused)`,
  );
});

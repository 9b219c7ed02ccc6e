import t from 'tap';
import fc from 'fast-check';
import { commandsFor as listFor, flowArb, seededFlow, symsArb } from '../../helpers/commands.ts';
import { PROGRESS } from '../../../src/engine/status.ts';
import { createKey } from '../../../src/services/auth/provision.ts';
import { loadFlowState } from '../../../src/storage/flows.store.ts';
import { assertError, type ApiResponse, type TestServer } from '../../helpers/server.ts';
import {
  assertUnchanged,
  taskIdOf,
  member,
  newFlow,
  ok,
  startFlowServer,
  visible,
} from '../../helpers/flows.ts';
import type {
  BatchResult,
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

/*
 * In this thread, and on the pool's commands lane (every list sent there: `commandsOffloadWork`
 * 0), where a worker derives the flow afresh and runs the same list, and the batch's changes
 * come back to be committed: the same answers, refusals included.
 */
for (const [where, offload] of [
  ['in this thread', {}],
  ['on the commands lane', { commandsOffloadWork: 0 }],
] as const)
  t.test(`what-if’s scenario is what a batch of the same list leaves, ${where}`, async (t) => {
    const s = await startFlowServer(t, offload);
    const alice = await member(s, 'Alice');
    let runs = 0;
    let refusedRuns = 0;
    await fc.assert(
      fc.asyncProperty(flowArb, symsArb, async (seed, syms) => {
        runs++;
        const asked = await seededFlow(t, s, seed, `Copy ${runs}`);
        const sent = await seededFlow(t, s, seed, `Copy ${runs}`);
        const commandsFor = (flow: Flow) => listFor(syms, flow, alice);
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
      }),
      { numRuns: 60, seed: 20261126 },
    );
    t.ok(
      refusedRuns > 0 && refusedRuns < runs,
      `both kinds were tried (${refusedRuns} of ${runs} refused)`,
    );
  });

t.test('none and one: an empty flow, and a flow with no dependencies', async (t) => {
  const s = await startFlowServer(t);
  const empty = await newFlow(t, s, { name: 'Empty' });
  const nothing = await whatIf(s, empty.id, {
    startDate: START,
    commands: [{ op: 'createTask', ref: 'first', name: 'First', estimateHours: 8 }],
  });
  t.equal(nothing.status, 200, nothing.text);
  t.strictSame(nothing.body.current, { projectedFinish: null, onTrack: null, criticalPath: [] });
  t.equal(nothing.body.scenario.projectedFinish, START);
  t.equal(nothing.body.finishDeltaDays, null, 'nothing open now: no delta');
  t.equal(nothing.body.changed.length, 1);
  t.equal(nothing.body.changed[0]?.ref, 'first');
  const flat = await newFlow(t, s, {
    name: 'Flat',
    tasks: [
      { name: 'A', estimateHours: 8 },
      { name: 'B', estimateHours: 16 },
    ],
  });
  const id = taskIdOf(flat);
  const res = await whatIf(s, flat.id, {
    startDate: START,
    commands: [{ op: 'updateTask', taskId: id('A'), estimateHours: 40 }],
  });
  t.equal(res.status, 200, res.text);
  t.equal(res.body.current.projectedFinish, '2030-01-08');
  t.equal(res.body.scenario.projectedFinish, '2030-01-11');
  t.equal(res.body.finishDeltaDays, 3);
  t.strictSame(res.body.scenario.criticalPath, [id('A')]);
  const sent = await s.api<BatchResult>('POST', `/v1/flows/${empty.id}/batch`, {
    token: s.adminKey,
    body: { commands: [{ op: 'createTask', name: 'First' }] },
  });
  t.equal(sent.status, 200);
  t.equal(sent.body.version, 2);
});

/**
 * Random command lists for the plan tests (batch, what-if): a small flow with some work under
 * way, and commands over its tasks by name, made into a list for one flow's ids. Named
 * symbolically so that the same list can be sent to two copies of a flow.
 */
import fc from 'fast-check';
import type { Test } from 'tap';
import { idsByName, newFlow, ok, taskIdOf } from './flows.ts';
import type { TestServer } from './server.ts';
import type { Command, Flow } from './wire.ts';

/** A task by its place among the flow's tasks and those the list made so far (modulo their number). */
type Pick = number;

export type Sym =
  | { op: 'createTask'; after: Pick[]; parent: Pick | null; hours: number | null }
  | { op: 'updateTask'; task: Pick; hours: number | null }
  | { op: 'deleteTask' | 'start' | 'complete' | 'reopen'; task: Pick }
  | { op: 'addDependency' | 'removeDependency'; task: Pick; on: Pick }
  | { op: 'assign'; task: Pick; person: boolean };

const taskArb = fc.record({
  hours: fc.option(fc.integer({ min: 1, max: 40 })),
  after: fc.uniqueArray(fc.nat(6), { maxLength: 3 }),
  progress: fc.constantFrom('open', 'open', 'started', 'done'),
});

export interface FlowSeed {
  tasks: { hours: number | null; after: number[]; progress: string }[];
  dueDate: string | null;
}

/** Up to 7 tasks T0…, each after some earlier ones, some started or done. */
export const flowArb = fc.record({
  tasks: fc.array(taskArb, { minLength: 1, maxLength: 7 }),
  dueDate: fc.option(fc.constantFrom('2030-01-10', '2030-01-20', '2030-02-15')),
});

const name = fc.nat(20);

/** Commands over the flow's tasks and those the list makes (N0…), valid or not (a start of blocked work, a cycle…). */
export const symsArb: fc.Arbitrary<Sym[]> = fc.array(
  // Weighted to what is mostly taken, so that a fair share of lists is taken whole.
  fc.oneof(
    {
      weight: 3,
      arbitrary: fc.record({
        op: fc.constant('createTask' as const),
        after: fc.uniqueArray(name, { maxLength: 2 }),
        parent: fc.option(name, { freq: 4 }),
        hours: fc.option(fc.integer({ min: 1, max: 40 })),
      }),
    },
    {
      weight: 3,
      arbitrary: fc.record({
        op: fc.constant('updateTask' as const),
        task: name,
        hours: fc.option(fc.integer({ min: 1, max: 80 })),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        op: fc.constant('assign' as const),
        task: name,
        person: fc.boolean(),
      }),
    },
    {
      weight: 3,
      arbitrary: fc.record({
        op: fc.constantFrom(
          'deleteTask' as const,
          'start' as const,
          'complete' as const,
          'reopen' as const,
        ),
        task: name,
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        op: fc.constantFrom('addDependency' as const, 'removeDependency' as const),
        task: name,
        on: name,
      }),
    },
  ),
  { minLength: 1, maxLength: 6 },
);

/** The flow `seed` describes, with its work under way (started and done where its dependencies allow). */
export async function seededFlow(
  t: Test,
  s: TestServer,
  seed: FlowSeed,
  flowName: string,
): Promise<Flow> {
  const body = {
    name: flowName,
    ...(seed.dueDate && { dueDate: seed.dueDate }),
    tasks: seed.tasks.map((task, i) => ({
      name: `T${i}`,
      ...(task.hours !== null && { estimateHours: task.hours }),
      after: task.after.filter((k) => k < i),
    })),
  };
  const flow = await newFlow(t, s, body);
  const id = taskIdOf(flow);
  const moves: Command[] = [];
  seed.tasks.forEach((task, i) => {
    if (task.progress === 'open') return;
    if (body.tasks[i]?.after.some((k) => seed.tasks[k]?.progress !== 'done')) return;
    moves.push({ op: 'start', taskId: id(`T${i}`) });
    if (task.progress === 'done') moves.push({ op: 'complete', taskId: id(`T${i}`) });
  });
  // In task order, so each one's dependencies are done before it starts.
  if (moves.length > 0) await ok(t, s, 'POST', `/v1/flows/${flow.id}/batch`, { commands: moves });
  return flow;
}

/** The list for this flow's ids: a task the list makes is named N0, N1… and referred to as "$N0". */
export function commandsFor(syms: readonly Sym[], flow: Flow, person: string): Command[] {
  const id = idsByName(flow);
  const names = flow.tasks.map((task) => task.name);
  const made = new Set<string>();
  const ref = (k: Pick) => {
    const n = [...names, ...made][k % (names.length + made.size)] ?? '';
    return made.has(n) ? `$${n}` : (id[n] ?? '');
  };
  return syms.map((sym): Command => {
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
        return { op: 'assign', taskId: ref(sym.task), assigneeId: sym.person ? person : null };
      default:
        return { op: sym.op, taskId: ref(sym.task) };
    }
  });
}

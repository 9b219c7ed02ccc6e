/**
 * Ranged estimates (CONTRACT §5, issue 33 item 1): taken on create, PATCH, commands and the
 * single-call flow create; refused outside `0 ≤ low ≤ estimateHours ≤ high` with nothing
 * written; shown on Task, sub-tasks, the public JSON and page (with the p80 date beside the
 * projected finish) and the PDF's schedule page.
 */
import t from 'tap';
import { assertError } from '../../helpers/server.ts';
import {
  assertUnchanged,
  member,
  newFlow,
  ok,
  startFlowServer,
  taskIdOf,
  visible,
} from '../../helpers/flows.ts';
import type { BatchResult, FlowSummary, Task } from '../../helpers/wire.ts';
import { decodePdf } from '../../services/exports/decode.ts';
import { pathOf } from '../public/helpers.ts';

t.test('a range is kept, changed and cleared through every way a task is written', async (t) => {
  const s = await startFlowServer(t);
  const flow = await newFlow(t, s, {
    name: 'Ranges',
    tasks: [
      { name: 'Design', estimateHours: 16, estimateRange: { low: 8, high: 40 } },
      { name: 'Build', estimateHours: 40, after: [0] },
    ],
  });
  const id = taskIdOf(flow);
  t.strictSame(
    flow.tasks.map((task) => task.estimateRange),
    [{ low: 8, high: 40 }, null],
    'the single-call create keeps it; a task without one shows null',
  );
  const created = await ok<Task>(
    t,
    s,
    'POST',
    `/v1/flows/${flow.id}/tasks`,
    {
      name: 'Docs',
      estimateHours: 8,
      estimateRange: { low: 8, high: 8 },
      after: [id('Design')],
    },
    201,
  );
  t.strictSame(created.estimateRange, { low: 8, high: 8 }, 'a range of one point is a range');

  const path = `/v1/flows/${flow.id}/tasks/${id('Build')}`;
  const ranged = await ok<Task>(t, s, 'PATCH', path, { estimateRange: { low: 24, high: 80 } });
  t.strictSame(ranged.estimateRange, { low: 24, high: 80 });
  const moved = await ok<Task>(t, s, 'PATCH', path, { estimateHours: 60 });
  t.strictSame(moved.estimateRange, { low: 24, high: 80 }, 'an estimate inside it keeps it');
  const cleared = await ok<Task>(t, s, 'PATCH', path, { estimateRange: null });
  t.equal(cleared.estimateRange, null, 'null clears it');

  // A sub-task's range shows on its objective's Task.
  const sub = await ok<Task>(
    t,
    s,
    'POST',
    `/v1/flows/${flow.id}/tasks`,
    {
      name: 'Sketch',
      parentId: id('Design'),
      estimateHours: 4,
      estimateRange: { low: 2, high: 10 },
    },
    201,
  );
  const design = await ok<Task>(t, s, 'GET', `/v1/flows/${flow.id}/tasks/${id('Design')}`);
  t.strictSame(
    design.subtasks.map((task) => [task.id, task.estimateRange]),
    [[sub.id, { low: 2, high: 10 }]],
  );

  // Commands take it as their routes do.
  const batch = await ok<BatchResult>(t, s, 'POST', `/v1/flows/${flow.id}/batch`, {
    commands: [
      {
        op: 'createTask',
        ref: 'qa',
        name: 'QA',
        estimateHours: 12,
        estimateRange: { low: 6, high: 30 },
      },
      { op: 'updateTask', taskId: id('Build'), estimateRange: { low: 50, high: 90 } },
    ],
  });
  const after = await ok<{ tasks: Task[] }>(t, s, 'GET', `/v1/flows/${flow.id}`);
  const byId = new Map(after.tasks.map((task) => [task.id, task]));
  t.strictSame(byId.get(batch.results[0]?.taskId ?? '')?.estimateRange, { low: 6, high: 30 });
  t.strictSame(byId.get(id('Build'))?.estimateRange, { low: 50, high: 90 });
  t.equal(after.tasks.length, 5);
});

t.test(
  'a range that does not hold its estimate is refused where it was given, and changes nothing',
  async (t) => {
    const s = await startFlowServer(t);
    const flow = await newFlow(t, s, {
      name: 'Refusals',
      tasks: [{ name: 'Build', estimateHours: 40, estimateRange: { low: 24, high: 80 } }],
    });
    const id = taskIdOf(flow);
    const before = await visible(s, [flow.id]);
    const refused = async (method: string, path: string, body: unknown, pointer: string) => {
      const res = await s.api<{ error: { details: { errors: { pointer: string }[] } } }>(
        method,
        path,
        { token: s.adminKey, body },
      );
      assertError(t, res, 400, 'VALIDATION_FAILED', `${method} ${JSON.stringify(body)}`);
      t.equal(res.body.error.details.errors[0]?.pointer, pointer, `at ${pointer}`);
    };
    const tasks = `/v1/flows/${flow.id}/tasks`;
    const build = `${tasks}/${id('Build')}`;
    await refused(
      'POST',
      tasks,
      { name: 'X', estimateHours: 4, estimateRange: { low: 5, high: 9 } },
      '/estimateRange',
    );
    await refused(
      'POST',
      tasks,
      { name: 'X', estimateHours: 10, estimateRange: { low: 5, high: 9 } },
      '/estimateRange',
    );
    await refused(
      'POST',
      tasks,
      { name: 'X', estimateRange: { low: 5, high: 9 } },
      '/estimateRange',
    );
    await refused(
      'POST',
      tasks,
      { name: 'X', estimateHours: 4, estimateRange: { low: -1, high: 9 } },
      '/estimateRange/low',
    );
    await refused(
      'POST',
      tasks,
      { name: 'X', estimateHours: 4, estimateRange: { low: 1 } },
      '/estimateRange/high',
    );
    await refused(
      'POST',
      tasks,
      { name: 'X', estimateHours: 4, estimateRange: { low: 1, high: 9, mode: 4 } },
      '/estimateRange/mode',
    );
    await refused('PATCH', build, { estimateHours: 100 }, '/estimateHours');
    await refused('PATCH', build, { estimateHours: null }, '/estimateHours');
    await refused('PATCH', build, { estimateRange: { low: 41, high: 90 } }, '/estimateRange');
    await refused(
      'POST',
      '/v1/flows',
      {
        name: 'F',
        tasks: [{ name: 'A' }, { name: 'B', estimateHours: 2, estimateRange: { low: 3, high: 4 } }],
      },
      '/tasks/1/estimateRange',
    );
    const batch = await s.api<{ error: { details: { index: number } } }>(
      'POST',
      `/v1/flows/${flow.id}/batch`,
      {
        token: s.adminKey,
        body: {
          commands: [
            { op: 'updateTask', taskId: id('Build'), estimateHours: 30 },
            { op: 'updateTask', taskId: id('Build'), estimateHours: 81 },
          ],
        },
      },
    );
    assertError(t, batch, 400, 'VALIDATION_FAILED');
    t.equal(batch.body.error.details.index, 1, 'the command that broke it');
    await assertUnchanged(t, s, before, 'refused ranges');
  },
);

t.test(
  'the public JSON and page show ranges and the p80 date, never people; the PDF shows both',
  async (t) => {
    const s = await startFlowServer(t);
    const person = await member(s, 'Ada Lovelace');
    const flow = await newFlow(t, s, {
      name: 'Sure',
      dueDate: '2031-12-31',
      tasks: [
        {
          name: 'Design',
          estimateHours: 16,
          estimateRange: { low: 8, high: 60 },
          assigneeId: person,
        },
        { name: 'Build', estimateHours: 40, estimateRange: { low: 30, high: 160 }, after: [0] },
        { name: 'Plain', estimateHours: 8 },
      ],
    });
    const path = pathOf(
      (await ok<FlowSummary>(t, s, 'POST', `/v1/flows/${flow.id}/publish`)).publicUrl,
    );
    const json = await s.api<{
      projectedFinish: string;
      finishP80: string | null;
      tasks: { name: string; estimateRange: { low: number; high: number } | null }[];
    }>('GET', `${path}.json`);
    t.equal(json.status, 200);
    t.strictSame(
      json.body.tasks.map((task) => [task.name, task.estimateRange]),
      [
        ['Design', { low: 8, high: 60 }],
        ['Build', { low: 30, high: 160 }],
        ['Plain', null],
      ],
    );
    t.notMatch(json.text, person, 'no assignee');
    // The p80 date is a forecast's: seed 0 and 2,000 samples, the same as the API gives.
    const today = new Date().toISOString().slice(0, 10);
    const forecast = await ok<{ startDate: string; finish: { p80: string } }>(
      t,
      s,
      'GET',
      `/v1/flows/${flow.id}/forecast?samples=2000&seed=0`,
    );
    t.ok(forecast.startDate >= today, 'scheduled from today');
    t.equal(json.body.finishP80, forecast.finish.p80, 'the p80 date of seed 0');
    t.ok(
      (json.body.finishP80 ?? '') > json.body.projectedFinish,
      'later than the CPM date: the ranges reach far',
    );
    const page = await s.api('GET', path);
    t.match(page.text, `80% sure by</dt><dd>${forecast.finish.p80}`);
    t.match(page.text, '(8–60 h)', 'the task list shows the range');

    const res = await fetch(`${s.url}/v1/flows/${flow.id}/exports`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.adminKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ format: 'pdf' }),
    });
    t.equal(res.status, 200);
    const pdf = await decodePdf(Buffer.from(await res.arrayBuffer()));
    t.match(pdf.text, `80% sure by ${forecast.finish.p80}`, 'the PDF shows the p80 date');
    t.match(pdf.text, '16 h (8–60 h)', 'and each range on the schedule page');

    // Without ranges there is no p80 date: the projected finish is the one date.
    const plain = await newFlow(t, s, { name: 'Plain', tasks: [{ name: 'A', estimateHours: 8 }] });
    const plainPath = pathOf(
      (await ok<FlowSummary>(t, s, 'POST', `/v1/flows/${plain.id}/publish`)).publicUrl,
    );
    t.equal((await s.api<{ finishP80: null }>('GET', `${plainPath}.json`)).body.finishP80, null);
    t.notMatch((await s.api('GET', plainPath)).text, '80% sure');
  },
);

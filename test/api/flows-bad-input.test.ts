import t from 'tap';
import { createWorkspace } from '../../src/services/auth/provision.ts';
import { assertError } from '../helpers/server.ts';
import { assertUnchanged, idsByName, member, newFlow, ok, startFlowServer, visible } from '../helpers/flows.ts';

t.test('bad input is a clear 400 (or the specific code) and writes nothing', async (t) => {
  const s = await startFlowServer(t);
  const stranger = await member(s, 'Stranger', (await createWorkspace(s.sql, { name: 'Other' })).id);
  const flow = await newFlow(t, s, { name: 'Existing', tasks: [{ name: 'A' }, { name: 'B', after: [0] }] });
  const id = idsByName(flow);
  const sub = await ok(t, s, 'POST', `/v1/flows/${flow.id}/tasks`, { name: 'S', parentId: id.A }, 201);
  const before = await visible(s, [flow.id]);

  const flowCases: [string, unknown, string][] = [
    ['unknown task index in after', { name: 'x', tasks: [{ name: 'a' }, { name: 'b', after: [5] }] }, '/tasks/1/after/0'],
    ['a task after itself', { name: 'x', tasks: [{ name: 'a' }, { name: 'b', after: [1] }] }, '/tasks/1/after/0'],
    ['duplicate edges', { name: 'x', tasks: [{ name: 'a' }, { name: 'b', after: [0, 0] }] }, '/tasks/1/after'],
    ['negative after index', { name: 'x', tasks: [{ name: 'a', after: [-1] }] }, '/tasks/0/after/0'],
    ['fractional after index', { name: 'x', tasks: [{ name: 'a' }, { name: 'b', after: [0.5] }] }, '/tasks/1/after/0'],
    ['after as a string', { name: 'x', tasks: [{ name: 'a' }, { name: 'b', after: '0' }] }, '/tasks/1/after'],
    ['negative estimate', { name: 'x', tasks: [{ name: 'a', estimateHours: -1 }] }, '/tasks/0/estimateHours'],
    ['non-numeric estimate', { name: 'x', tasks: [{ name: 'a', estimateHours: '8' }] }, '/tasks/0/estimateHours'],
    ['20,000 tasks', { name: 'x', tasks: Array.from({ length: 20_000 }, (_, i) => ({ name: `t${i}` })) }, '/tasks'],
    ['a 1 MB name', { name: 'n'.repeat(1024 * 1024) }, '/name'],
    ['a 1 MB task name', { name: 'x', tasks: [{ name: 'n'.repeat(1024 * 1024) }] }, '/tasks/0/name'],
    ['unknown field', { name: 'x', color: 'red' }, '/color'],
    ['unknown task field', { name: 'x', tasks: [{ name: 'a', priority: 1 }] }, '/tasks/0/priority'],
    ['status is not settable', { name: 'x', tasks: [{ name: 'a', status: 'done' }] }, '/tasks/0/status'],
    ['missing name', { tasks: [] }, '/name'],
    ['blank name', { name: '  ' }, '/name'],
    ['name of the wrong type', { name: 5 }, '/name'],
    ['tasks of the wrong type', { name: 'x', tasks: {} }, '/tasks'],
    ['task without a name', { name: 'x', tasks: [{}] }, '/tasks/0/name'],
    ['a task that is not an object', { name: 'x', tasks: ['a'] }, '/tasks/0'],
    ['dueDate of the wrong type', { name: 'x', dueDate: 12 }, '/dueDate'],
    ['dueDate not a date', { name: 'x', dueDate: 'soon' }, '/dueDate'],
    ['assignee of another workspace', { name: 'x', tasks: [{ name: 'a', assigneeId: stranger }] }, '/tasks/0/assigneeId'],
    ['assignee id of the wrong form', { name: 'x', tasks: [{ name: 'a', assigneeId: 'bob' }] }, '/tasks/0/assigneeId'],
    ['a body that is an array', [{ name: 'x' }], ''],
  ];
  for (const [what, body, pointer] of flowCases) {
    const res = await s.api('POST', '/v1/flows', { token: s.adminKey, body });
    assertError(t, res, 400, 'VALIDATION_FAILED', what);
    const pointers = (res.body?.error?.details?.errors ?? []).map((e: { pointer: string }) => e.pointer);
    t.ok(pointers.includes(pointer), `${what}: pointer ${pointer} in ${JSON.stringify(pointers.slice(0, 3))}`);
    t.ok(res.text.length < 20_000, `${what}: the refusal is short`);
  }
  const notJson = await s.api('POST', '/v1/flows', { token: s.adminKey, raw: '{"name": ', headers: { 'content-type': 'application/json' } });
  assertError(t, notJson, 400, 'VALIDATION_FAILED', 'not JSON');
  t.equal(notJson.body.error.details.errors[0].pointer, '');
  assertError(t, await s.api('POST', '/v1/flows', { token: s.adminKey, raw: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } }), 415, 'UNSUPPORTED_MEDIA_TYPE');
  assertError(t, await s.api('POST', '/v1/flows', { token: s.adminKey }), 400, 'VALIDATION_FAILED', 'no body');
  const huge = await s.api('POST', '/v1/flows', { token: s.adminKey, body: { name: 'x', description: 'd'.repeat(5 * 1024 * 1024) } });
  assertError(t, huge, 413, 'PAYLOAD_TOO_LARGE');
  assertError(t, await s.api('POST', '/v1/flows', { token: s.adminKey, body: { name: 'x', tasks: [{ name: 'a', after: [1] }, { name: 'b', after: [0] }] } }), 400, 'CIRCULAR_DEPENDENCY');
  await assertUnchanged(t, s, before, 'refused flow creations');

  const base = `/v1/flows/${flow.id}/tasks`;
  const taskCases: [string, string, string, unknown, string][] = [
    ['unknown id in after', 'POST', base, { name: 'x', after: ['tsk_unknown'] }, '/after/0'],
    ['unknown id in before', 'POST', base, { name: 'x', before: ['tsk_unknown'] }, '/before/0'],
    ['duplicate after', 'POST', base, { name: 'x', after: [id.A, id.A] }, '/after'],
    ['after naming a sub-task', 'POST', base, { name: 'x', after: [sub.id] }, '/after/0'],
    ['parentId naming a sub-task', 'POST', base, { name: 'x', parentId: sub.id }, '/parentId'],
    ['negative estimate', 'POST', base, { name: 'x', estimateHours: -3 }, '/estimateHours'],
    ['non-numeric estimate', 'POST', base, { name: 'x', estimateHours: 'lots' }, '/estimateHours'],
    ['unknown field', 'POST', base, { name: 'x', status: 'done' }, '/status'],
    ['after of the wrong type', 'POST', base, { name: 'x', after: id.A }, '/after'],
    ['a 1 MB task name', 'POST', base, { name: 'n'.repeat(1024 * 1024) }, '/name'],
    ['unknown dependency id', 'POST', `${base}/${id.B}/dependencies`, { taskId: 'tsk_unknown' }, '/taskId'],
    ['dependency on itself', 'POST', `${base}/${id.B}/dependencies`, { taskId: id.B }, '/taskId'],
    ['duplicate dependency', 'POST', `${base}/${id.B}/dependencies`, { taskId: id.A }, '/taskId'],
    ['dependency on a sub-task', 'POST', `${base}/${id.B}/dependencies`, { taskId: sub.id }, '/taskId'],
    ['dependency id of the wrong type', 'POST', `${base}/${id.B}/dependencies`, { taskId: 7 }, '/taskId'],
    ['negative estimate on patch', 'PATCH', `${base}/${id.B}`, { estimateHours: -0.5 }, '/estimateHours'],
    ['estimate as text on patch', 'PATCH', `${base}/${id.B}`, { estimateHours: 'x' }, '/estimateHours'],
    ['status on patch', 'PATCH', `${base}/${id.B}`, { status: 'done' }, '/status'],
    ['dependsOn on patch', 'PATCH', `${base}/${id.B}`, { dependsOn: [] }, '/dependsOn'],
  ];
  for (const [what, method, path, body, pointer] of taskCases) {
    const res = await s.api(method, path, { token: s.adminKey, body });
    assertError(t, res, 400, 'VALIDATION_FAILED', what);
    const pointers = (res.body?.error?.details?.errors ?? []).map((e: { pointer: string }) => e.pointer);
    t.ok(pointers.includes(pointer), `${what}: pointer ${pointer} in ${JSON.stringify(pointers.slice(0, 3))}`);
  }
  assertError(t, await s.api('POST', `${base}/${id.A}/dependencies`, { token: s.adminKey, body: { taskId: id.B } }), 400, 'CIRCULAR_DEPENDENCY');
  await assertUnchanged(t, s, before, 'refused task changes');
});

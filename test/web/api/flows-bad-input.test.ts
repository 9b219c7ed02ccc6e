import t from 'tap';
import { createWorkspace } from '../../../src/services/auth/provision.ts';
import { assertError, item } from '../../helpers/server.ts';
import {
  assertUnchanged,
  idsByName,
  member,
  newFlow,
  ok,
  startFlowServer,
  visible,
} from '../../helpers/flows.ts';
import type { Brainstorm, Comment, Refusal, Task, TemplateList } from '../../helpers/wire.ts';

t.test('bad input is a clear 400 (or the specific code) and writes nothing', async (t) => {
  const s = await startFlowServer(t);
  const stranger = await member(
    s,
    'Stranger',
    (await createWorkspace(s.sql, { name: 'Other' })).id,
  );
  const flow = await newFlow(t, s, {
    name: 'Existing',
    tasks: [{ name: 'A' }, { name: 'B', after: [0] }],
  });
  const id = idsByName(flow);
  const sub = await ok<Task>(
    t,
    s,
    'POST',
    `/v1/flows/${flow.id}/tasks`,
    { name: 'S', parentId: id.A },
    201,
  );
  const before = await visible(s, [flow.id]);

  const flowCases: [string, unknown, string][] = [
    [
      'unknown task index in after',
      { name: 'x', tasks: [{ name: 'a' }, { name: 'b', after: [5] }] },
      '/tasks/1/after/0',
    ],
    [
      'a task after itself',
      { name: 'x', tasks: [{ name: 'a' }, { name: 'b', after: [1] }] },
      '/tasks/1/after/0',
    ],
    [
      'duplicate edges',
      { name: 'x', tasks: [{ name: 'a' }, { name: 'b', after: [0, 0] }] },
      '/tasks/1/after',
    ],
    [
      'negative after index',
      { name: 'x', tasks: [{ name: 'a', after: [-1] }] },
      '/tasks/0/after/0',
    ],
    [
      'fractional after index',
      { name: 'x', tasks: [{ name: 'a' }, { name: 'b', after: [0.5] }] },
      '/tasks/1/after/0',
    ],
    [
      'after as a string',
      { name: 'x', tasks: [{ name: 'a' }, { name: 'b', after: '0' }] },
      '/tasks/1/after',
    ],
    [
      'negative estimate',
      { name: 'x', tasks: [{ name: 'a', estimateHours: -1 }] },
      '/tasks/0/estimateHours',
    ],
    [
      'non-numeric estimate',
      { name: 'x', tasks: [{ name: 'a', estimateHours: '8' }] },
      '/tasks/0/estimateHours',
    ],
    [
      '20,000 tasks',
      { name: 'x', tasks: Array.from({ length: 20_000 }, (_, i) => ({ name: `t${i}` })) },
      '/tasks',
    ],
    ['a 1 MB name', { name: 'n'.repeat(1024 * 1024) }, '/name'],
    [
      'a 1 MB task name',
      { name: 'x', tasks: [{ name: 'n'.repeat(1024 * 1024) }] },
      '/tasks/0/name',
    ],
    ['unknown field', { name: 'x', color: 'red' }, '/color'],
    ['unknown task field', { name: 'x', tasks: [{ name: 'a', priority: 1 }] }, '/tasks/0/priority'],
    [
      'status is not settable',
      { name: 'x', tasks: [{ name: 'a', status: 'done' }] },
      '/tasks/0/status',
    ],
    ['missing name', { tasks: [] }, '/name'],
    ['blank name', { name: '  ' }, '/name'],
    ['name of the wrong type', { name: 5 }, '/name'],
    ['tasks of the wrong type', { name: 'x', tasks: {} }, '/tasks'],
    ['task without a name', { name: 'x', tasks: [{}] }, '/tasks/0/name'],
    ['a task that is not an object', { name: 'x', tasks: ['a'] }, '/tasks/0'],
    ['dueDate of the wrong type', { name: 'x', dueDate: 12 }, '/dueDate'],
    ['dueDate not a date', { name: 'x', dueDate: 'soon' }, '/dueDate'],
    [
      'assignee of another workspace',
      { name: 'x', tasks: [{ name: 'a', assigneeId: stranger }] },
      '/tasks/0/assigneeId',
    ],
    [
      'assignee id of the wrong form',
      { name: 'x', tasks: [{ name: 'a', assigneeId: 'bob' }] },
      '/tasks/0/assigneeId',
    ],
    ['a body that is an array', [{ name: 'x' }], ''],
  ];
  for (const [what, body, pointer] of flowCases) {
    const res = await s.api<Refusal>('POST', '/v1/flows', { token: s.adminKey, body });
    assertError(t, res, 400, 'VALIDATION_FAILED', what);
    const pointers = (res.body?.error?.details?.errors ?? []).map(
      (e: { pointer: string }) => e.pointer,
    );
    t.ok(
      pointers.includes(pointer),
      `${what}: pointer ${pointer} in ${JSON.stringify(pointers.slice(0, 3))}`,
    );
    t.ok(res.text.length < 20_000, `${what}: the refusal is short`);
  }
  const notJson = await s.api<Refusal>('POST', '/v1/flows', {
    token: s.adminKey,
    raw: '{"name": ',
    headers: { 'content-type': 'application/json' },
  });
  assertError(t, notJson, 400, 'VALIDATION_FAILED', 'not JSON');
  t.equal(notJson.body.error.details.errors[0].pointer, '');
  assertError(
    t,
    await s.api('POST', '/v1/flows', {
      token: s.adminKey,
      raw: 'name=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    }),
    415,
    'UNSUPPORTED_MEDIA_TYPE',
  );
  assertError(
    t,
    await s.api('POST', '/v1/flows', { token: s.adminKey }),
    400,
    'VALIDATION_FAILED',
    'no body',
  );
  const huge = await s.api('POST', '/v1/flows', {
    token: s.adminKey,
    body: { name: 'x', description: 'd'.repeat(5 * 1024 * 1024) },
  });
  assertError(t, huge, 413, 'PAYLOAD_TOO_LARGE');
  const cycle = await s.api<Refusal>('POST', '/v1/flows', {
    token: s.adminKey,
    body: {
      name: 'x',
      tasks: [
        { name: 'a', after: [1] },
        { name: 'b', after: [0] },
      ],
    },
  });
  assertError(t, cycle, 400, 'CIRCULAR_DEPENDENCY');
  t.match(
    cycle.body.error.message,
    /^These tasks wait on each other in a cycle: "[ab]" \(#[01]\) → "[ab]" \(#[01]\) → "[ab]" \(#[01]\)/,
    'a cycle names its tasks (issue 29, item 11)',
  );
  t.same(
    new Set(
      cycle.body.error.details.tasks.map(
        (m: { index: number; name: string }) => `${m.index}:${m.name}`,
      ),
    ),
    new Set(['0:a', '1:b']),
  );
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
    [
      'unknown dependency id',
      'POST',
      `${base}/${id.B}/dependencies`,
      { taskId: 'tsk_unknown' },
      '/taskId',
    ],
    ['dependency on itself', 'POST', `${base}/${id.B}/dependencies`, { taskId: id.B }, '/taskId'],
    ['duplicate dependency', 'POST', `${base}/${id.B}/dependencies`, { taskId: id.A }, '/taskId'],
    [
      'dependency on a sub-task',
      'POST',
      `${base}/${id.B}/dependencies`,
      { taskId: sub.id },
      '/taskId',
    ],
    [
      'dependency id of the wrong type',
      'POST',
      `${base}/${id.B}/dependencies`,
      { taskId: 7 },
      '/taskId',
    ],
    [
      'negative estimate on patch',
      'PATCH',
      `${base}/${id.B}`,
      { estimateHours: -0.5 },
      '/estimateHours',
    ],
    [
      'estimate as text on patch',
      'PATCH',
      `${base}/${id.B}`,
      { estimateHours: 'x' },
      '/estimateHours',
    ],
    ['status on patch', 'PATCH', `${base}/${id.B}`, { status: 'done' }, '/status'],
    ['dependsOn on patch', 'PATCH', `${base}/${id.B}`, { dependsOn: [] }, '/dependsOn'],
  ];
  for (const [what, method, path, body, pointer] of taskCases) {
    const res = await s.api<Refusal>(method, path, { token: s.adminKey, body });
    assertError(t, res, 400, 'VALIDATION_FAILED', what);
    const pointers = (res.body?.error?.details?.errors ?? []).map(
      (e: { pointer: string }) => e.pointer,
    );
    t.ok(
      pointers.includes(pointer),
      `${what}: pointer ${pointer} in ${JSON.stringify(pointers.slice(0, 3))}`,
    );
  }
  assertError(
    t,
    await s.api('POST', `${base}/${id.A}/dependencies`, {
      token: s.adminKey,
      body: { taskId: id.B },
    }),
    400,
    'CIRCULAR_DEPENDENCY',
  );
  await assertUnchanged(t, s, before, 'refused task changes');
});

t.test(
  'a control character in a name or free text is a 400 with its pointer, in words, and writes nothing (issue 29, items 2 and 11)',
  async (t) => {
    const s = await startFlowServer(t);
    const flow = await newFlow(t, s, { name: 'Existing', tasks: [{ name: 'A' }] });
    const task = item(flow.tasks).id;
    const board = await ok<Brainstorm>(
      t,
      s,
      'POST',
      '/v1/brainstorms',
      { name: 'Board', ideas: [{ title: 'Idea' }] },
      201,
    );
    const idea = item((await ok<Brainstorm>(t, s, 'GET', `/v1/brainstorms/${board.id}`)).ideas).id;
    const template = item((await ok<TemplateList>(t, s, 'GET', '/v1/templates')).items).id;
    const before = await visible(s, [flow.id]);
    const boardBefore = await ok(t, s, 'GET', `/v1/brainstorms/${board.id}`);

    const oneLine =
      'must not contain control characters (U+0000–U+001F, U+007F–U+009F) or line separators (U+2028, U+2029)';
    const names: [string, string, string, unknown, string][] = [
      ['flow name with a newline', 'POST', '/v1/flows', { name: 'Launch\nplan' }, '/name'],
      ['flow name with a NUL', 'POST', '/v1/flows', { name: 'a\u0000b' }, '/name'],
      ['flow name with DEL', 'POST', '/v1/flows', { name: 'a\u007Fb' }, '/name'],
      [
        'task name with a tab',
        'POST',
        '/v1/flows',
        { name: 'x', tasks: [{ name: 'a\tb' }] },
        '/tasks/0/name',
      ],
      [
        'renamed flow with ESC',
        'PATCH',
        `/v1/flows/${flow.id}`,
        { name: '\u001B[31mred' },
        '/name',
      ],
      [
        'new task with a carriage return',
        'POST',
        `/v1/flows/${flow.id}/tasks`,
        { name: 'a\rb' },
        '/name',
      ],
      [
        'renamed task with a bell',
        'PATCH',
        `/v1/flows/${flow.id}/tasks/${task}`,
        { name: 'ding\u0007' },
        '/name',
      ],
      [
        'deliverable name',
        'POST',
        `/v1/flows/${flow.id}/tasks/${task}/deliverables`,
        { name: 'spec\n.pdf' },
        '/name',
      ],
      ['brainstorm name', 'POST', '/v1/brainstorms', { name: 'B\u0001' }, '/name'],
      ['renamed brainstorm', 'PATCH', `/v1/brainstorms/${board.id}`, { name: 'B\nC' }, '/name'],
      [
        'idea title on create',
        'POST',
        '/v1/brainstorms',
        { name: 'B', ideas: [{ title: 'i\u0002' }] },
        '/ideas/0/title',
      ],
      ['idea title', 'POST', `/v1/brainstorms/${board.id}/ideas`, { title: 'x\ny' }, '/title'],
      [
        'idea tag',
        'PATCH',
        `/v1/brainstorms/${board.id}/ideas/${idea}`,
        { tags: ['ok', 'bad\u001F'] },
        '/tags/1',
      ],
      [
        'flow name from a template',
        'POST',
        `/v1/templates/${template}/flows`,
        { name: 'T\u0000' },
        '/name',
      ],
      // C1 controls: U+009B is a terminal's CSI, as ESC [ is; U+0085 is a line break.
      ['flow name with a C1 CSI', 'POST', '/v1/flows', { name: '\u009B31mred' }, '/name'],
      ['task name with NEL', 'POST', `/v1/flows/${flow.id}/tasks`, { name: 'a\u0085b' }, '/name'],
      [
        'idea title with a line separator',
        'POST',
        `/v1/brainstorms/${board.id}/ideas`,
        { title: 'a\u2028b' },
        '/title',
      ],
    ];
    for (const [what, method, path, body, pointer] of names) {
      const res = await s.api<Refusal>(method, path, { token: s.adminKey, body });
      assertError(t, res, 400, 'VALIDATION_FAILED', what);
      const problem = (res.body?.error?.details?.errors ?? []).find(
        (e: { pointer: string }) => e.pointer === pointer,
      );
      t.ok(problem?.message.startsWith(oneLine), `${what}: ${pointer} ${problem?.message}`);
    }
    const upload = await s.api<Refusal>(
      'POST',
      `/v1/flows/${flow.id}/tasks/${task}/attachments?name=${encodeURIComponent('a\nb.txt')}`,
      { token: s.adminKey, raw: 'x', headers: { 'content-type': 'text/plain' } },
    );
    assertError(t, upload, 400, 'VALIDATION_FAILED', 'file name with a newline');
    t.same(
      upload.body.error.details.errors.map((e: { in: string; pointer: string }) => [
        e.in,
        e.pointer,
      ]),
      [['query', '/name']],
    );

    // Issue 51, item 5: bidirectional controls show a name in another order than it reads (in a
    // page title, a mail subject, a terminal); every one-line name refuses them, each at its pointer.
    const bidi =
      'must not contain bidirectional controls (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069), which show text in another order than it reads';
    const overrides: [string, string, string, unknown, string][] = [
      ['flow name with RLO', 'POST', '/v1/flows', { name: 'invoice\u202Efdp.exe' }, '/name'],
      ['renamed flow with RLM', 'PATCH', `/v1/flows/${flow.id}`, { name: 'a\u200Fb' }, '/name'],
      [
        'task name with LRE',
        'POST',
        '/v1/flows',
        { name: 'x', tasks: [{ name: '\u202Aa' }] },
        '/tasks/0/name',
      ],
      [
        'renamed task with PDF',
        'PATCH',
        `/v1/flows/${flow.id}/tasks/${task}`,
        { name: 'a\u202C' },
        '/name',
      ],
      ['brainstorm name with LRM', 'POST', '/v1/brainstorms', { name: '\u200EB' }, '/name'],
      [
        'idea title with an isolate',
        'POST',
        `/v1/brainstorms/${board.id}/ideas`,
        { title: 'x\u2066y\u2069' },
        '/title',
      ],
      [
        'idea tag with ALM',
        'PATCH',
        `/v1/brainstorms/${board.id}/ideas/${idea}`,
        { tags: ['\u061Cok'] },
        '/tags/0',
      ],
      [
        'flow name from a template with RLI',
        'POST',
        `/v1/templates/${template}/flows`,
        { name: '\u2067T' },
        '/name',
      ],
      [
        'baseline name with RLE',
        'POST',
        `/v1/flows/${flow.id}/baselines`,
        { name: '\u202BPlan' },
        '/name',
      ],
    ];
    for (const [what, method, path, body, pointer] of overrides) {
      const res = await s.api<Refusal>(method, path, { token: s.adminKey, body });
      assertError(t, res, 400, 'VALIDATION_FAILED', what);
      t.same(
        (res.body?.error?.details?.errors ?? []).map((e: { pointer: string; message: string }) => [
          e.pointer,
          e.message,
        ]),
        [[pointer, bidi]],
        `${what}: refused at ${pointer}, in words`,
      );
    }

    const text =
      'must not contain control characters (U+0000–U+001F, U+007F) other than tab and line breaks';
    const freeText: [string, string, string, unknown, string][] = [
      [
        'flow description with a NUL',
        'POST',
        '/v1/flows',
        { name: 'x', description: 'a\u0000' },
        '/description',
      ],
      [
        'task description with ESC',
        'PATCH',
        `/v1/flows/${flow.id}/tasks/${task}`,
        { description: '\u001B[2J' },
        '/description',
      ],
      [
        'comment with a form feed',
        'POST',
        `/v1/flows/${flow.id}/tasks/${task}/comments`,
        { body: 'page\fbreak' },
        '/body',
      ],
      [
        'idea notes with a vertical tab',
        'POST',
        `/v1/brainstorms/${board.id}/ideas`,
        { title: 'x', notes: 'a\u000Bb' },
        '/notes',
      ],
      [
        'idea comment with DEL',
        'POST',
        `/v1/brainstorms/${board.id}/ideas/${idea}/comments`,
        { body: 'x\u007F' },
        '/body',
      ],
    ];
    for (const [what, method, path, body, pointer] of freeText) {
      const res = await s.api<Refusal>(method, path, { token: s.adminKey, body });
      assertError(t, res, 400, 'VALIDATION_FAILED', what);
      const problem = (res.body?.error?.details?.errors ?? []).find(
        (e: { pointer: string }) => e.pointer === pointer,
      );
      t.equal(problem?.message, text, `${what}: ${pointer}`);
    }
    // An id holding a control character names nothing: refused at its own pointer, in the path or
    // the body, before Postgres sees it (a NUL there was blamed on a body the request never sent).
    const ids: [string, string, string, unknown, string, string][] = [
      ['flow id with a NUL', 'GET', '/v1/flows/%00', undefined, 'path', '/flowId'],
      [
        'task id with a NUL',
        'DELETE',
        `/v1/flows/${flow.id}/tasks/%00`,
        undefined,
        'path',
        '/taskId',
      ],
      [
        'brainstorm id with a NUL',
        'POST',
        '/v1/brainstorms/x%00y/restore',
        undefined,
        'path',
        '/brainstormId',
      ],
      [
        'dependency on a NUL id',
        'POST',
        `/v1/flows/${flow.id}/tasks/${task}/dependencies`,
        { taskId: 'tsk_\u0000' },
        'body',
        '/taskId',
      ],
      [
        'template id with ESC',
        'POST',
        '/v1/templates/%1B/flows',
        { name: 'x' },
        'path',
        '/templateId',
      ],
      // Search terms and filters are one line too: a NUL reached Postgres, blamed on no field.
      ['flow list q with a NUL', 'GET', '/v1/flows?q=a%00', undefined, 'query', '/q'],
      ['brainstorm list q with a NUL', 'GET', '/v1/brainstorms?q=%0B%00', undefined, 'query', '/q'],
      ['search q with a NUL', 'GET', '/v1/search?q=x%00y', undefined, 'query', '/q'],
      [
        'template category with a NUL',
        'GET',
        '/v1/templates?category=%00',
        undefined,
        'query',
        '/category',
      ],
      [
        'webhook description with a NUL',
        'POST',
        '/v1/webhooks',
        { url: 'https://example.com/hook', events: ['task.started'], description: 'a\u0000' },
        'body',
        '/description',
      ],
    ];
    for (const [what, method, path, body, where, pointer] of ids) {
      const res = await s.api<Refusal>(method, path, { token: s.adminKey, body });
      assertError(t, res, 400, 'VALIDATION_FAILED', what);
      t.same(
        res.body.error.details.errors.map((e: { in: string; pointer: string }) => [
          e.in,
          e.pointer,
        ]),
        [[where, pointer]],
        `${what}: ${where} ${pointer}`,
      );
    }
    // Half a surrogate pair is no text at all (Postgres refused it, blaming no field).
    const halves: [string, string, string, unknown, string, string][] = [
      ['flow name', 'POST', '/v1/flows', { name: 'a\ud800b' }, 'body', '/name'],
      [
        'task description',
        'PATCH',
        `/v1/flows/${flow.id}/tasks/${task}`,
        { description: 'x\udfffy' },
        'body',
        '/description',
      ],
      [
        'comment',
        'POST',
        `/v1/flows/${flow.id}/tasks/${task}/comments`,
        { body: '\ud83d' },
        'body',
        '/body',
      ],
      [
        'flow id',
        'GET',
        `/v1/flows/${encodeURIComponent('flw_')}%ED%A0%80`,
        undefined,
        'path',
        '/flowId',
      ],
    ];
    for (const [what, method, path, body, where, pointer] of halves) {
      const res = await s.api<Refusal>(method, path, { token: s.adminKey, body });
      if (where === 'path') {
        t.equal(res.status, 404, `${what}: a path's bytes that are not UTF-8 name nothing`);
        continue;
      }
      assertError(t, res, 400, 'VALIDATION_FAILED', `${what} with an unpaired surrogate`);
      t.same(
        res.body.error.details.errors.map((e: { in: string; pointer: string; message: string }) => [
          e.in,
          e.pointer,
          e.message,
        ]),
        [[where, pointer, 'must be well-formed Unicode (no unpaired surrogate)']],
        `${what}: refused at its pointer, in words`,
      );
    }
    await assertUnchanged(t, s, before, 'refused control characters');
    t.same(
      await ok(t, s, 'GET', `/v1/brainstorms/${board.id}`),
      boardBefore,
      'the brainstorm is unchanged',
    );

    // Free text keeps its lines and tabs, CRLF included; a name keeps any printable Unicode.
    const kept = await newFlow(t, s, {
      name: 'Ünïcode ✓ مرحبا',
      description: 'line one\r\nline two\n\tindented',
      tasks: [{ name: 'a' }],
    });
    t.equal(kept.description, 'line one\r\nline two\n\tindented');
    const comment = await ok<Comment>(
      t,
      s,
      'POST',
      `/v1/flows/${kept.id}/tasks/${item(kept.tasks).id}/comments`,
      { body: 'a\nb\tc' },
      201,
    );
    t.equal(comment.body, 'a\nb\tc');
  },
);

t.test(
  'a refusal says in words what is allowed: the values of an enum, YYYY-MM-DD for a date, never a regular expression (issue 29, item 11)',
  async (t) => {
    const s = await startFlowServer(t);
    const flow = await newFlow(t, s, { name: 'Existing', tasks: [{ name: 'A' }] });
    const cases: [string, string, unknown, string, string][] = [
      [
        'POST',
        `/v1/flows/${flow.id}/exports`,
        { format: 'gif' },
        '/format',
        'must be one of: pdf, png',
      ],
      [
        'POST',
        '/v1/team/invites',
        { email: 'a@example.com', role: 'owner' },
        '/role',
        'must be one of: admin, member, viewer',
      ],
      [
        'GET',
        '/v1/team/invites?status=open',
        undefined,
        '/status',
        'must be one of: pending, accepted, revoked',
      ],
      [
        'POST',
        '/v1/flows',
        { name: 'x', dueDate: 'next friday' },
        '/dueDate',
        'must be a date (YYYY-MM-DD) or a date-time (YYYY-MM-DDThh:mm:ssZ, or with an offset such as +02:00)',
      ],
      [
        'PATCH',
        `/v1/flows/${flow.id}`,
        { dueDate: '2026-13-01' },
        '/dueDate',
        'must be a date (YYYY-MM-DD) or a date-time (YYYY-MM-DDThh:mm:ssZ, or with an offset such as +02:00)',
      ],
      [
        'GET',
        `/v1/flows/${flow.id}/schedule?startDate=01.02.2026`,
        undefined,
        '/startDate',
        'must be a date (YYYY-MM-DD) or a date-time (YYYY-MM-DDThh:mm:ssZ, or with an offset such as +02:00)',
      ],
      [
        'POST',
        '/v1/flows',
        { name: 'x', tasks: [{ name: 'a', assigneeId: 'bob' }] },
        '/tasks/0/assigneeId',
        'must be an id of the form usr_…',
      ],
      ['POST', '/v1/flows', { name: ' \t ' }, '/name', 'must not be blank'],
      ['GET', '/v1/search?q=%20', undefined, '/q', 'must not be blank'],
      ['POST', '/v1/flows', { name: '' }, '/name', 'must not be empty'],
      [
        'POST',
        '/v1/flows',
        { name: 'n'.repeat(201) },
        '/name',
        'must be at most 200 characters long',
      ],
      [
        'POST',
        '/v1/flows',
        { name: 'x', tasks: [{ name: 'a' }, { name: 'b', after: [0, 0] }] },
        '/tasks/1/after',
        'must not list the same item twice (items 0 and 1 are equal)',
      ],
      ['PATCH', `/v1/flows/${flow.id}`, {}, '', 'must have at least 1 field'],
    ];
    for (const [method, path, body, pointer, message] of cases) {
      const res = await s.api<Refusal>(method, path, { token: s.adminKey, body });
      assertError(t, res, 400, 'VALIDATION_FAILED', `${method} ${path}`);
      const errors: { pointer: string; message: string }[] = res.body?.error?.details?.errors ?? [];
      t.ok(
        errors.some((e) => e.pointer === pointer && e.message === message),
        `${method} ${path}: ${pointer} ${message} in ${JSON.stringify(errors)}`,
      );
      for (const e of [...errors, res.body.error])
        t.notMatch(
          e.message,
          /pattern|format "|\\S|\^|anyOf/,
          `no regular expression or schema keyword: ${e.message}`,
        );
    }
  },
);

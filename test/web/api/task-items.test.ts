import t from 'tap';
import { assertError, item } from '../../helpers/server.ts';
import { assertUnchanged, newFlow, ok, startFlowServer, visible } from '../../helpers/flows.ts';
import type {
  Attachment,
  AttachmentList,
  Brainstorm,
  Comment,
  CommentList,
  Completed,
  Context,
  Deliverable,
  Refusal,
  Task,
} from '../../helpers/wire.ts';

t.test('comments: 201 Comment, listed oldest first; no new flow version', async (t) => {
  const s = await startFlowServer(t);
  const flow = await newFlow(t, s, { name: 'Talk', tasks: [{ name: 'A' }, { name: 'B' }] });
  const [a, b] = flow.tasks.map((x) => x.id);
  const path = `/v1/flows/${flow.id}/tasks/${a}/comments`;
  const me = (await s.api<Context>('GET', '/v1/me', { token: s.adminKey })).body;
  const etag = (await s.api('GET', `/v1/flows/${flow.id}`, { token: s.adminKey })).headers.get(
    'etag',
  );
  t.strictSame(await ok(t, s, 'GET', path), { total: 0, items: [] });
  const first = await s.api<Comment>('POST', path, { token: s.adminKey, body: { body: 'first' } });
  t.equal(first.status, 201);
  t.match(first.body.id, /^cmt_/);
  t.strictSame(
    { ...first.body, id: undefined, createdAt: undefined },
    {
      id: undefined,
      taskId: a,
      authorId: me.credentialId,
      authorName: 'Demo admin key',
      body: 'first',
      createdAt: undefined,
    },
  );
  t.ok(!Number.isNaN(Date.parse(first.body.createdAt)));
  const second = await ok(t, s, 'POST', path, { body: 'second' }, 201);
  const third = await ok(t, s, 'POST', path, { body: 'third' }, 201);
  await ok(t, s, 'POST', `/v1/flows/${flow.id}/tasks/${b}/comments`, { body: 'on B' }, 201);
  const list = await ok<CommentList>(t, s, 'GET', path);
  t.equal(list.total, 3);
  t.strictSame(list.items, [first.body, second, third], "oldest first, only this task's");
  const page = await ok(t, s, 'GET', `${path}?size=1&from=1`);
  t.strictSame(page, { total: 3, items: [second] });
  t.equal(
    (await s.api('GET', `/v1/flows/${flow.id}`, { token: s.adminKey })).headers.get('etag'),
    etag,
    'comments do not change the flow version',
  );
  const before = await visible(s, [flow.id]);
  for (const body of [{}, { body: '' }, { body: '   ' }, { body: 5 }, { body: 'x', extra: 1 }]) {
    assertError(
      t,
      await s.api('POST', path, { token: s.adminKey, body }),
      400,
      'VALIDATION_FAILED',
      JSON.stringify(body),
    );
  }
  assertError(
    t,
    await s.api('POST', `/v1/flows/${flow.id}/tasks/tsk_missing/comments`, {
      token: s.adminKey,
      body: { body: 'x' },
    }),
    404,
    'NOT_FOUND',
  );
  assertError(
    t,
    await s.api('GET', `/v1/flows/${flow.id}/tasks/tsk_missing/comments`, { token: s.adminKey }),
    404,
    'NOT_FOUND',
  );
  await assertUnchanged(t, s, before, 'refused comments');
});

t.test(
  'attachments: raw bytes in, same bytes and type out; over 25 MiB is 413 and nothing stored',
  async (t) => {
    const s = await startFlowServer(t);
    const flow = await newFlow(t, s, { name: 'Files', tasks: [{ name: 'A' }] });
    const a = item(flow.tasks).id;
    const path = `/v1/flows/${flow.id}/tasks/${a}/attachments`;
    const bytes = Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 7 + 3) % 256));
    const up = await s.api<Attachment>(
      'POST',
      `${path}?name=${encodeURIComponent('plan v1.png')}`,
      {
        token: s.adminKey,
        raw: bytes,
        headers: { 'content-type': 'image/png' },
      },
    );
    t.equal(up.status, 201);
    t.match(up.body.id, /^att_/);
    t.match(up.body, {
      name: 'plan v1.png',
      mimeType: 'image/png',
      sizeBytes: 3000,
      kind: 'reference',
      deliverableId: null,
    });
    t.ok(!Number.isNaN(Date.parse(up.body.uploadedAt)));
    const text = await ok(t, s, 'POST', `${path}?name=notes.txt`, undefined, 201);
    t.match(text, { name: 'notes.txt', sizeBytes: 0, kind: 'reference' });
    const list = await ok(t, s, 'GET', path);
    t.strictSame(list, { total: 2, items: [up.body, text] });
    const content = await fetch(`${s.url}${path}/${up.body.id}/content`, {
      headers: { authorization: `Bearer ${s.adminKey}` },
    });
    t.equal(content.status, 200);
    t.equal(content.headers.get('content-type'), 'image/png');
    t.ok(Buffer.from(await content.arrayBuffer()).equals(bytes), 'the same bytes');
    t.match(content.headers.get('content-disposition'), /filename\*=UTF-8''plan%20v1\.png/);
    assertError(
      t,
      await s.api('GET', `${path}/att_missing/content`, { token: s.adminKey }),
      404,
      'NOT_FOUND',
    );

    const before = await visible(s, [flow.id]);
    const missingName = await s.api<Refusal>('POST', path, {
      token: s.adminKey,
      raw: bytes,
      headers: { 'content-type': 'image/png' },
    });
    assertError(t, missingName, 400, 'VALIDATION_FAILED');
    t.match(missingName.body.error.details.errors[0], { in: 'query', pointer: '/name' });
    assertError(
      t,
      await s.api('POST', `${path}?name=x&kind=other`, { token: s.adminKey, raw: bytes }),
      400,
      'VALIDATION_FAILED',
    );
    assertError(
      t,
      await s.api('POST', `${path}?name=x&deliverableId=dlv_x`, { token: s.adminKey, raw: bytes }),
      400,
      'VALIDATION_FAILED',
      'deliverableId goes with kind=deliverable',
    );
    assertError(
      t,
      await s.api('POST', `${path}?name=x&kind=deliverable&deliverableId=dlv_x`, {
        token: s.adminKey,
        raw: bytes,
      }),
      400,
      'VALIDATION_FAILED',
      'no such deliverable',
    );
    const huge = Buffer.alloc(25 * 1024 * 1024 + 1, 1);
    let tooLarge;
    try {
      tooLarge = await s.api('POST', `${path}?name=huge.bin`, {
        token: s.adminKey,
        raw: huge,
        headers: { 'content-type': 'application/octet-stream' },
      });
    } catch (error) {
      t.fail(`the client got no response: ${String(error)}`);
    }
    if (tooLarge) {
      assertError(t, tooLarge, 413, 'PAYLOAD_TOO_LARGE');
    }
    await assertUnchanged(t, s, before, 'refused uploads');
    // Exactly 25 MiB is accepted.
    const max = await s.api<Attachment>('POST', `${path}?name=max.bin`, {
      token: s.adminKey,
      raw: Buffer.alloc(25 * 1024 * 1024, 2),
      headers: { 'content-type': 'application/octet-stream' },
    });
    t.equal(max.status, 201);
    t.equal(max.body.sizeBytes, 25 * 1024 * 1024);
  },
);

t.test(
  'an upload declaring no concrete media type (*/*, text/*, malformed, beyond ASCII) is stored and served as application/octet-stream (issue 29, item 12; issue 51)',
  async (t) => {
    const s = await startFlowServer(t);
    const flow = await newFlow(t, s, { name: 'Files', tasks: [{ name: 'A' }] });
    const path = `/v1/flows/${flow.id}/tasks/${item(flow.tasks).id}/attachments`;
    const board = await ok<Brainstorm>(
      t,
      s,
      'POST',
      '/v1/brainstorms',
      { name: 'Board', ideas: [{ title: 'Idea' }] },
      201,
    );
    const idea = item((await ok<Brainstorm>(t, s, 'GET', `/v1/brainstorms/${board.id}`)).ideas).id;
    const ideaPath = `/v1/brainstorms/${board.id}/ideas/${idea}/attachments`;
    const cases: [string, string][] = [
      ['*/*', 'application/octet-stream'],
      ['text/*', 'application/octet-stream'],
      ['nonsense', 'application/octet-stream'],
      ['image/png; =x', 'application/octet-stream'],
      // Beyond ASCII it could not be served back as a header (issue 51).
      ['text/plain; name="caf\u00e9"', 'application/octet-stream'],
      ['image/png;', 'image/png;'],
      ['text/plain; charset=utf-8', 'text/plain; charset=utf-8'],
      ['image/svg+xml', 'image/svg+xml'],
    ];
    for (const [declared, stored] of cases) {
      for (const base of [path, ideaPath]) {
        const up = await s.api<Attachment>('POST', `${base}?name=f.bin`, {
          token: s.adminKey,
          raw: 'bytes',
          headers: { 'content-type': declared },
        });
        t.equal(up.status, 201, `${declared} uploaded to ${base}`);
        t.equal(up.body?.mimeType, stored, `${declared} is stored as ${stored}`);
        const content = await fetch(`${s.url}${base}/${up.body.id}/content`, {
          headers: { authorization: `Bearer ${s.adminKey}` },
        });
        t.equal(content.headers.get('content-type'), stored, `${declared} is served as ${stored}`);
        t.equal(await content.text(), 'bytes');
      }
    }
  },
);

t.test('deliverables: required before completion, satisfied by an upload', async (t) => {
  const s = await startFlowServer(t);
  const flow = await newFlow(t, s, {
    name: 'Deliver',
    tasks: [{ name: 'A' }, { name: 'B', after: [0] }],
  });
  const [a, b] = flow.tasks.map((x) => x.id);
  const base = `/v1/flows/${flow.id}/tasks/${a}`;
  const res = await s.api<Deliverable>('POST', `${base}/deliverables`, {
    token: s.adminKey,
    body: { name: 'Signed contract' },
  });
  t.equal(res.status, 201);
  t.match(res.body.id, /^dlv_/);
  t.strictSame(res.body, { id: res.body.id, name: 'Signed contract', satisfied: false });
  const other = await ok<Deliverable>(
    t,
    s,
    'POST',
    `${base}/deliverables`,
    { name: 'Invoice' },
    201,
  );
  t.strictSame((await ok<Task>(t, s, 'GET', base)).requiredDeliverables, [res.body, other]);
  assertError(
    t,
    await s.api('POST', `${base}/deliverables`, { token: s.adminKey, body: { name: '' } }),
    400,
    'VALIDATION_FAILED',
  );

  await ok(t, s, 'POST', `${base}/start`);
  let before = await visible(s, [flow.id]);
  const refused = await s.api<Refusal>('POST', `${base}/complete`, { token: s.adminKey });
  assertError(t, refused, 409, 'DELIVERABLE_MISSING');
  t.strictSame(refused.body.error.details, {
    deliverables: [
      { id: res.body.id, name: 'Signed contract' },
      { id: other.id, name: 'Invoice' },
    ],
  });
  await assertUnchanged(t, s, before, 'completion with missing deliverables');

  const pdf = Buffer.from('%PDF-1.7 signed');
  const handed = await s.api(
    'POST',
    `${base}/attachments?name=contract.pdf&kind=deliverable&deliverableId=${res.body.id}`,
    { token: s.adminKey, raw: pdf, headers: { 'content-type': 'application/pdf' } },
  );
  t.equal(handed.status, 201);
  t.match(handed.body, {
    name: 'contract.pdf',
    kind: 'deliverable',
    deliverableId: res.body.id,
    mimeType: 'application/pdf',
    sizeBytes: pdf.length,
  });
  t.strictSame((await ok<Task>(t, s, 'GET', base)).requiredDeliverables, [
    { ...res.body, satisfied: true },
    other,
  ]);
  before = await visible(s, [flow.id]);
  const stillMissing = await s.api<Refusal>('POST', `${base}/complete`, { token: s.adminKey });
  assertError(t, stillMissing, 409, 'DELIVERABLE_MISSING');
  t.strictSame(stillMissing.body.error.details, {
    deliverables: [{ id: other.id, name: 'Invoice' }],
  });
  await assertUnchanged(t, s, before, 'completion with one missing deliverable');
  await ok(
    t,
    s,
    'POST',
    `${base}/attachments?name=invoice.pdf&kind=deliverable&deliverableId=${other.id}`,
    undefined,
    201,
  );
  const done = await ok<Completed>(t, s, 'POST', `${base}/complete`);
  t.match(done.task, { id: a, status: 'done' });
  t.strictSame(
    done.task.requiredDeliverables.map(({ satisfied }) => satisfied),
    [true, true],
    'both deliverables satisfied',
  );
  t.strictSame(
    done.unblocked.map((x) => x.id),
    [b],
  );
  const files = await ok<AttachmentList>(t, s, 'GET', `${base}/attachments`);
  t.strictSame(
    files.items.map((f) => [f.name, f.kind]),
    [
      ['contract.pdf', 'deliverable'],
      ['invoice.pdf', 'deliverable'],
    ],
  );
  const refusedMore = await s.api('POST', `${base}/deliverables`, {
    token: s.adminKey,
    body: { name: 'More' },
  });
  assertError(t, refusedMore, 409, 'INVALID_TRANSITION');
});

/**
 * Issue 17, item 12: a per-workspace quota of stored file bytes (ATTACHMENT_QUOTA_BYTES), task
 * attachments and idea files together: 413 PAYLOAD_TOO_LARGE with details {quotaBytes,
 * usedBytes}, decided from Content-Length before the body is read, and again when the file row
 * is written (concurrent uploads, bodies of unknown length); usage on /metrics. Files are
 * stored in bounded chunks and come back byte for byte.
 */
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { createKey, createWorkspace } from '../../src/services/auth/provision.ts';
import { SCOPES } from '../../src/services/auth/principal.ts';
import { newFlow, startFlowServer } from '../helpers/flows.ts';
import { assertError, item } from '../helpers/server.ts';
import type { Attachment, Brainstorm, Refusal } from '../helpers/wire.ts';

const KiB = 1024;
const QUOTA = 1024 * KiB;

t.test(
  'uploads fill the quota, then 413 with what is used; other workspaces are untouched',
  async (t) => {
    const s = await startFlowServer(t, { attachmentQuotaBytes: QUOTA });
    const flow = await newFlow(t, s, { name: 'Files', tasks: [{ name: 'A' }] });
    // The uploads that succeed answer an Attachment, the one past the quota a refusal.
    const upload = (bytes: Buffer, name: string, token = s.adminKey, f = flow) =>
      s.api<Attachment & Refusal>(
        'POST',
        `/v1/flows/${f.id}/tasks/${item(f.tasks).id}/attachments?name=${name}`,
        {
          token,
          raw: bytes,
          headers: { 'content-type': 'application/octet-stream' },
        },
      );
    const stored = async () =>
      (await s.sql<{ n: number }[]>`select count(*)::int as n from blob_chunks`)[0]!.n;

    const big = randomBytes(600 * KiB);
    const first = await upload(big, 'first.bin');
    t.equal(first.status, 201);
    t.equal(first.body.sizeBytes, big.length);
    const back = await fetch(
      `${s.url}/v1/flows/${flow.id}/tasks/${item(flow.tasks).id}/attachments/${first.body.id}/content`,
      { headers: { authorization: `Bearer ${s.adminKey}` } },
    );
    t.ok(Buffer.from(await back.arrayBuffer()).equals(big), 'the bytes come back as sent');
    const chunksBefore = await stored();

    const refused = await upload(randomBytes(500 * KiB), 'second.bin');
    assertError(t, refused, 413, 'PAYLOAD_TOO_LARGE', 'past the quota');
    t.strictSame(refused.body.error.details, { quotaBytes: QUOTA, usedBytes: big.length });
    t.equal(await stored(), chunksBefore, 'refused from its head: nothing of it was stored');

    const board = (
      await s.api<Brainstorm>('POST', '/v1/brainstorms', {
        token: s.adminKey,
        body: { name: 'Board', ideas: [{ title: 'Idea' }] },
      })
    ).body;
    const ideaFile = (bytes: Buffer) =>
      s.api(
        'POST',
        `/v1/brainstorms/${board.id}/ideas/${item(board.ideas).id}/attachments?name=idea.bin`,
        {
          token: s.adminKey,
          raw: bytes,
          headers: { 'content-type': 'application/octet-stream' },
        },
      );
    const ideaRefused = await ideaFile(randomBytes(500 * KiB));
    assertError(t, ideaRefused, 413, 'PAYLOAD_TOO_LARGE', 'idea files share the quota');
    t.equal((await ideaFile(randomBytes(400 * KiB))).status, 201, 'what fits is stored');

    // Another workspace has a quota of its own.
    const other = await createWorkspace(s.sql, { name: 'Other', plan: 'pro' });
    const { key } = await createKey(s.sql, {
      workspaceId: other.id,
      role: 'admin',
      scopes: [...SCOPES],
    });
    const theirs = await newFlow(t, s, { name: 'Theirs', tasks: [{ name: 'A' }] }, key);
    t.equal((await upload(randomBytes(900 * KiB), 'theirs.bin', key, theirs)).status, 201);

    const metrics = await s.metrics();
    t.match(
      metrics,
      new RegExp(
        `^flowplan_workspace_file_bytes\\{workspace="${s.workspaceId}"\\} ${big.length + 400 * KiB}$`,
        'm',
      ),
      'usage per workspace on /metrics',
    );
    t.match(metrics, new RegExp(`^flowplan_attachment_quota_bytes ${QUOTA}$`, 'm'));
    t.match(metrics, /^flowplan_attachment_quota_refusals_total [2-9]$/m);
  },
);

t.test('concurrent uploads and bodies of unknown length cannot overrun it together', async (t) => {
  const s = await startFlowServer(t, { attachmentQuotaBytes: QUOTA });
  const flow = await newFlow(t, s, { name: 'Race', tasks: [{ name: 'A' }] });
  const url = `${s.url}/v1/flows/${flow.id}/tasks/${item(flow.tasks).id}/attachments?name=race.bin`;
  const post = (body: Buffer | ReadableStream<Uint8Array>, init: RequestInit = {}) =>
    fetch(url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${s.adminKey}`,
        'content-type': 'application/octet-stream',
      },
      body,
      ...init,
    });

  // Each fits alone (its head passes), not both: the write of the second must refuse.
  const [a, b] = await Promise.all([post(randomBytes(700 * KiB)), post(randomBytes(700 * KiB))]);
  t.strictSame([a.status, b.status].sort(), [201, 413], 'exactly one is stored');
  // Chunked: no Content-Length to judge before the body.
  const chunks = [randomBytes(200 * KiB), randomBytes(200 * KiB)];
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      for (const chunk of chunks) c.enqueue(new Uint8Array(chunk));
      c.close();
    },
  });
  const chunked = await post(stream, { duplex: 'half' } as RequestInit);
  t.equal(chunked.status, 413, 'a chunked body past the quota is refused when it is written');
  const [used] = await s.sql<
    { bytes: number }[]
  >`select coalesce(sum(size_bytes), 0)::int as bytes from attachments`;
  t.equal(used!.bytes, 700 * KiB, 'stored: the one upload that fitted');
  const [left] = await s.sql<
    { n: number }[]
  >`select count(distinct blob_id)::int as n from blob_chunks`;
  t.equal(left!.n, 1, 'the refused uploads left no chunks behind');
});

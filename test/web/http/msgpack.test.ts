/**
 * MessagePack on JSON GETs: `Accept: application/msgpack` (or `application/vnd.msgpack`)
 * gets the same document as MessagePack, with its own entity tag and `Vary: Accept`; a
 * conditional poll of the MessagePack tag is a 304; JSON stays the default, errors stay JSON.
 */
import { unpack } from 'msgpackr';
import t from 'tap';
import { newFlow, ok, startFlowServer } from '../../helpers/flows.ts';
import type { Flow, JsonDocument } from '../../helpers/wire.ts';
import { item } from '../../helpers/server.ts';
import { pathOf } from '../public/helpers.ts';

t.test('the same documents as MessagePack, tagged apart', async (t) => {
  const s = await startFlowServer(t);
  const flow = await newFlow(t, s, {
    name: 'Packed',
    tasks: [{ name: 'A' }, { name: 'B', after: [0] }],
  });
  const get = (path: string, headers: Record<string, string> = {}) =>
    fetch(s.url + path, { headers: { authorization: `Bearer ${s.adminKey}`, ...headers } });

  for (const path of [`/v1/flows/${flow.id}`, '/v1/work/available?size=100', '/v1/flows']) {
    const json = await get(path);
    const jsonBody = await json.json();
    const packed = await get(path, { accept: 'application/msgpack' });
    t.equal(packed.status, 200, path);
    t.equal(packed.headers.get('content-type'), 'application/msgpack');
    t.strictSame(
      unpack(Buffer.from(await packed.arrayBuffer())),
      jsonBody,
      `${path}: the same document`,
    );
    t.match(packed.headers.get('vary'), /Accept/);
    t.match(json.headers.get('vary'), /Accept/, 'the JSON answer says it varies too');
    const tag = packed.headers.get('etag')!;
    t.not(tag, json.headers.get('etag'), 'a tag of its own');
    t.equal(
      (await get(path, { accept: 'application/msgpack', 'if-none-match': tag })).status,
      304,
      `${path}: a poll of the MessagePack tag is a 304`,
    );
    t.equal(
      (
        await get(path, {
          accept: 'application/msgpack',
          'if-none-match': json.headers.get('etag')!,
        })
      ).status,
      200,
      'the JSON tag does not match the MessagePack representation',
    );
    t.equal((await get(path, { 'if-none-match': tag })).status, 200, 'nor the other way round');
  }

  const vnd = await get(`/v1/flows/${flow.id}`, { accept: 'application/vnd.msgpack' });
  t.equal(vnd.headers.get('content-type'), 'application/vnd.msgpack');
  const preferJson = await get(`/v1/flows/${flow.id}`, {
    accept: 'application/json, application/msgpack;q=0.5',
  });
  t.match(
    preferJson.headers.get('content-type'),
    /^application\/json/,
    'JSON when the client prefers it',
  );
  const missing = await get('/v1/flows/flw_nope', { accept: 'application/msgpack' });
  t.equal(missing.status, 404);
  t.match(
    missing.headers.get('content-type'),
    /^application\/json/,
    'errors stay in the JSON envelope',
  );

  // A change gives a new version: the poller's old MessagePack tag no longer matches, and the new bytes show it.
  const before = await get(`/v1/flows/${flow.id}`, { accept: 'application/msgpack' });
  await ok(t, s, 'POST', `/v1/flows/${flow.id}/tasks/${item(flow.tasks).id}/start`);
  const after = await get(`/v1/flows/${flow.id}`, {
    accept: 'application/msgpack',
    'if-none-match': before.headers.get('etag')!,
  });
  t.equal(after.status, 200);
  t.equal(
    (unpack(Buffer.from(await after.arrayBuffer())) as { tasks: { status: string }[] }).tasks[0]!
      .status,
    'in_progress',
  );

  // A public JSON view: MessagePack unencoded; a reply already gzipped for the client stays gzipped JSON.
  await ok(t, s, 'POST', `/v1/flows/${flow.id}/publish`);
  const publicPath = `${pathOf((await ok<Flow>(t, s, 'GET', `/v1/flows/${flow.id}`)).publicUrl)}.json`;
  const publicPacked = await fetch(s.url + publicPath, {
    headers: { accept: 'application/msgpack', 'accept-encoding': 'identity' },
  });
  t.equal(publicPacked.headers.get('content-type'), 'application/msgpack');
  t.match(unpack(Buffer.from(await publicPacked.arrayBuffer())), { name: 'Packed' });
  const publicZipped = await fetch(s.url + publicPath, {
    headers: { accept: 'application/msgpack', 'accept-encoding': 'gzip' },
  });
  t.equal(publicZipped.status, 200, 'a gzipped public view is not re-encoded');
  t.match(publicZipped.headers.get('content-type'), /^application\/json/);

  const openapi = (await s.api<JsonDocument>('GET', '/v1/openapi.json')).body;
  t.ok(
    openapi.paths['/v1/flows/{flowId}'].get.responses['200'].content['application/msgpack'],
    'OpenAPI declares the MessagePack alternative',
  );
  t.notOk(
    openapi.paths['/v1/flows'].post.responses['201'].content['application/msgpack'],
    'on GETs only',
  );
});

/**
 * What `route()` infers for a handler, pinned by the type checker (`tsc --noEmit` covers
 * test/): the context follows the route's own schemas and credential, and a mistake against
 * them does not compile. At run time it only checks that route() hands the spec back.
 */
import { Type } from '@sinclair/typebox';
import t from 'tap';
import type { Principal } from '../../../src/services/auth/principal.ts';
import type { StagedBlob } from '../../../src/storage/blobs.store.ts';
import { json, route } from '../../../src/web/http/route.ts';
import { Defaulted } from '../../../src/contract/common.schema.ts';

type Equal<A, B> =
  (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const expectType = <A, B>(_proof: Equal<A, B>) => undefined;

const Params = Type.Object({ flowId: Type.String() });
const Query = Type.Object({
  size: Defaulted(Type.Integer({ default: 25 })),
  q: Type.Optional(Type.String()),
});
const Body = Type.Object({
  name: Type.String(),
  dueDate: Type.Union([Type.String(), Type.Null()]),
});

t.test('a bearer route with params, query and body', async (t) => {
  const typed = route({
    method: 'POST',
    path: '/v1/flows/{flowId}/things',
    operationId: 'thing',
    summary: 'thing',
    auth: 'bearer',
    params: Params,
    query: Query,
    body: Body,
    responses: { 200: { description: 'ok' } },
    handler: (ctx) => {
      expectType<typeof ctx.params, { flowId: string }>(true);
      // A property with a default Ajv fills in is always there; one without may be absent.
      expectType<typeof ctx.query, { size: number; q?: string }>(true);
      expectType<typeof ctx.body, { name: string; dueDate: string | null }>(true);
      expectType<typeof ctx.principal, Principal>(true);
      expectType<typeof ctx.upload, null>(true);
      // @ts-expect-error: not a path parameter of this route
      void ctx.params.taskId;
      // @ts-expect-error: not a field of the body
      void ctx.body.description;
      return json(200, {
        workspace: ctx.principal.workspaceId,
        flow: ctx.params.flowId,
        name: ctx.body.name,
      });
    },
  });
  t.equal(typed.params, Params, 'the schema objects are the ones the edge compiles');
  t.equal(typed.body, Body);
});

t.test('no credential, no schemas, an upload', async (t) => {
  const open = route({
    method: 'GET',
    path: '/open',
    operationId: 'open',
    summary: 'open',
    auth: 'none',
    responses: { 200: { description: 'ok' } },
    handler: (ctx) => {
      expectType<typeof ctx.principal, Principal | null>(true);
      expectType<typeof ctx.params, Record<string, string>>(true);
      expectType<typeof ctx.query, Record<string, unknown>>(true);
      expectType<typeof ctx.body, undefined>(true);
      return json(200, {});
    },
  });
  const upload = route({
    method: 'POST',
    path: '/upload',
    operationId: 'upload',
    summary: 'upload',
    auth: 'bearer',
    bodyKind: 'upload',
    responses: { 201: { description: 'ok' } },
    beforeBody: (head) => expectType<typeof head.principal, Principal>(true),
    handler: (ctx) => {
      expectType<typeof ctx.upload, StagedBlob>(true);
      expectType<typeof ctx.body, undefined>(true);
      return json(201, { size: ctx.upload.sizeBytes });
    },
  });
  const form = route({
    method: 'POST',
    path: '/form',
    operationId: 'form',
    summary: 'form',
    auth: 'none',
    bodyKind: 'form',
    body: Body,
    responses: { 200: { description: 'ok' } },
    // A form body is parsed, not validated: its schema only documents it.
    handler: (ctx) => (expectType<typeof ctx.body, Record<string, string>>(true), json(200, {})),
  });
  t.equal(open.operationId, 'open');
  t.equal(upload.bodyKind, 'upload');
  t.equal(form.bodyKind, 'form');
});

t.test('a reply is typed by the schema of its status', async (t) => {
  const Thing = Type.Object({
    id: Type.String(),
    count: Type.Integer(),
    note: Type.Optional(Type.String()),
  });
  const spec = {
    method: 'GET',
    path: '/v1/things/{flowId}',
    operationId: 'getThing',
    summary: 'thing',
    auth: 'bearer',
    params: Params,
    responses: {
      200: { description: 'The thing', schema: Thing },
      202: { description: 'Accepted, no schema' },
    },
  } as const;
  const typed = route({ ...spec, handler: () => json(200, { id: 'x', count: 1 }) });
  route({ ...spec, handler: () => json(202, { anything: true }) });
  // @ts-expect-error: a required field of the 200 schema is missing
  route({ ...spec, handler: () => json(200, { id: 'x' }) });
  // @ts-expect-error: a field has the wrong type
  route({ ...spec, handler: () => json(200, { id: 'x', count: 'one' }) });
  // @ts-expect-error: 201 is not a status this route answers with
  route({ ...spec, handler: () => json(201, { id: 'x', count: 1 }) });
  // Bytes already serialised (a pre-assembled body, a file) are the handler's to vouch for.
  route({
    ...spec,
    handler: () => ({ status: 200, body: Buffer.from('{}'), contentType: 'application/json' }),
  });
  t.equal(typed.responses[200]?.schema, Thing, 'the response schema is the one the document shows');
});

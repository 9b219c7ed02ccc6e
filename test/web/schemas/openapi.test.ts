/**
 * GET /v1/openapi.json (spec §9, CONTRACT §0): an OpenAPI 3.1.0 document, interface version
 * 1.0.0, served without a credential, valid against the OpenAPI schema, describing every
 * route of the running edge with the very request schemas the server validates with, and
 * naming every error code the API can answer with under its status.
 */
import t from 'tap';
import { Validator } from '@seriousme/openapi-schema-validator';
import { ERROR_CODES } from '../../../src/platform/errors.ts';
import { HTTP_STATUS } from '../../../src/web/http/error-status.ts';
import { startTestServer } from '../../helpers/server.ts';

type Operation = {
  operationId: string;
  security?: unknown[];
  requestBody?: { content: Record<string, { schema: unknown }> };
  responses: Record<
    string,
    {
      description: string;
      content?: Record<
        string,
        { examples?: Record<string, { value: { error: { code: string } } }> }
      >;
    }
  >;
};

t.test('openapi document', async (t) => {
  const s = await startTestServer(t);
  const res = await s.api('GET', '/v1/openapi.json');
  t.equal(res.status, 200, 'served without a credential');
  t.match(res.headers.get('content-type'), /^application\/json/);
  const doc = res.body as {
    openapi: string;
    info: { version: string; title: string };
    paths: Record<string, Record<string, Operation>>;
  };
  t.equal(doc.openapi, '3.1.0');
  t.equal(doc.info.version, '1.0.0');
  t.type(doc.info.title, 'string');

  t.test('validates against the OpenAPI 3.1 schema', async (t) => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc));
    t.ok(result.valid, 'valid OpenAPI');
    if (!result.valid) t.comment(JSON.stringify(result.errors, null, 2).slice(0, 4000));
    t.equal(validator.version, '3.1');
  });

  // Web-app pages are `hidden`: the unversioned platform interface, not part of v1 (spec §9.3).
  const routes = s.app.edge.router.routes.filter((route) => !route.hidden);

  t.test('describes every route of the running edge, and nothing else', async (t) => {
    t.ok(routes.length >= 7, `${routes.length} routes`);
    const operationIds = new Set<string>();
    for (const route of routes) {
      const operation = doc.paths[route.path]?.[route.method.toLowerCase()];
      t.ok(operation, `${route.method} ${route.path} is documented`);
      if (!operation) continue;
      t.equal(operation.operationId, route.operationId);
      t.notOk(operationIds.has(route.operationId), `operationId ${route.operationId} is unique`);
      operationIds.add(route.operationId);
      if (route.auth === 'bearer') {
        t.ok(
          operation.security && operation.security.length > 0,
          `${route.operationId} declares its security`,
        );
        for (const status of ['401', '403', '429'])
          t.ok(operation.responses[status], `${route.operationId} documents ${status}`);
      } else {
        t.same(operation.security, [], `${route.operationId} needs no credential`);
      }
      for (const [status, spec] of Object.entries(route.responses)) {
        t.ok(operation.responses[status], `${route.operationId} documents its ${status}`);
        t.equal(operation.responses[status]?.description, spec.description);
      }
      const kind = route.bodyKind ?? (route.body ? 'json' : 'none');
      if (kind === 'json' || kind === 'form') {
        const type = kind === 'json' ? 'application/json' : 'application/x-www-form-urlencoded';
        // As JSON: a TypeBox schema also carries symbol-keyed marks, which neither Ajv nor JSON reads.
        t.same(
          operation.requestBody?.content[type]?.schema,
          JSON.parse(JSON.stringify(route.body)),
          `${route.operationId}: the published request schema is the one validated`,
        );
      }
    }
    const documented = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
    );
    t.same(
      documented.sort(),
      routes.map((r) => `${r.method} ${r.path}`).sort(),
      'exactly the routes the server answers',
    );
    for (const path of [
      '/v1/me',
      '/v1/oauth/token',
      '/v1/oauth/revoke',
      '/healthz',
      '/readyz',
      '/v1/openapi.json',
    ]) {
      t.ok(doc.paths[path], `${path} is documented`);
    }
  });

  t.test('every error code appears under its status', async (t) => {
    const documented = new Map<string, Set<string>>();
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        for (const [status, response] of Object.entries(operation.responses)) {
          for (const media of Object.values(response.content ?? {})) {
            for (const example of Object.values(media.examples ?? {})) {
              const code = example.value?.error?.code;
              if (!code) continue;
              t.equal(
                String(HTTP_STATUS[code as keyof typeof HTTP_STATUS]),
                status,
                `${method.toUpperCase()} ${path}: ${code} under ${status}`,
              );
              if (!documented.has(code)) documented.set(code, new Set());
              documented.get(code)!.add(`${method.toUpperCase()} ${path}`);
            }
          }
        }
      }
    }
    // Edge-wide answers (405 on any path) live in components.responses, named by status code.
    const components = (
      doc as unknown as {
        components: { responses?: Record<string, Operation['responses'][string]> };
      }
    ).components;
    for (const [name, response] of Object.entries(components.responses ?? {})) {
      for (const media of Object.values(response.content ?? {})) {
        for (const example of Object.values(media.examples ?? {})) {
          const code = example.value.error.code;
          if (!documented.has(code)) documented.set(code, new Set());
          documented.get(code)!.add(`components.responses.${name}`);
        }
      }
    }
    t.ok(
      documented.get('METHOD_NOT_ALLOWED'),
      'METHOD_NOT_ALLOWED is documented for the whole API',
    );
    const missing = ERROR_CODES.filter((code) => !documented.has(code));
    t.same(missing, [], 'every code of ERROR_CODES is documented on some operation');
    for (const code of documented.keys()) t.ok(code in HTTP_STATUS, `${code} is a known code`);
  });

  t.test(
    'says what the server does: HTML refusals of public pages, required authorize parameters, one dueDate per spec (issue 29, items 3, 10 and 11)',
    async (t) => {
      type Op = Operation & {
        parameters: {
          name: string;
          in: string;
          required: boolean;
          schema: Record<string, unknown>;
        }[];
      };
      const ops = new Map<string, { path: string; op: Op }>();
      for (const [path, methods] of Object.entries(doc.paths))
        for (const op of Object.values(methods)) ops.set(op.operationId, { path, op: op as Op });
      for (const id of [
        'getPublicFlow',
        'getPublicFlowEmbed',
        'getPublicBrainstorm',
        'getPublicBrainstormEmbed',
      ]) {
        const { path, op } = ops.get(id)!;
        t.same(
          Object.keys(op.responses['404']?.content ?? {}),
          ['text/html'],
          `${id}: a 404 is documented as the HTML page it is`,
        );
        const live = await s.api('GET', path.replace('{token}', 'no-such-token'));
        t.equal(live.status, 404);
        t.match(
          live.headers.get('content-type'),
          /^text\/html/,
          `${id}: and the server answers HTML`,
        );
      }
      t.same(
        Object.keys(ops.get('getPublicFlowJson')!.op.responses['404']!.content ?? {}),
        ['application/json'],
        'the public JSON refuses in JSON',
      );
      const authorize = ops.get('authorize')!.op.parameters;
      const required = Object.fromEntries(authorize.map((p) => [p.name, p.required]));
      t.same(
        required,
        {
          client_id: true,
          redirect_uri: true,
          response_type: true,
          code_challenge: true,
          code_challenge_method: true,
          state: false,
          scope: false,
        },
        'authorize: required parameters are marked required',
      );
      t.notOk(
        authorize.some((p) => 'x-required' in p.schema),
        'no internal mark leaks into the schemas',
      );

      type Props = Record<string, Record<string, unknown>>;
      const schemaOf = (id: string, status = '200') =>
        (
          ops.get(id)!.op.responses[status]!.content as Record<
            string,
            { schema: { properties: Props } }
          >
        )['application/json']!.schema;
      t.equal(
        schemaOf('getFlow').properties.dueDate!.format,
        'date-time',
        'FlowSummary.dueDate is a date-time (spec §2)',
      );
      t.equal(
        schemaOf('getSchedule').properties.dueDate!.format,
        'date',
        'Schedule.dueDate is YYYY-MM-DD (spec §2)',
      );
      t.equal(
        schemaOf('getPublicFlowJson').properties.dueDate!.format,
        'date',
        "the public view's dueDate is YYYY-MM-DD, like the schedule",
      );
      const startDate = ops.get('getSchedule')!.op.parameters.find((p) => p.name === 'startDate')!;
      t.match(
        startDate.schema.description,
        /between 1970-01-01 and 9999-12-31/,
        'the date range is documented',
      );
    },
  );

  t.test('the document answers conditional requests like any GET', async (t) => {
    const etag = res.headers.get('etag');
    t.ok(etag);
    const again = await s.api('GET', '/v1/openapi.json', { headers: { 'if-none-match': etag! } });
    t.equal(again.status, 304);
  });
});

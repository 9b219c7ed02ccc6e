/**
 * Sweeps driven by the server's own OpenAPI document: every operation it lists, with path
 * and query parameters filled from a map of ids by parameter name and a minimal body made
 * from the operation's request schema (checked against that schema with ajv, as the server
 * checks it), so that a route added later is covered without editing the sweeps.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { ApiResponse, RequestOptions, TestServer } from './server.ts';

type Schema = Record<string, any>;

export interface Operation {
  method: string;
  /** As the document writes it: `/v1/flows/{flowId}`. */
  path: string;
  operationId: string;
  /** False for routes that take no credential (public views, probes, OAuth endpoints). */
  authenticated: boolean;
  pathParams: string[];
  /** Every query parameter, with whether it is required and its schema. */
  query: { name: string; required: boolean; schema: Schema }[];
  /** The request body's media type and schema, if the operation has one. */
  body: { type: string; schema: Schema; required: boolean } | null;
  /** Its answer is a stream that stays open (Server-Sent Events): a sweep reading answers whole cannot call it. */
  streams: boolean;
}

/** The server's OpenAPI document (no credential). */
export async function openApi(s: TestServer): Promise<any> {
  const res = await s.api('GET', '/v1/openapi.json');
  if (res.status !== 200) throw new Error(`GET /v1/openapi.json → ${res.status}`);
  return res.body;
}

export function operations(doc: any): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries<Record<string, any>>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const parameters: any[] = op.parameters ?? [];
      const content = op.requestBody?.content as Record<string, { schema: Schema }> | undefined;
      const [type, media] = content ? Object.entries(content)[0]! : [];
      out.push({
        method: method.toUpperCase(),
        path,
        operationId: op.operationId,
        authenticated: (op.security ?? []).length > 0,
        pathParams: [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!),
        query: parameters.filter((p) => p.in === 'query').map((p) => ({ name: p.name, required: Boolean(p.required), schema: p.schema ?? {} })),
        body: type && media ? { type, schema: media.schema ?? {}, required: Boolean(op.requestBody.required) } : null,
        streams: Object.keys(op.responses?.['200']?.content ?? {}).includes('text/event-stream'),
      });
    }
  }
  return out;
}

/** Ids by parameter name; a name may stand for several ids (an objective and a sub-task). */
export type IdMap = Record<string, string[]>;

/** Every path an operation takes with these ids (one per combination). Throws on a name the map lacks. */
export function fillPath(op: Operation, ids: IdMap): string[] {
  let paths = [op.path];
  for (const name of op.pathParams) {
    const values = ids[name];
    if (!values?.length) throw new MissingFixture(name, op);
    paths = paths.flatMap((p) => values.map((v) => p.replace(`{${name}}`, encodeURIComponent(v))));
  }
  return paths;
}

export class MissingFixture extends Error {
  constructor(readonly parameter: string, op: Operation) {
    super(`${op.method} ${op.path}: no id for the path parameter "${parameter}": add what it names to furnish() in test/helpers/workspace-fixtures.ts and its id to the map it returns`);
  }
}

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);

/**
 * A minimal value that `schema` accepts: required properties only (or as many as
 * `minProperties` asks), strings taken from `values` by property name, then from the ids by
 * name or by `pattern`. Throws when the result does not validate, naming the operation.
 */
export function example(schema: Schema, ids: IdMap, values: Record<string, unknown>, what: string, name?: string, withIds = false): unknown {
  const value = make(schema, ids, values, name, withIds);
  const validate = ajv.compile(schema);
  if (!validate(value)) {
    throw new Error(`${what}: the sweep could not make a valid value (${JSON.stringify(value)}: ${ajv.errorsText(validate.errors)}); add a value for it`);
  }
  return value;
}

function make(schema: Schema, ids: IdMap, values: Record<string, unknown>, name: string | undefined, withIds = false): unknown {
  if (name !== undefined && name in values && ajv.validate(schema, values[name])) return values[name];
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const branches: Schema[] | undefined = schema.anyOf ?? schema.oneOf;
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type;
  if (branches && !type) {
    const branch = branches.find((b) => b.type !== 'null') ?? branches[0]!;
    const { anyOf: _a, oneOf: _o, ...rest } = schema;
    return make({ ...rest, ...branch }, ids, values, name, withIds);
  }
  switch (type) {
    case 'object': {
      const properties: Record<string, Schema> = schema.properties ?? {};
      const out: Record<string, unknown> = {};
      for (const key of schema.required ?? []) out[key] = make(properties[key] ?? {}, ids, values, key);
      if (withIds) for (const key of Object.keys(properties)) if (!(key in out) && ids[key]?.length) out[key] = make(properties[key]!, ids, values, key);
      for (const key of Object.keys(properties)) {
        if (Object.keys(out).length >= (schema.minProperties ?? 0)) break;
        if (!(key in out)) out[key] = make(properties[key]!, ids, values, key);
      }
      return out;
    }
    case 'array':
      return Array.from({ length: schema.minItems ?? 0 }, () => make(schema.items ?? {}, ids, values, undefined));
    case 'integer':
    case 'number':
      return schema.minimum ?? 1;
    case 'boolean':
      return false;
    default:
      return string(schema, ids, name);
  }
}

function string(schema: Schema, ids: IdMap, name: string | undefined): string {
  if (name !== undefined && ids[name]?.length) return ids[name]![0]!;
  if (typeof schema.pattern === 'string') {
    const pattern = new RegExp(schema.pattern);
    const id = Object.values(ids).flat().find((v) => pattern.test(v));
    if (id) return id;
  }
  if (schema.format === 'date') return '2031-03-03';
  if (schema.format === 'date-time') return '2031-03-03T09:00:00Z';
  if (schema.format === 'email') return 'sweep@example.com';
  if (schema.format === 'uri') return 'https://example.com/sweep';
  return 'sweep'.padEnd(schema.minLength ?? 0, 'x');
}

export interface Call {
  method: string;
  /** With the query string. */
  url: string;
  options: RequestOptions;
}

/**
 * The calls that exercise one operation with these ids: every path combination, its
 * required query parameters, and a minimal valid body where it takes one (raw bytes for
 * uploads). With `withIds`, optional body fields the map names (an assignee, a task) are
 * filled too: one more call per path when that changes the body.
 */
export function callsFor(op: Operation, ids: IdMap, values: Record<string, unknown>, token: string, withIds = false): Call[] {
  const query = new URLSearchParams();
  for (const q of op.query) {
    if (q.required) query.set(q.name, String(example(q.schema, ids, values, `${op.method} ${op.path} query ${q.name}`, q.name)));
  }
  const search = query.size ? `?${query}` : '';
  const variants: RequestOptions[] = [];
  if (op.body?.type === 'application/json') {
    const what = `${op.method} ${op.path} body`;
    const minimal = example(op.body.schema, ids, values, what);
    variants.push({ token, body: minimal });
    if (withIds) {
      const full = example(op.body.schema, ids, values, what, undefined, true);
      if (JSON.stringify(full) !== JSON.stringify(minimal)) variants.push({ token, body: full });
    }
  } else if (op.body) {
    variants.push({ token, raw: Buffer.from('sweep bytes'), headers: { 'content-type': 'text/plain' } });
  } else {
    variants.push({ token });
  }
  return fillPath(op, ids).flatMap((path) => variants.map((options) => ({ method: op.method, url: path + search, options: structuredClone(options) })));
}

export function send(s: TestServer, call: Call, headers: Record<string, string> = {}): Promise<ApiResponse> {
  return s.api(call.method, call.url, { ...call.options, headers: { ...call.options.headers, ...headers } });
}

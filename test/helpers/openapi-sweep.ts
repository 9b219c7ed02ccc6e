/**
 * Sweeps driven by the server's own OpenAPI document: every operation it lists, with path
 * and query parameters filled from a map of ids by parameter name and a minimal body made
 * from the operation's request schema (checked against that schema with ajv, as the server
 * checks it), so that a route added later is covered without editing the sweeps.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import { SaxesParser } from 'saxes';
import type { ApiResponse, RequestOptions, TestServer } from './server.ts';
import type { JsonDocument } from './wire.ts';

type Schema = JsonDocument;

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
export async function openApi(s: TestServer): Promise<JsonDocument> {
  const res = await s.api<JsonDocument>('GET', '/v1/openapi.json');
  if (res.status !== 200) throw new Error(`GET /v1/openapi.json → ${res.status}`);
  return res.body;
}

export function operations(doc: JsonDocument): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries<JsonDocument>(doc.paths)) {
    for (const [method, op] of Object.entries<JsonDocument>(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue;
      const parameters: JsonDocument[] = op.parameters ?? [];
      const content = op.requestBody?.content as Record<string, { schema: Schema }> | undefined;
      const [type, media] = content ? Object.entries(content)[0]! : [];
      out.push({
        method: method.toUpperCase(),
        path,
        operationId: op.operationId,
        authenticated: (op.security ?? []).length > 0,
        pathParams: [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!),
        query: parameters
          .filter((p) => p.in === 'query')
          .map((p) => ({ name: p.name, required: Boolean(p.required), schema: p.schema ?? {} })),
        body:
          type && media
            ? { type, schema: media.schema ?? {}, required: Boolean(op.requestBody.required) }
            : null,
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
  constructor(
    readonly parameter: string,
    op: Operation,
  ) {
    super(
      `${op.method} ${op.path}: no id for the path parameter "${parameter}": add what it names to furnish() in test/helpers/workspace-fixtures.ts and its id to the map it returns`,
    );
  }
}

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);

/**
 * A minimal value that `schema` accepts: required properties only (or as many as
 * `minProperties` asks), strings taken from `values` by property name, then from the ids by
 * name or by `pattern`. Throws when the result does not validate, naming the operation.
 */
export function example(
  schema: Schema,
  ids: IdMap,
  values: Record<string, unknown>,
  what: string,
  name?: string,
  withIds = false,
): unknown {
  const value = make(schema, ids, values, name, withIds);
  const validate = ajv.compile(schema);
  if (!validate(value)) {
    throw new Error(
      `${what}: the sweep could not make a valid value (${JSON.stringify(value)}: ${ajv.errorsText(validate.errors)}); add a value for it`,
    );
  }
  return value;
}

function make(
  schema: Schema,
  ids: IdMap,
  values: Record<string, unknown>,
  name: string | undefined,
  withIds = false,
): unknown {
  if (name !== undefined && name in values && ajv.validate(schema, values[name]))
    return values[name];
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const branches: Schema[] | undefined = schema.anyOf ?? schema.oneOf;
  const type = Array.isArray(schema.type)
    ? schema.type.find((t: string) => t !== 'null')
    : schema.type;
  // A union, or an object told apart by its branches (a command: `type: object` and `oneOf`).
  if (branches && (!type || (type === 'object' && !schema.properties))) {
    const branch = branches.find((b) => b.type !== 'null') ?? branches[0]!;
    const { anyOf: _a, oneOf: _o, ...rest } = schema;
    return make({ ...rest, ...branch }, ids, values, name, withIds);
  }
  switch (type) {
    case 'object': {
      const properties: Record<string, Schema> = schema.properties ?? {};
      const out: Record<string, unknown> = {};
      for (const key of schema.required ?? [])
        out[key] = make(properties[key] ?? {}, ids, values, key);
      if (withIds)
        for (const key of Object.keys(properties))
          if (!(key in out) && ids[key]?.length)
            out[key] = make(properties[key]!, ids, values, key);
      for (const key of Object.keys(properties)) {
        if (Object.keys(out).length >= (schema.minProperties ?? 0)) break;
        if (!(key in out)) out[key] = make(properties[key]!, ids, values, key);
      }
      return out;
    }
    case 'array':
      return Array.from({ length: schema.minItems ?? 0 }, () =>
        make(schema.items ?? {}, ids, values, undefined),
      );
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
    const id = Object.values(ids)
      .flat()
      .find((v) => pattern.test(v));
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
export function callsFor(
  op: Operation,
  ids: IdMap,
  values: Record<string, unknown>,
  token: string,
  withIds = false,
  /** Optional query parameters to send anyway, by name (a day to read a schedule from). */
  pinned: Record<string, string> = {},
): Call[] {
  const query = new URLSearchParams();
  for (const q of op.query) {
    const value = pinned[q.name];
    if (value !== undefined) query.set(q.name, value);
    else if (q.required)
      query.set(
        q.name,
        String(example(q.schema, ids, values, `${op.method} ${op.path} query ${q.name}`, q.name)),
      );
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
    variants.push({
      token,
      raw: Buffer.from('sweep bytes'),
      headers: { 'content-type': 'text/plain' },
    });
  } else {
    variants.push({ token });
  }
  return fillPath(op, ids).flatMap((path) =>
    variants.map((options) => ({
      method: op.method,
      url: path + search,
      options: structuredClone(options),
    })),
  );
}

/** Sends a call; `T`: what the caller reads the body as. */
export function send<T = unknown>(
  s: TestServer,
  call: Call,
  headers: Record<string, string> = {},
): Promise<ApiResponse<T>> {
  return s.api<T>(call.method, call.url, {
    ...call.options,
    headers: { ...call.options.headers, ...headers },
  });
}

// ---- property-based sweep: generated values and checks of every answer against the document ----

/**
 * Text a person may well type as a name, every character of it printable: any script,
 * right-to-left text with bidi controls, markup, emoji, and 300 characters (some of it longer
 * than a field allows: the sweep decides with ajv).
 */
export const printableText: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    'مرحبا بالعالم',
    'خطة الإطلاق ١',
    'שלום עולם',
    'תוכנית \u05d0 → ב',
    '\u202eevil\u202c',
    'a\u200fb\u200e',
    'mixed English עברית عربى 123',
  ),
  fc.constantFrom(
    '<b>&amp;</b>',
    ']]>',
    '"\'<&>',
    '<!--',
    '&#0;',
    '&lt;svg onload=alert(1)&gt;',
    '{{name}}',
    '%s%n',
    ' leading and trailing ',
  ),
  fc.constantFrom('x'.repeat(300), 'é'.repeat(300), '😀'.repeat(300), 'ש'.repeat(300)),
  fc.string({ unit: 'grapheme', minLength: 300, maxLength: 300 }),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 }),
);

/**
 * Text a hostile or careless client sends as a name: the printable kinds, and any code
 * point (lone surrogates included), C0 control characters, newlines and line separators.
 */
export const hostileText: fc.Arbitrary<string> = fc.oneof(
  printableText,
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc
    .string({
      unit: fc.oneof(
        fc.integer({ min: 0, max: 0x1f }).map((c) => String.fromCharCode(c)),
        fc.constantFrom('a', 'Z', ' ', '\u007f', '\u0085'),
      ),
      minLength: 1,
      maxLength: 12,
    })
    .map((s) => `x${s}y`),
  fc.constantFrom('line one\nline two', 'a\r\nb', '\n', 'tab\there', 'x\u2028y\u2029z'),
  // Lone surrogates: valid in a JSON string (escaped), no Unicode character at all.
  fc.constantFrom('x\ud800y', '\udfff', '😀'.slice(0, 1)),
);

/** Calendar dates at the edges of what `Date`, Postgres and four-digit years can hold, valid and not. */
export const EDGE_DATES = [
  '0000-01-01',
  '0001-01-01',
  '0093-01-28',
  '0099-12-31',
  '0100-01-01',
  '1000-01-01',
  '1899-12-31',
  '1900-01-01',
  '1969-12-31',
  '1970-01-01',
  '2000-02-29',
  '2024-02-29',
  '2038-01-19',
  '9999-12-30',
  '9999-12-31',
  '2023-02-29',
  '2031-13-01',
  '2031-00-10',
  '2031-04-31',
  '10000-01-01',
  '+010000-01-01',
  '-000001-01-01',
  '2031-3-3',
  '20310303',
  '',
];
export const edgeDate: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...EDGE_DATES) },
  {
    weight: 1,
    arbitrary: fc
      .date({
        min: new Date('0000-01-01T00:00:00Z'),
        max: new Date('9999-12-31T00:00:00Z'),
        noInvalidDate: true,
      })
      .map((d) => d.toISOString().slice(0, 10)),
  },
);
export const edgeDateTime: fc.Arbitrary<string> = fc.oneof(
  edgeDate.map((d) => `${d}T00:00:00Z`),
  fc.constantFrom(
    '9999-12-31T23:59:59Z',
    '9999-12-31T23:59:59-12:00',
    '0000-01-01T00:00:00+14:00',
    '1969-12-31T23:59:59.999Z',
    '2031-03-03T25:00:00Z',
  ),
);

/** Schema words that narrow a type, copied onto an anyOf/oneOf branch. */
function merged(base: Schema, branch: Schema): Schema {
  const { anyOf: _a, oneOf: _o, ...rest } = base;
  return { ...rest, ...branch };
}

/**
 * Values for a JSON schema, mostly ones it accepts with some it does not (a number past its
 * maximum, a string of 300 characters where 200 are allowed): `ids` supply real ids for
 * fields named like path parameters (`taskId`, `assigneeId`) or listed in `aliases`.
 */
export function arbitraryFor(
  schema: Schema,
  ids: IdMap,
  name?: string,
  aliases: Record<string, string> = {},
): fc.Arbitrary<unknown> {
  const idName = name === undefined ? undefined : ids[name]?.length ? name : aliases[name];
  if ('const' in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum))
    return fc.oneof(
      { weight: 9, arbitrary: fc.constantFrom(...schema.enum) },
      { weight: 1, arbitrary: fc.constant('not-one-of-them') },
    );
  const branches: Schema[] | undefined = schema.anyOf ?? schema.oneOf;
  if (branches)
    return fc.oneof(...branches.map((b) => arbitraryFor(merged(schema, b), ids, name, aliases)));
  if (Array.isArray(schema.type))
    return fc.oneof(
      ...schema.type.map((type: string) => arbitraryFor({ ...schema, type }, ids, name, aliases)),
    );
  switch (schema.type) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
    case 'number': {
      const min = schema.minimum ?? schema.exclusiveMinimum ?? -1_000_000;
      const max = schema.maximum ?? schema.exclusiveMaximum ?? 1_000_000;
      const inRange =
        schema.type === 'integer'
          ? fc.integer({ min, max })
          : fc.double({ min, max, noNaN: true, noDefaultInfinity: true });
      return fc.oneof(
        { weight: 6, arbitrary: inRange },
        { weight: 2, arbitrary: fc.constantFrom(min, max) },
        { weight: 1, arbitrary: fc.constantFrom(min - 1, max + 1, 0.5, 2 ** 53) },
      );
    }
    case 'array': {
      const items = arbitraryFor(schema.items ?? {}, ids, idName ?? name, aliases);
      const minLength = schema.minItems ?? 0;
      const maxLength = Math.min(schema.maxItems ?? 4, minLength + 4);
      return schema.uniqueItems
        ? fc.uniqueArray(items, { minLength, maxLength, selector: (v) => JSON.stringify(v) })
        : fc.array(items, { minLength, maxLength });
    }
    case 'object': {
      const properties: Record<string, Schema> = schema.properties ?? {};
      const model = Object.fromEntries(
        Object.entries(properties).map(([key, property]) => [
          key,
          arbitraryFor(property, ids, key, aliases),
        ]),
      );
      return fc.record(model, {
        requiredKeys: (schema.required ?? []).filter((key: string) => key in properties),
      });
    }
    default:
      return stringFor(schema, ids, idName);
  }
}

function stringFor(schema: Schema, ids: IdMap, idName: string | undefined): fc.Arbitrary<string> {
  const real = idName ? (ids[idName] ?? []) : [];
  const matching =
    typeof schema.pattern === 'string'
      ? Object.values(ids)
          .flat()
          .filter((v) => new RegExp(schema.pattern).test(v))
      : [];
  const known = [...new Set([...real, ...matching])];
  let own: fc.Arbitrary<string>;
  if (schema.format === 'date') own = edgeDate;
  else if (schema.format === 'date-time') own = edgeDateTime;
  else if (schema.format === 'email') own = fc.oneof(fc.emailAddress(), hostileText);
  else if (schema.format === 'uri') own = fc.oneof(fc.webUrl(), hostileText);
  else if (typeof schema.pattern === 'string' && schema.pattern !== '\\S')
    own = fc.oneof(fc.stringMatching(new RegExp(schema.pattern)), hostileText);
  else own = hostileText;
  return known.length
    ? fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...known) }, { weight: 1, arbitrary: own })
    : own;
}

/** A value turned invalid for its schema: a required field dropped, an unknown field, a field of the wrong type, or another type altogether. */
export function broken(value: unknown, schema: Schema): fc.Arbitrary<unknown> {
  const whole = fc.constantFrom<unknown>(null, [], 'text', 42, true, {});
  if (!value || typeof value !== 'object' || Array.isArray(value)) return whole;
  const keys = Object.keys(value);
  const required: string[] = schema.required ?? [];
  const wrong = fc.constantFrom<unknown>(null, [], {}, 'text', -1, 1e308, true, [null]);
  return fc.oneof(
    whole,
    fc.constant({ ...value, sweepUnknownField: 1 }),
    ...(required.length
      ? [
          fc
            .constantFrom(...required)
            .map((key) => Object.fromEntries(Object.entries(value).filter(([k]) => k !== key))),
        ]
      : []),
    ...(keys.length
      ? [fc.tuple(fc.constantFrom(...keys), wrong).map(([key, v]) => ({ ...value, [key]: v }))]
      : []),
  );
}

/** ajv as the server runs it: bodies as sent, query and form values coerced from strings. */
const bodies = new Ajv2020({ strict: false, allErrors: true, useDefaults: true });
const strings = new Ajv2020({
  strict: false,
  allErrors: true,
  useDefaults: true,
  coerceTypes: 'array',
});
addFormats.default(bodies);
addFormats.default(strings);
const compiled = new WeakMap<object, ValidateFunction>();

/** Whether the server's own validation should accept this value (query and form values coerced). */
export function accepts(schema: Schema, value: unknown, coerce = false): boolean {
  const ajvFor = coerce ? strings : bodies;
  let validate = compiled.get(schema);
  if (!validate || coerce !== (validate as { coerce?: boolean }).coerce) {
    validate = Object.assign(ajvFor.compile(schema), { coerce });
    compiled.set(schema, validate);
  }
  return validate(structuredClone(value)) as boolean;
}

/** The object schema of an operation's query parameters, as the server validates them. */
export function querySchema(op: Operation): Schema {
  return {
    type: 'object',
    properties: Object.fromEntries(op.query.map((q) => [q.name, q.schema])),
    required: op.query.filter((q) => q.required).map((q) => q.name),
  };
}

/** An answer read whole, as bytes and as text. */
export interface Answer {
  status: number;
  headers: Headers;
  bytes: Buffer;
  text: string;
}

/** One request as a client sends it (no redirect followed); status 0 when the connection ended without an answer. */
export async function exchange(
  base: string,
  method: string,
  url: string,
  headers: Record<string, string>,
  body?: string | Buffer,
): Promise<Answer> {
  try {
    const res = await fetch(base + url, { method, headers, body, redirect: 'manual' });
    const bytes = Buffer.from(await res.arrayBuffer());
    return { status: res.status, headers: res.headers, bytes, text: bytes.toString('utf8') };
  } catch (error) {
    return {
      status: 0,
      headers: new Headers(),
      bytes: Buffer.alloc(0),
      text: String((error as Error).cause ?? error),
    };
  }
}

/** Whether text is well-formed XML 1.0 (saxes: a conforming parser, which refuses the characters XML forbids); the first problem otherwise. */
export function xmlProblem(text: string): string | null {
  const parser = new SaxesParser({ xmlns: true });
  let problem: string | null = null;
  parser.on('error', (error) => {
    problem ??= error.message;
  });
  try {
    parser.write(text).close();
  } catch (error) {
    problem ??= (error as Error).message;
  }
  return problem;
}

/**
 * Checks of answers against the document: a status the operation documents (405 and 501 for
 * a method it lacks), a concrete media type among those documented for that status, a JSON
 * body its schema accepts, and any SVG well-formed XML. Returns what is wrong, or nothing.
 */
export class Conformance {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(private readonly doc: JsonDocument) {
    addFormats.default(this.ajv);
  }

  /** `#/components/…` references resolved in place, so each response schema compiles on its own. */
  private resolve(node: unknown): unknown {
    if (Array.isArray(node)) return node.map((n) => this.resolve(n));
    if (!node || typeof node !== 'object') return node;
    const ref = (node as { $ref?: unknown }).$ref;
    if (typeof ref === 'string' && ref.startsWith('#/')) {
      const target = ref
        .slice(2)
        .split('/')
        .reduce<JsonDocument | undefined>(
          (at, part) => at?.[part.replace(/~1/g, '/').replace(/~0/g, '~')],
          this.doc,
        );
      return this.resolve(target);
    }
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, this.resolve(v)]));
  }

  /** The documented answers for this method on this path: the operation's, or the edge's 405 when the path lacks the method. */
  responsesFor(path: string, method: string): JsonDocument {
    const op = this.doc.paths[path]?.[method.toLowerCase()];
    if (op) return op.responses;
    const notAllowed = this.doc.components.responses.MethodNotAllowed;
    return { '405': notAllowed, '501': notAllowed };
  }

  check(path: string, method: string, answer: Answer): string[] {
    const problems: string[] = [];
    if (answer.status === 0) return [`no answer (${answer.text})`];
    if (answer.status >= 500) problems.push(`a server error, ${answer.status}`);
    const documented = this.responsesFor(path, method)[String(answer.status)];
    if (!documented)
      return [
        ...problems,
        `status ${answer.status} is not documented (${Object.keys(this.responsesFor(path, method)).join(', ')})`,
      ];
    const content: Record<string, { schema?: Schema }> = documented.content ?? {};
    const header = answer.headers.get('content-type') ?? '';
    const type = header.split(';')[0]!.trim().toLowerCase();
    if (Object.keys(content).length === 0) {
      if (answer.status === 204 && answer.bytes.length)
        problems.push(`204 with a body of ${answer.bytes.length} bytes`);
      return problems;
    }
    if (!/^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/.test(type))
      problems.push(`content type "${header}" is not a media type`);
    const media = content[type] ?? content['*/*'];
    if (!media)
      return [
        ...problems,
        `content type "${header}" is not documented for ${answer.status} (${Object.keys(content).join(', ')})`,
      ];
    if (type === 'application/json' || type.endsWith('+json')) {
      let body: unknown;
      try {
        body = JSON.parse(answer.text);
      } catch {
        return [...problems, `${type} that does not parse: ${answer.text.slice(0, 120)}`];
      }
      const key = `${method} ${path} ${answer.status} ${type}`;
      let validate = this.validators.get(key);
      if (!validate) {
        validate = this.ajv.compile(this.resolve(media.schema ?? {}) as Schema);
        this.validators.set(key, validate);
      }
      if (!validate(body))
        problems.push(
          `body breaks the documented schema: ${this.ajv.errorsText(validate.errors, { separator: '; ' }).slice(0, 400)}`,
        );
    }
    if (type === 'image/svg+xml') {
      const xml = xmlProblem(answer.text);
      if (xml) problems.push(`SVG that is not well-formed XML: ${xml}`);
    }
    return problems;
  }
}

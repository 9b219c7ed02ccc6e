/**
 * What README.md says of the API, held to the OpenAPI document the server serves (the schemas
 * the edge validates with), so that the prose cannot drift from the interface. The claims are
 * read from the prose mechanically; fenced blocks are left to test/ops/readme.test.ts, which runs
 * them. A block of prose is a paragraph, a list item or a table row; a sentence ends at a full
 * stop before a capital, a backtick or a bracket.
 *
 * - A refusal: a status and a backticked error code (409 `TASK_STARTED`, or `429 RATE_LIMITED`)
 *   is one the document answers with that status; where its sentence names routes (`PATCH
 *   /v1/flows/{flowId}`, or the end of one: `POST /batch`), one of them answers it.
 * - A field: a backticked camelCase name (`estimateHours`, `onTrack`) is a property, parameter or
 *   named value of the document.
 * - A date format: a sentence that names a date field and `YYYY-MM-DD` or a date-time says which
 *   form that field takes, and every form the document gives it must be among those the sentence
 *   names. A field that is a day in one answer and an instant in another is named with both.
 */
import { readFileSync } from 'node:fs';
import t from 'tap';
import { startTestServer } from '../helpers/server.ts';

type Json = unknown;
type Format = 'date' | 'date-time';

/** What the document says: each field's date forms, every name it knows, each status's codes by route. */
interface Interface {
  formats: Map<string, Set<Format>>;
  names: Set<string>;
  /** `METHOD path` → status → codes; `*` holds the codes any path may answer (405). */
  refusals: Map<string, Map<string, Set<string>>>;
}

const METHODS = ['get', 'put', 'post', 'patch', 'delete'];

function formatsOf(schema: Json, into: Set<Format>): void {
  if (!schema || typeof schema !== 'object') return;
  const s = schema as Record<string, Json>;
  if (s.format === 'date' || s.format === 'date-time') into.add(s.format);
  for (const key of ['anyOf', 'oneOf', 'allOf'])
    if (Array.isArray(s[key])) for (const part of s[key] as Json[]) formatsOf(part, into);
  formatsOf(s.items, into);
}

export function readInterface(doc: Json): Interface {
  const known: Interface = { formats: new Map(), names: new Set(), refusals: new Map() };
  const field = (name: string, schema: Json) => {
    known.names.add(name);
    const formats = known.formats.get(name) ?? new Set<Format>();
    formatsOf(schema, formats);
    if (formats.size > 0) known.formats.set(name, formats);
  };
  const walk = (node: Json): void => {
    if (Array.isArray(node)) return node.forEach(walk);
    if (!node || typeof node !== 'object') return;
    const n = node as Record<string, Json>;
    if (n.properties && typeof n.properties === 'object')
      for (const [name, schema] of Object.entries(n.properties)) field(name, schema);
    if (typeof n.name === 'string' && typeof n.in === 'string') field(n.name, n.schema);
    for (const value of [n.const, ...(Array.isArray(n.enum) ? n.enum : [])])
      if (typeof value === 'string') known.names.add(value);
    Object.values(n).forEach(walk);
  };
  walk(doc);
  const codes = (response: Json) =>
    Object.values(
      ((response as { content?: Record<string, { examples?: Record<string, Json> }> }).content ??
        {}) as Record<string, { examples?: Record<string, Json> }>,
    ).flatMap((media) => Object.keys(media.examples ?? {}));
  const add = (route: string, status: string, list: string[]) => {
    const byStatus = known.refusals.get(route) ?? new Map<string, Set<string>>();
    byStatus.set(status, new Set([...(byStatus.get(status) ?? []), ...list]));
    known.refusals.set(route, byStatus);
  };
  const d = doc as {
    paths: Record<string, Record<string, { responses: Record<string, Json> }>>;
    components: { responses: Record<string, Json> };
  };
  for (const [path, operations] of Object.entries(d.paths))
    for (const [method, operation] of Object.entries(operations))
      if (METHODS.includes(method))
        for (const [status, response] of Object.entries(operation.responses))
          add(`${method.toUpperCase()} ${path}`, status, codes(response));
  add('*', '405', codes(d.components.responses.MethodNotAllowed));
  return known;
}

/** The prose of a Markdown text (fences, headings and images left out), as blocks of one line each. */
export function proseBlocks(markdown: string): string[] {
  const blocks: string[][] = [];
  let fenced = false;
  let current: string[] | null = null;
  for (const line of markdown.split('\n')) {
    if (/^```/.test(line)) {
      fenced = !fenced;
      current = null;
      continue;
    }
    if (fenced || line.trim() === '' || /^#{1,6} /.test(line) || /^!\[/.test(line)) {
      current = null;
      continue;
    }
    if (!current || /^\s*[-*] /.test(line) || /^\|/.test(line)) blocks.push((current = []));
    current.push(line.trim());
  }
  return blocks.map((lines) => lines.join(' '));
}

export function sentences(block: string): string[] {
  return block.split(/(?<=[.!?])\s+(?=[A-Z`([*])/);
}

const ROUTE = /\b(GET|PUT|POST|PATCH|DELETE) (\/[^\s`),;]*)/g;
const REFUSAL = /`?\b([1-5]\d\d) `?([A-Z][A-Z_]{2,})`/g;
const CAMEL = /^[a-z][a-z0-9]*[A-Z][A-Za-z0-9]*$/;

/** The routes of the document a sentence's `METHOD /path` names: the whole path, or its end. */
function routesNamed(sentence: string, known: Interface): string[] {
  const normal = (path: string) => path.replace(/\{[^}]*\}/g, '{}').replace(/\/$/, '');
  return [...sentence.matchAll(ROUTE)].flatMap(([, method, path]) =>
    [...known.refusals.keys()].filter((route) => {
      const [m, p] = route.split(' ');
      return m === method && normal(`${p}/`).endsWith(`${normal(`${path}/`)}`);
    }),
  );
}

/** How many claims of each kind were read, and those the document contradicts, each in a line that quotes it. */
export function check(
  markdown: string,
  known: Interface,
): { read: { refusals: number; fields: number; formats: number }; found: string[] } {
  const read = { refusals: 0, fields: 0, formats: 0 };
  const found: string[] = [];
  for (const sentence of proseBlocks(markdown).flatMap(sentences)) {
    const quote = sentence.length > 160 ? `${sentence.slice(0, 157)}…` : sentence;
    for (const [, status, code] of sentence.matchAll(REFUSAL)) {
      read.refusals++;
      const named = routesNamed(sentence, known);
      const answering = [...known.refusals].filter(
        ([route, byStatus]) =>
          byStatus.get(status!)?.has(code!) && (named.length === 0 || named.includes(route)),
      );
      if (answering.length === 0)
        found.push(
          `${status} ${code}: ${named.length ? `not an answer of ${named.join(', ')}` : 'no route answers it'} — "${quote}"`,
        );
    }
    const ticked = [...sentence.matchAll(/`([^`]+)`/g)].map(([, text]) => text!);
    for (const name of ticked.filter((text) => CAMEL.test(text))) {
      read.fields++;
      if (!known.names.has(name)) found.push(`\`${name}\`: no such field — "${quote}"`);
    }
    const claimed = new Set<Format>();
    if (/YYYY-MM-DD/.test(sentence)) claimed.add('date');
    if (/\bdate-times?\b/.test(sentence)) claimed.add('date-time');
    if (claimed.size === 0) continue;
    for (const name of new Set(ticked)) {
      const forms = known.formats.get(name);
      if (forms) read.formats++;
      const missing = [...(forms ?? [])].filter((form) => !claimed.has(form));
      if (missing.length > 0)
        found.push(
          `\`${name}\` is also a ${missing.join(' and a ')} in the OpenAPI document, which this sentence does not say — "${quote}"`,
        );
    }
  }
  return { read, found };
}

const contradictions = (markdown: string, known: Interface) => check(markdown, known).found;

t.test(
  "README.md's refusals, fields and date formats agree with the OpenAPI document",
  async (t) => {
    const s = await startTestServer(t);
    const doc = (await s.api('GET', '/v1/openapi.json')).body;
    const known = readInterface(doc);
    t.ok(known.formats.size > 10 && known.refusals.size > 50, 'the document is read');
    const readme = readFileSync('README.md', 'utf8');
    const { read, found } = check(readme, known);
    t.strictSame(found, [], 'none contradicted');
    // What the README holds today, less a margin: the extraction reads claims, not none.
    t.ok(read.refusals >= 10, `${read.refusals} refusals read`);
    t.ok(read.fields >= 20, `${read.fields} fields read`);
    t.ok(read.formats >= 6, `${read.formats} date formats read`);

    t.test('and the checks catch what they are for', async (t) => {
      const claims = (text: string) => contradictions(text, known);
      t.matchOnlyStrict(
        claims(
          'Dates (`dueDate`, `startDate`) lie between 1970-01-01 and 9999-12-31 (UTC), so every date an answer carries stays a `YYYY-MM-DD`.',
        ),
        [/^`dueDate` is also a date-time/, /^`startDate` is also a date-time/],
        "the README's old claim: a flow's dueDate is a date-time, and startDate may be sent as one",
      );
      t.matchOnlyStrict(claims('A task keeps `startedAt` as `YYYY-MM-DD`.'), [
        /startedAt` is also a date-time/,
      ]);
      t.strictSame(claims('A task keeps `startedAt` as a date-time.'), []);
      t.matchOnlyStrict(claims('That is 409 `TASK_BLOKED`.'), [
        /409 TASK_BLOKED: no route answers it/,
      ]);
      t.matchOnlyStrict(claims('That is 400 `TASK_STARTED`.'), [
        /400 TASK_STARTED: no route answers it/,
      ]);
      t.strictSame(claims('`PATCH /v1/flows/{id}/tasks/{taskId}` may be 409 `TASK_STARTED`.'), []);
      t.matchOnlyStrict(claims('`GET /v1/work/available` may be 409 `TASK_STARTED`.'), [
        /not an answer of GET \/v1\/work\/available/,
      ]);
      t.strictSame(claims('A lower-case `get` is 405 `METHOD_NOT_ALLOWED`.'), [], 'any path: 405');
      t.matchOnlyStrict(claims('Give it an `estimatedHours`.'), [
        /`estimatedHours`: no such field/,
      ]);
      t.strictSame(
        claims('Give it an `estimateHours`, then `updateTask` it.'),
        [],
        'ops are names',
      );
      t.strictSame(
        claims('```sh\ncurl -d \'{"bogusField": 1}\'\n```\n'),
        [],
        'fenced blocks are not prose',
      );
    });
  },
);

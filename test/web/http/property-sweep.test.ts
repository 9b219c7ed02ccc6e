/**
 * A property-based sweep generated from the served OpenAPI document (fast-check): every
 * operation, called with generated requests — ids of real fixtures where a path names one,
 * names of any Unicode (control characters, right-to-left text, newlines, 300 characters),
 * dates at the edges of the range, wrong types, unknown fields, missing credentials, methods
 * the path lacks — then flows of 0–60 tasks at any density of dependencies (none included)
 * and brainstorms, published, with every rendering derived from them: the public page, its
 * JSON, its SVG, the embed, and the PNG and PDF exports.
 *
 * Every answer: no 5xx and never silence; a status the operation documents; a media type
 * documented for that status; a JSON body its documented schema accepts; an SVG that is
 * well-formed XML; a 4xx for input the document says is invalid; a validation failure that
 * points at the field. A new seed each run (printed; `SWEEP_SEED=<n>` replays one): any
 * failure names its request and is a defect, in the server or in its document.
 */
import t, { type Test } from 'tap';
import fc from 'fast-check';
import { startFlowServer } from '../../helpers/flows.ts';
import {
  Conformance,
  EDGE_DATES,
  accepts,
  arbitraryFor,
  broken,
  edgeDate,
  exchange,
  hostileText,
  printableText,
  openApi,
  operations,
  querySchema,
  type Answer,
  type IdMap,
  type Operation,
} from '../../helpers/openapi-sweep.ts';
import { furnish } from '../../helpers/workspace-fixtures.ts';
import { decodePdf, decodePng } from '../../services/exports/decode.ts';
import { startReceiver } from '../../services/webhooks/receiver.ts';
import type { JsonDocument } from '../../helpers/wire.ts';

const SEED = process.env.SWEEP_SEED
  ? Number(process.env.SWEEP_SEED)
  : Math.floor(Math.random() * 2 ** 31);
/** Requests generated per operation, generated flows and brainstorms: sized for well under a minute on two cores. */
const RUNS_PER_OPERATION = 6;
const FLOWS = 6;
const BOARDS = 4;

/** Body fields that name something by another parameter's id. */
const ALIASES: Record<string, string> = {
  after: 'taskId',
  before: 'taskId',
  parentId: 'taskId',
  parent: 'ideaId',
};
/** Methods a documented path may lack (405), and methods no path has. */
const OTHER_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
const UNKNOWN_METHODS = ['QUERY', 'PROPFIND', 'FOO'];

interface Sent {
  method: string;
  /** The document's path, for the checks. */
  path: string;
  url: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  /** Why the document says this request is invalid; null when it is valid. */
  invalid: string | null;
  /** The body as a value, when it was an object: a validation failure must then point into it. */
  object: boolean;
}

t.test(
  'every operation and every rendering answers as documented, on generated requests',
  async (t) => {
    t.comment(`property sweep seed ${SEED} (replay with SWEEP_SEED=${SEED})`);
    const started = Date.now();
    // Budgets no sweep reaches: a 429 would be documented, but would stand in the way of the renderings that must be served.
    const s = await startFlowServer(t, {
      webhookAllowPrivate: true,
      addressRateLimitPerMinute: 1_000_000,
      addressRateLimitBurst: 1_000_000,
    });
    const receiver = await startReceiver(t);
    const doc = await openApi(s);
    const conformance = new Conformance(doc);
    const w = await furnish(t, s, s.workspaceId, { marker: 'Sweep', receiverUrl: receiver.url });
    const ids: IdMap = structuredClone(w.ids);
    ids.token = [];
    const auth = { authorization: `Bearer ${w.key}` };

    /** The subtest running: where problems are reported. */
    let at: Test = t;
    /** What a request depends on beyond itself (the generated flow a public view shows), for the report. */
    let context = '';
    let requests = 0;
    let failed = 0;
    const statuses = new Map<number, number>();

    const repro = (r: Sent) =>
      `${r.method} ${r.url}${r.body === undefined ? '' : ` ${r.headers['content-type'] ?? ''} ${printable(String(r.body).slice(0, 300))}`}`;

    /** Sends, checks against the document, and reports each problem with the request that shows it. */
    const send = async (r: Sent, expected?: (a: Answer) => string[]): Promise<Answer> => {
      const answer = await exchange(s.url, r.method, r.url, r.headers, r.body);
      requests += 1;
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      const problems = conformance.check(r.path, r.method, answer);
      if (answer.status !== 0) {
        if (r.invalid && (answer.status < 400 || answer.status >= 500))
          problems.push(`invalid input (${r.invalid}) answered ${answer.status}`);
        problems.push(...pointers(r, answer), ...(expected?.(answer) ?? []));
      }
      // A 500's cause is in the server's log, never in the answer.
      const cause =
        answer.status >= 500 && s.logged.length > 0
          ? `\n    logged: ${printable(s.logged.slice(-2).join('\n').slice(0, 2000))}`
          : '';
      for (const problem of problems) {
        failed += 1;
        at.fail(
          `${problem}\n    request: ${repro(r)}\n    answer: ${answer.status} ${answer.headers.get('content-type') ?? ''} ${printable(answer.text.slice(0, 300))}${context}${cause}\n    seed: ${SEED}`,
        );
      }
      noteIds(r, answer);
      return answer;
    };

    /** A VALIDATION_FAILED for a query, or for a body sent as a non-empty object, names the field it refuses; one for a body needs a body. */
    const pointers = (r: Sent, answer: Answer): string[] => {
      if (answer.status !== 400) return [];
      let errors: { in?: string; pointer?: string }[] = [];
      try {
        const body = JSON.parse(answer.text);
        if (body?.error?.code !== 'VALIDATION_FAILED') return [];
        errors = body.error.details?.errors ?? [];
      } catch {
        return [];
      }
      return errors.flatMap((e) => {
        if (e.in === 'body' && r.body === undefined)
          return [
            `VALIDATION_FAILED blames a body the request did not send (pointer "${e.pointer ?? ''}")`,
          ];
        // An empty object is refused as a whole ("must have at least 1 field"): it has no field to point at.
        if ((e.in === 'query' || (e.in === 'body' && r.object && r.body !== '{}')) && !e.pointer)
          return [
            `VALIDATION_FAILED points at no field of the ${e.in} (pointer "${e.pointer ?? ''}")`,
          ];
        return [];
      });
    };

    /** What the sweep creates becomes a fixture too: a new id, a fresh public token. */
    const noteIds = (r: Sent, answer: Answer) => {
      if (answer.status >= 300 || !/json/.test(answer.headers.get('content-type') ?? '')) return;
      let body: JsonDocument;
      try {
        body = JSON.parse(answer.text);
      } catch {
        return;
      }
      if (typeof body?.publicUrl === 'string')
        ids.token!.push(new URL(body.publicUrl).pathname.split('/').pop()!);
      if (r.method !== 'POST' || answer.status !== 201 || typeof body?.id !== 'string' || r.invalid)
        return;
      const child = Object.keys(doc.paths).find(
        (p) => p.startsWith(`${r.path}/{`) && /^\/\{[^}]+\}$/.test(p.slice(r.path.length)),
      );
      const name = child?.slice(r.path.length + 2, -1);
      if (name && ids[name]) ids[name]!.push(body.id);
    };

    // The fixture flow and brainstorm are published, so the public views have tokens to read.
    for (const [path, url] of [
      ['/v1/flows/{flowId}/publish', `/v1/flows/${ids.flowId![0]}/publish`],
      ['/v1/brainstorms/{brainstormId}/publish', `/v1/brainstorms/${ids.brainstormId![0]}/publish`],
    ] as const) {
      const answer = await send({
        method: 'POST',
        path,
        url,
        headers: auth,
        invalid: null,
        object: false,
      });
      t.equal(answer.status, 200, `published ${url}`);
    }

    /** A stream's head only: its status and media type, then the connection is let go. */
    const sendStream = async (r: Sent) => {
      const controller = new AbortController();
      let answer: Answer;
      try {
        const res = await fetch(s.url + r.url, {
          method: r.method,
          headers: r.headers,
          signal: controller.signal,
        });
        answer = { status: res.status, headers: res.headers, bytes: Buffer.alloc(0), text: '' };
        if (res.status === 200) controller.abort();
        else answer.text = await res.text();
      } catch (error) {
        answer = {
          status: 0,
          headers: new Headers(),
          bytes: Buffer.alloc(0),
          text: String((error as Error).cause ?? error),
        };
      }
      requests += 1;
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      for (const problem of conformance.check(r.path, r.method, answer)) {
        failed += 1;
        at.fail(
          `${problem}\n    request: ${repro(r)}\n    answer: ${answer.status} ${answer.headers.get('content-type') ?? ''}\n    seed: ${SEED}`,
        );
      }
    };

    await t.test('every operation of the document, on generated requests', async (t) => {
      at = t;
      const ops = operations(doc);
      // Writes first (what they make is then read), reads, then what takes fixtures away or
      // changes a public token: publishing, unpublishing, deleting.
      const phase = (op: Operation) =>
        op.method === 'DELETE' || /\/(un)?publish$/.test(op.path) ? 2 : op.method === 'GET' ? 1 : 0;
      const ordered = [...ops].sort((a, b) => phase(a) - phase(b));
      t.ok(ordered.length > 80, `${ordered.length} operations`);
      for (const [index, op] of ordered.entries()) {
        const samples = fc.sample(requestFor(op), {
          seed: SEED + index,
          numRuns: op.streams ? 2 : RUNS_PER_OPERATION,
        });
        // An operation's requests at once: what one request of them does to another is part of what is swept.
        await Promise.all(samples.map((r) => (op.streams && !r.invalid ? sendStream(r) : send(r))));
      }
    });

    function requestFor(op: Operation): fc.Arbitrary<Sent> {
      const bogusId = fc
        .oneof(
          fc.constantFrom(
            'flw_nope',
            'tsk_0',
            'usr_nobody',
            'x'.repeat(101),
            '0',
            '%',
            '\u0000',
            'ש',
          ),
          hostileText,
        )
        // A lone surrogate has no UTF-8 to percent-encode (a client cannot send one in a path), and dots alone are resolved away by the URL.
        .map((v) => v.replace(/\p{Cs}/gu, '\uFFFD'))
        .filter((v) => v.length > 0 && !/^\.+$/.test(v));
      const pathValues = fc.tuple(
        ...op.pathParams.map((name) => {
          const real = ids[name] ?? [];
          return real.length
            ? fc.oneof(
                {
                  weight: 9,
                  arbitrary: fc.constantFrom(...real).map((v) => ({ v, bogus: false })),
                },
                { weight: 1, arbitrary: bogusId.map((v) => ({ v, bogus: true })) },
              )
            : bogusId.map((v) => ({ v, bogus: true }));
        }),
      );
      const qSchema = querySchema(op);
      // A long poll waits up to 30 s for an event: a sweep asks for none.
      if (qSchema.properties.wait)
        qSchema.properties.wait = { ...qSchema.properties.wait, maximum: 0 };
      const query = arbitraryFor(qSchema, ids, undefined, ALIASES) as fc.Arbitrary<
        Record<string, unknown>
      >;
      const method = fc.oneof(
        { weight: 14, arbitrary: fc.constant(op.method) },
        {
          weight: 1,
          arbitrary: fc.constantFrom(
            ...OTHER_METHODS.filter((m) => !doc.paths[op.path][m.toLowerCase()]),
            ...UNKNOWN_METHODS,
          ),
        },
      );
      const credential = fc.oneof(
        { weight: 12, arbitrary: fc.constant(auth.authorization) },
        { weight: 1, arbitrary: fc.constantFrom(null, 'Bearer fpk_bogus', 'Basic eDp5') },
      );
      const body: fc.Arbitrary<{
        body?: string | Buffer;
        type?: string;
        invalid: string | null;
        object: boolean;
      }> = (() => {
        const media = op.body;
        if (!media) return fc.constant({ invalid: null, object: false });
        if (media.type === 'application/json') {
          const valid = arbitraryFor(media.schema, ids, undefined, ALIASES);
          const value = fc.oneof(
            { weight: 3, arbitrary: valid },
            { weight: 1, arbitrary: valid.chain((v) => broken(v, media.schema)) },
          );
          const sent = media.required ? value : fc.option(value, { freq: 4, nil: undefined });
          return sent.map((v) => ({
            body: v === undefined ? undefined : JSON.stringify(v),
            type: v === undefined ? undefined : 'application/json',
            invalid:
              v === undefined || accepts(media.schema, v) ? null : `the body breaks its schema`,
            object: Boolean(v) && typeof v === 'object' && !Array.isArray(v),
          }));
        }
        if (media.type === 'application/x-www-form-urlencoded') {
          return (
            arbitraryFor(media.schema, ids, undefined, ALIASES) as fc.Arbitrary<
              Record<string, unknown>
            >
          ).map((v) => {
            const form = Object.fromEntries(
              Object.entries(v)
                .filter(([, x]) => x !== null && typeof x !== 'object')
                .map(([k, x]) => [k, String(x).toWellFormed()]),
            );
            return {
              body: new URLSearchParams(form).toString(),
              type: media.type,
              invalid: accepts(media.schema, form, true) ? null : 'the form breaks its schema',
              object: true,
            };
          });
        }
        return fc
          .record({
            bytes: fc.uint8Array({ maxLength: 300 }),
            type: fc.constantFrom(
              'text/plain',
              'application/octet-stream',
              'image/png',
              '*/*',
              'text/*',
              'application/pdf; charset=binary',
            ),
          })
          .map(({ bytes, type }) => ({
            body: Buffer.from(bytes),
            type,
            invalid: null,
            object: false,
          }));
      })();

      return fc
        .record({ pathValues, query, method, credential, body })
        .map(({ pathValues, query, method, credential, body }) => {
          let url = op.path;
          op.pathParams.forEach(
            (name, i) =>
              (url = url.replace(`{${name}}`, encodeURIComponent(pathValues[i]!.v.toWellFormed()))),
          );
          // A query string carries UTF-8: half a surrogate pair goes as U+FFFD, so that is what is judged.
          const strings = Object.fromEntries(
            Object.entries(query)
              .filter(([, v]) => v !== null && typeof v !== 'object')
              .map(([k, v]) => [k, String(v).toWellFormed()]),
          );
          const search = new URLSearchParams(strings).toString();
          const headers: Record<string, string> = {};
          if (credential) headers.authorization = credential;
          if (body.type) headers['content-type'] = body.type;
          const reasons = [
            method !== op.method ? `${method} is not a method of this path` : null,
            op.authenticated && credential !== auth.authorization
              ? `credential ${credential ?? 'missing'}`
              : null,
            pathValues.some((p) => p.bogus) ? 'an id that names nothing' : null,
            accepts(qSchema, strings, true) ? null : 'the query breaks its schema',
            method === op.method ? body.invalid : null,
          ].filter(Boolean);
          return {
            method,
            path: op.path,
            url: search ? `${url}?${search}` : url,
            headers,
            body: method === 'GET' ? undefined : body.body,
            invalid: reasons.length ? reasons.join('; ') : null,
            object: body.object,
          };
        });
    }

    /**
     * A name the document accepts: cut to the field's length, never blank, well-formed UTF-16
     * (a lone surrogate is refused at input, a sweep of requests covers that: here the flow must exist).
     */
    const fitting = (maxLength: number, text: fc.Arbitrary<string>) =>
      text.map((raw) => {
        const cut = Array.from(raw.replace(/\p{Cs}/gu, '\uFFFD'))
          .slice(0, maxLength)
          .join('');
        return /\S/.test(cut) ? cut : `${cut.slice(0, maxLength - 1)}x`;
      });

    /** GET or POST one rendering of something that exists and must be served: a 200 of its documented kind. */
    const mustServe = (what: string) => (answer: Answer) =>
      answer.status === 200 ? [] : [`${what} of a generated flow is not served (${answer.status})`];

    await t.test(
      'generated flows: 0–60 tasks at any density of dependencies, and everything rendered from them',
      async (t) => {
        at = t;
        // Half the flows have names of any characters (which the service may refuse), half printable ones (which it must render).
        const flowArb = fc
          .tuple(fc.integer({ min: 0, max: 60 }), fc.constantFrom(hostileText, printableText))
          .chain(([n, text]) =>
            fc.record({
              name: fitting(200, text),
              dueDate: fc.option(edgeDate, { freq: 2, nil: undefined }),
              startDates: fc.uniqueArray(edgeDate, { minLength: 1, maxLength: 3 }),
              // None, one per task or a few, or every pair (a complete graph of 60 tasks: 1,770 dependencies).
              density: fc.constantFrom(0, 0, 1 / Math.max(n, 1), 3 / Math.max(n, 1), 1),
              edgeSeed: fc.integer(),
              tasks: fc.array(
                fc.record(
                  {
                    name: fitting(500, text),
                    estimateHours: fc.option(fc.integer({ min: 0, max: 400 }), { nil: undefined }),
                  },
                  { requiredKeys: ['name'] },
                ),
                { minLength: n, maxLength: n },
              ),
            }),
          );
        // The smallest cases always: a flow of one task (no dependency can exist), and one of none.
        const always = [
          {
            name: 'One task',
            dueDate: undefined,
            startDates: ['2031-03-03'],
            density: 0,
            edgeSeed: 0,
            tasks: [{ name: 'a', estimateHours: 4 }],
          },
          {
            name: 'Empty',
            dueDate: undefined,
            startDates: ['2031-03-03'],
            density: 0,
            edgeSeed: 0,
            tasks: [],
          },
        ];
        const scheduleOp = operations(doc).find(
          (op) => op.path === '/v1/flows/{flowId}/schedule' && op.method === 'GET',
        )!;
        const patchSchema =
          doc.paths['/v1/flows/{flowId}'].patch.requestBody.content['application/json'].schema;
        /** The schedule from a start date: a date the schema allows may still lie outside the range the service plans in, and a 400 pointing at it is an answer too. */
        const schedule = async (F: string, date: string | undefined) => {
          const invalid = accepts(
            querySchema(scheduleOp),
            date === undefined ? {} : { startDate: date },
            true,
          )
            ? null
            : 'startDate breaks its schema';
          await send(
            {
              method: 'GET',
              path: scheduleOp.path,
              url: `${F}/schedule${date === undefined ? '' : `?startDate=${encodeURIComponent(date)}`}`,
              headers: auth,
              invalid,
              object: false,
            },
            (a) =>
              a.status === 200 || a.status === 400 || invalid
                ? []
                : [`the schedule of a generated flow is not served (${a.status})`],
          );
        };
        const setDueDate = async (F: string, date: string) => {
          const body = { dueDate: date };
          const invalid = accepts(patchSchema, body) ? null : 'dueDate breaks its schema';
          await send(
            {
              method: 'PATCH',
              path: '/v1/flows/{flowId}',
              url: F,
              headers: { ...auth, 'content-type': 'application/json' },
              body: JSON.stringify(body),
              invalid,
              object: true,
            },
            (a) =>
              a.status === 200 || a.status === 400 || invalid
                ? []
                : [`a due date on a generated flow is not taken (${a.status})`],
          );
        };
        let edgesDone = false;
        for (const g of [
          ...always,
          ...fc.sample(flowArb, { seed: SEED + 10_000, numRuns: FLOWS }),
        ]) {
          const random = mulberry32(g.edgeSeed);
          const tasks = g.tasks.map((task, i) => {
            const after = Array.from({ length: i }, (_, j) => j).filter(() => random() < g.density);
            return { ...task, ...(after.length ? { after } : {}) };
          });
          const payload = {
            name: g.name,
            ...(g.dueDate === undefined ? {} : { dueDate: g.dueDate }),
            tasks,
          };
          const schema = doc.paths['/v1/flows'].post.requestBody.content['application/json'].schema;
          const invalid = accepts(schema, payload) ? null : 'the body breaks its schema';
          context = '';
          const created = await send({
            method: 'POST',
            path: '/v1/flows',
            url: '/v1/flows',
            headers: { ...auth, 'content-type': 'application/json' },
            body: JSON.stringify(payload),
            invalid,
            object: true,
          });
          const edges = tasks.reduce((n, task) => n + (task.after?.length ?? 0), 0);
          t.comment(
            `flow of ${tasks.length} tasks, ${edges} dependencies${g.dueDate ? `, due ${g.dueDate}` : ''}: ${created.status}`,
          );
          if (created.status !== 201) continue;
          const flowId = JSON.parse(created.text).id as string;
          context = `\n    of the flow made by: POST /v1/flows ${printable(JSON.stringify(payload).slice(0, 2000))}`;
          const F = `/v1/flows/${flowId}`;
          const get = (path: string, url: string, what: string, invalid: string | null = null) =>
            send(
              { method: 'GET', path, url, headers: auth, invalid, object: false },
              invalid ? undefined : mustServe(what),
            );
          await get('/v1/flows/{flowId}', F, 'the flow');
          // Every edge date once, on the first flow with tasks; a few drawn ones on each of the others.
          const dates = edgesDone || tasks.length === 0 ? g.startDates : EDGE_DATES;
          edgesDone ||= tasks.length > 0;
          for (const date of [undefined, ...dates]) await schedule(F, date);
          for (const date of dates) await setDueDate(F, date);
          await get('/v1/flows/{flowId}/report', `${F}/report`, 'the report');
          const published = await send(
            {
              method: 'POST',
              path: '/v1/flows/{flowId}/publish',
              url: `${F}/publish`,
              headers: auth,
              invalid: null,
              object: false,
            },
            mustServe('publishing'),
          );
          if (published.status === 200) {
            const token = new URL(JSON.parse(published.text).publicUrl).pathname.split('/').pop()!;
            for (const [path, what] of [
              ['/p/flows/{token}', 'the public page'],
              ['/p/flows/{token}.json', 'the public JSON'],
              ['/p/flows/{token}/diagram.svg', 'the public SVG'],
              ['/p/embed/flows/{token}', 'the embed'],
            ]) {
              await send(
                {
                  method: 'GET',
                  path: path!,
                  url: path!.replace('{token}', token),
                  headers: {},
                  invalid: null,
                  object: false,
                },
                mustServe(what!),
              );
            }
          }
          for (const format of ['png', 'pdf']) {
            const answer = await send(
              {
                method: 'POST',
                path: '/v1/flows/{flowId}/exports',
                url: `${F}/exports`,
                headers: { ...auth, 'content-type': 'application/json' },
                body: JSON.stringify({ format }),
                invalid: null,
                object: true,
              },
              mustServe(`the ${format.toUpperCase()} export`),
            );
            if (answer.status !== 200) continue;
            try {
              if (format === 'png') t.ok(decodePng(answer.bytes).width > 0, 'the PNG decodes');
              else t.ok((await decodePdf(answer.bytes)).pages >= 1, 'the PDF decodes');
            } catch (error) {
              failed += 1;
              t.fail(
                `the ${format.toUpperCase()} export does not decode: ${printable((error as Error).message)}\n    request: POST ${F}/exports ${printable(JSON.stringify(payload).slice(0, 300))}\n    seed: ${SEED}`,
              );
            }
          }
        }
      },
    );

    await t.test('generated brainstorms, published, and their renderings', async (t) => {
      at = t;
      // As with flows: half the boards hostile (which the service may refuse), half printable (which it must render).
      const boardArb = fc
        .tuple(fc.integer({ min: 0, max: 20 }), fc.constantFrom(hostileText, printableText))
        .chain(([n, text]) =>
          fc.record({
            name: fitting(200, text),
            ideas: fc.array(
              fc.record({
                title: fitting(500, text),
                tags: fc.uniqueArray(fitting(50, text), { maxLength: 3 }),
                parent: fc.nat(),
              }),
              { minLength: n, maxLength: n },
            ),
          }),
        );
      for (const g of fc.sample(boardArb, { seed: SEED + 20_000, numRuns: BOARDS })) {
        const ideas = g.ideas.map(({ parent, ...idea }, i) => ({
          ...idea,
          ...(i > 0 && parent % 3 !== 0 ? { parent: parent % i } : {}),
        }));
        const payload = { name: g.name, ideas };
        const schema =
          doc.paths['/v1/brainstorms'].post.requestBody.content['application/json'].schema;
        context = '';
        const created = await send({
          method: 'POST',
          path: '/v1/brainstorms',
          url: '/v1/brainstorms',
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify(payload),
          invalid: accepts(schema, payload) ? null : 'the body breaks its schema',
          object: true,
        });
        if (created.status !== 201) continue;
        const B = `/v1/brainstorms/${JSON.parse(created.text).id}`;
        context = `\n    of the brainstorm made by: POST /v1/brainstorms ${printable(JSON.stringify(payload).slice(0, 2000))}`;
        const published = await send(
          {
            method: 'POST',
            path: '/v1/brainstorms/{brainstormId}/publish',
            url: `${B}/publish`,
            headers: auth,
            invalid: null,
            object: false,
          },
          mustServe('publishing'),
        );
        if (published.status !== 200) continue;
        const token = new URL(JSON.parse(published.text).publicUrl).pathname.split('/').pop()!;
        for (const path of [
          '/p/brainstorms/{token}',
          '/p/brainstorms/{token}.json',
          '/p/brainstorms/{token}/diagram.svg',
          '/p/embed/brainstorms/{token}',
        ]) {
          await send(
            {
              method: 'GET',
              path,
              url: path.replace('{token}', token),
              headers: {},
              invalid: null,
              object: false,
            },
            mustServe(path),
          );
        }
      }
    });

    await t.test('the sweep was not vacuous', async (t) => {
      at = t;
      context = '';
      t.comment(
        `${requests} requests, ${failed} problems, in ${((Date.now() - started) / 1000).toFixed(1)} s; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])))}`,
      );
      t.ok(
        [...statuses.keys()].filter((status) => status >= 200 && status < 300).length >= 3,
        'many requests were served',
      );
      t.ok(
        [...statuses.keys()].filter((status) => status >= 400 && status < 500).length >= 5,
        'a spread of refusals',
      );
      t.equal(failed, 0, `no problems (seed ${SEED})`);
    });
  },
);

/**
 * Text as an ASCII JSON string: a control character, NEL or a line separator in a report
 * would break the TAP stream it is written to (a subtest's later results were lost).
 */
function printable(text: string): string {
  return JSON.stringify(text).replace(
    /[^\x20-\x7e]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** A small seeded generator for the dependencies of a generated flow (one draw per pair of tasks). */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = a;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

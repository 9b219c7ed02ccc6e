/**
 * Issue 30, item 13: request JSON went through JSON.parse, which keeps a `__proto__` key as an
 * own property; any later merge of that object (Object.assign, a hand-written deep merge)
 * would then change what every object inherits. Bodies are parsed with secure-json-parse
 * after the depth guard: a `__proto__` key, or a `constructor` object with a `prototype` key,
 * anywhere in a body is refused with 400 VALIDATION_FAILED saying so, before any schema or
 * handler sees it.
 */
import t from 'tap';
import { assertError, startTestServer } from '../helpers/server.ts';
import type { Flow, FlowList, Refusal } from '../helpers/wire.ts';

t.test(
  'a body with a __proto__ or constructor.prototype key is refused 400, saying why, and writes nothing',
  async (t) => {
    const s = await startTestServer(t);
    // A created flow, or a refusal naming the key.
    const post = (raw: string) =>
      s.api<Flow & Refusal>('POST', '/v1/flows', {
        token: s.adminKey,
        raw,
        headers: { 'content-type': 'application/json' },
      });
    const hostile = [
      '{"name":"x","__proto__":{"role":"admin"}}',
      '{"name":"x","tasks":[{"name":"a","__proto__":{"polluted":true}}]}',
      '{"name":"x","\\u005f_proto__":{"polluted":true}}',
      '{"name":"x","constructor":{"prototype":{"polluted":true}}}',
    ];
    for (const raw of hostile) {
      const res = await post(raw);
      assertError(t, res, 400, 'VALIDATION_FAILED', raw);
      t.equal(
        res.body.error.message,
        'Body contains a forbidden key',
        `${raw}: says which refusal it is`,
      );
      t.matchOnlyStrict(
        res.body.error.details.errors,
        [{ in: 'body', pointer: '', message: /"__proto__"/ }],
        `${raw}: one error, naming the key`,
      );
    }
    t.equal(({} as Record<string, unknown>).polluted, undefined, 'nothing inherits anything');
    t.equal(
      (await s.api<FlowList>('GET', '/v1/flows', { token: s.adminKey })).body.total,
      0,
      'nothing was written',
    );

    const named = await post(
      '{"name":"__proto__ and constructor","tasks":[{"name":"constructor"}]}',
    );
    t.equal(named.status, 201, 'the words as values are ordinary text');
    t.equal(named.body.name, '__proto__ and constructor');
  },
);

/** The route trie: static segments over suffixed parameters over bare ones, decoding, 405. */
import t from 'tap';
import { Router } from '../../../src/web/http/router.ts';
import type { Route } from '../../../src/web/http/route.ts';

const route = (method: Route['method'], path: string): Route => ({
  method,
  path,
  operationId: `${method} ${path}`,
  summary: path,
  auth: 'none',
  responses: {},
  handler: () => ({ status: 204 }),
});

t.test('suffixed parameters sit beside bare ones and static segments', async (t) => {
  const router = new Router();
  const page = route('GET', '/p/flows/{token}');
  const json = route('GET', '/p/flows/{token}.json');
  const svg = route('GET', '/p/flows/{token}/diagram.svg');
  const fixed = route('GET', '/p/flows/about.json');
  for (const r of [page, json, svg, fixed]) router.add(r);

  t.same(router.match('GET', '/p/flows/abc'), {
    kind: 'found',
    route: page,
    params: { token: 'abc' },
  });
  t.same(router.match('GET', '/p/flows/abc.json'), {
    kind: 'found',
    route: json,
    params: { token: 'abc' },
  });
  t.same(router.match('GET', '/p/flows/abc/diagram.svg'), {
    kind: 'found',
    route: svg,
    params: { token: 'abc' },
  });
  t.same(
    router.match('GET', '/p/flows/about.json'),
    { kind: 'found', route: fixed, params: {} },
    'a static segment wins',
  );
  t.same(
    router.match('GET', '/p/flows/.json'),
    { kind: 'found', route: page, params: { token: '.json' } },
    'an empty stem is no suffix match',
  );
  t.same(
    router.match('GET', '/p/flows/a%20b.json'),
    { kind: 'found', route: json, params: { token: 'a b' } },
    'decoded',
  );
  t.same(
    router.match('GET', '/p/flows/%E0.json'),
    { kind: 'none' },
    'bad percent-encoding matches nothing',
  );
  t.same(router.match('POST', '/p/flows/abc.json'), { kind: 'method', allow: ['GET'] });
  t.same(router.match('GET', '/p/flows/abc/other'), { kind: 'none' });
  t.throws(
    () => router.add(route('GET', '/p/flows/{id}.json/x')),
    /clashes/,
    'one name per suffix at a position',
  );
});

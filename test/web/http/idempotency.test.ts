/**
 * Idempotency-Key on POST (CONTRACT §1), against a route that writes a row: replay of the
 * first answer, 422 for another body, 409 while the first is still running, the 255-character
 * cap, and keys scoped to the credential.
 */
import t from 'tap';
import { createKey } from '../../../src/services/auth/provision.ts';
import { addTestRoutes, deferred } from '../../helpers/routes.ts';
import { assertError, startTestServer } from '../../helpers/server.ts';
import type { Refusal } from '../../helpers/wire.ts';

t.test('idempotency', async (t) => {
  const s = await startTestServer(t);
  const echo = await addTestRoutes(s);
  const post = (
    key: string | undefined,
    body: unknown,
    token = s.adminKey,
    path = '/v1/test/echo',
  ) =>
    // The test routes echo the body with the new row's id, or refuse.
    s.api<{ id: number } & Refusal>('POST', path, {
      token,
      body,
      headers: key === undefined ? {} : { 'idempotency-key': key },
    });
  const rowsNamed = async (name: string) =>
    (
      await s.sql<{ n: number }[]>`select count(*)::int as n from echo_rows where name = ${name}`
    )[0]!.n;

  t.test('the same key and body replays the first answer and writes once', async (t) => {
    const first = await post('order-1', { name: 'once', count: 1 });
    t.equal(first.status, 201);
    t.match(first.body, { name: 'once', count: 1, id: Number });
    t.equal(first.headers.get('idempotent-replayed'), null, 'the first answer is not a replay');

    for (let i = 0; i < 3; i += 1) {
      const again = await post('order-1', { name: 'once', count: 1 });
      t.equal(again.status, 201, 'same status');
      t.same(again.body, first.body, 'same body, down to the id of the row');
      t.equal(again.headers.get('idempotent-replayed'), 'true');
      t.match(again.headers.get('content-type'), /^application\/json/);
      t.ok(again.headers.get('x-request-id'), 'a replay still carries a request id');
      t.not(
        again.headers.get('x-request-id'),
        first.headers.get('x-request-id'),
        'its own request id, not the first one',
      );
      t.match(
        again.headers.get('ratelimit'),
        /^"credential";r=\d+;t=\d+$/,
        'a replay carries the current rate-limit state',
      );
      t.ok(again.headers.get('x-ratelimit-remaining'));
    }
    t.equal(await rowsNamed('once'), 1, 'written exactly once');
    t.equal(echo.calls, 1, 'the handler ran once');

    const without = await post(undefined, { name: 'once', count: 1 });
    t.equal(without.status, 201, 'without a key nothing is replayed');
    t.not(without.body.id, first.body.id);
    t.equal(await rowsNamed('once'), 2);
  });

  t.test(
    'the same key with another body is 422 IDEMPOTENCY_KEY_REUSED and writes nothing',
    async (t) => {
      t.equal((await post('order-2', { name: 'two' })).status, 201);
      const calls = echo.calls;
      for (const body of [{ name: 'two', count: 2 }, { name: 'other' }]) {
        assertError(
          t,
          await post('order-2', body),
          422,
          'IDEMPOTENCY_KEY_REUSED',
          JSON.stringify(body),
        );
      }
      // Same bytes to another route is another request too.
      assertError(
        t,
        await post('order-2', { name: 'two' }, s.adminKey, '/v1/test/echo-any'),
        422,
        'IDEMPOTENCY_KEY_REUSED',
        'another path',
      );
      t.equal(echo.calls, calls, 'no handler ran');
      t.equal(await rowsNamed('two'), 1);
      t.equal(await rowsNamed('other'), 0);
      t.equal(
        (await post('order-2', { name: 'two' })).headers.get('idempotent-replayed'),
        'true',
        'the original still replays',
      );
    },
  );

  t.test('a retry while the first is still running is 409 IDEMPOTENCY_KEY_IN_USE', async (t) => {
    const gate = deferred();
    const entered = deferred();
    echo.gate = gate.promise;
    echo.onEnter = entered.resolve;
    const first = post('order-3', { name: 'slow' });
    await entered.promise; // the first request holds its key inside the handler
    echo.gate = null;
    echo.onEnter = null;
    const second = await post('order-3', { name: 'slow' });
    assertError(t, second, 409, 'IDEMPOTENCY_KEY_IN_USE');
    t.ok(second.headers.get('x-request-id'));
    const otherBody = await post('order-3', { name: 'slow', count: 9 });
    assertError(
      t,
      otherBody,
      422,
      'IDEMPOTENCY_KEY_REUSED',
      'another body is still a reuse while running',
    );
    t.equal(await rowsNamed('slow'), 0, 'nothing written while the first waits');

    gate.resolve();
    const done = await first;
    t.equal(done.status, 201);
    const replay = await post('order-3', { name: 'slow' });
    t.equal(replay.status, 201);
    t.same(replay.body, done.body, 'once finished, the retry replays it');
    t.equal(await rowsNamed('slow'), 1);
  });

  t.test('an Idempotency-Key of more than 255 characters (or none) is refused', async (t) => {
    const calls = echo.calls;
    for (const key of ['k'.repeat(256), 'k'.repeat(1000)]) {
      const res = await post(key, { name: 'long-key' });
      assertError(t, res, 400, 'VALIDATION_FAILED', `${key.length} characters`);
      t.same(
        res.body.error.details.errors.map((e: { in: string; pointer: string }) => [
          e.in,
          e.pointer,
        ]),
        [['header', '/idempotency-key']],
      );
    }
    assertError(t, await post('', { name: 'long-key' }), 400, 'VALIDATION_FAILED', 'an empty key');
    t.equal(echo.calls, calls);
    t.equal(await rowsNamed('long-key'), 0, 'nothing written');
    const max = await post('k'.repeat(255), { name: 'long-key' });
    t.equal(max.status, 201, '255 characters is allowed');
    t.equal(
      (await post('k'.repeat(255), { name: 'long-key' })).headers.get('idempotent-replayed'),
      'true',
    );
    t.equal(await rowsNamed('long-key'), 1);
  });

  t.test(
    'keys belong to the credential: another key runs the same Idempotency-Key independently',
    async (t) => {
      const { key: other } = await createKey(s.sql, {
        workspaceId: s.workspaceId,
        role: 'member',
        scopes: ['flows:write'],
      });
      const mine = await post('shared-key', { name: 'per-cred' });
      const theirs = await post('shared-key', { name: 'per-cred' }, other);
      t.equal(mine.status, 201);
      t.equal(theirs.status, 201);
      t.equal(
        theirs.headers.get('idempotent-replayed'),
        null,
        'not a replay of the other credential',
      );
      t.not(theirs.body.id, mine.body.id);
      t.equal(await rowsNamed('per-cred'), 2);
      const theirsOtherBody = await post('shared-key', { name: 'per-cred-2' }, other);
      assertError(
        t,
        theirsOtherBody,
        422,
        'IDEMPOTENCY_KEY_REUSED',
        'within one credential the key is bound to its body',
      );
      const mineAgain = await post('shared-key', { name: 'per-cred' });
      t.same(mineAgain.body, mine.body, 'each credential replays its own answer');
    },
  );

  t.test(
    'an error answer is replayed like any other; a failure on our side frees the key',
    async (t) => {
      const missing = await post('order-404', { name: 'missing' });
      assertError(t, missing, 404, 'NOT_FOUND');
      t.ok(missing.headers.get('x-request-id'), 'the stored error still carries a request id');
      t.match(
        missing.headers.get('ratelimit'),
        /^"credential";r=\d+;t=\d+$/,
        'and the rate-limit state',
      );
      const replayed = await post('order-404', { name: 'missing' });
      assertError(t, replayed, 404, 'NOT_FOUND');
      t.equal(replayed.headers.get('idempotent-replayed'), 'true');
      t.same(replayed.body, missing.body);

      echo.failures = 1;
      const failed = await post('order-500', { name: 'retry-me' });
      assertError(t, failed, 500, 'INTERNAL');
      t.equal(await rowsNamed('retry-me'), 0);
      const retried = await post('order-500', { name: 'retry-me' });
      t.equal(retried.status, 201, 'the retry runs again instead of replaying the 500');
      t.equal(retried.headers.get('idempotent-replayed'), null);
      t.equal(await rowsNamed('retry-me'), 1);
    },
  );

  t.test('refusals before the handler do not take the key', async (t) => {
    const { key: viewer } = await createKey(s.sql, {
      workspaceId: s.workspaceId,
      role: 'viewer',
      scopes: ['flows:write'],
    });
    assertError(t, await post('early', { name: 'early' }, viewer), 403, 'FORBIDDEN');
    assertError(t, await post('early', { bad: true }), 400, 'VALIDATION_FAILED');
    const ok = await post('early', { name: 'early' });
    t.equal(ok.status, 201, 'the key is still free for a valid request');
    t.equal(ok.headers.get('idempotent-replayed'), null);
  });
});

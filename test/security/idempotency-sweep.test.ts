/**
 * Idempotency-Key responses belong to the principal that made them (CONTRACT §1), generated
 * from the OpenAPI document: for every POST operation that takes a credential, principal P1
 * calls it with a key, then principal P2 sends the same key and the same request. P2 never
 * gets P1's stored response (`Idempotent-Replayed: true` with P1's body): its request runs
 * as its own, answering what P2 may see (404 for another workspace's ids). P1 repeating the
 * request does get the replay, so the key was stored and the sweep is not vacuous.
 *
 * The principals that share something the store could key on: two API keys of one
 * workspace; two people signed in through one first-party client (the same credential id),
 * in two workspaces and in one; one person acting in two workspaces through one client.
 */
import t, { type Test } from 'tap';
import { SCOPES } from '../../src/services/auth/principal.ts';
import { createKey, createWorkspace } from '../../src/services/auth/provision.ts';
import { createPerson, firstPartyClient, personTokenOn } from '../helpers/people.ts';
import { startFlowServer } from '../helpers/flows.ts';
import { callsFor, openApi, operations, send, type Operation } from '../helpers/openapi-sweep.ts';
import type { TestServer } from '../helpers/server.ts';
import { furnish, type Furnished } from '../helpers/workspace-fixtures.ts';
import { deliveriesSettled, startReceiver } from '../services/webhooks/receiver.ts';

interface Principal {
  what: string;
  token: string;
}

/** P1 then P2 with one key per POST operation, on P1's workspace's ids. */
async function sweep(
  t: Test,
  s: TestServer,
  posts: Operation[],
  w: Furnished,
  p1: Principal,
  p2: Principal,
  label: string,
): Promise<void> {
  for (const op of posts) {
    const [call] = callsFor(op, w.ids, w.values, p1.token);
    const key = `${label}:${op.operationId}`;
    const what = `${op.method} ${call!.url}`;
    const first = await send(s, call!, { 'idempotency-key': key });
    t.not(
      first.headers.get('idempotent-replayed'),
      'true',
      `${what}: ${p1.what} runs it (${first.status})`,
    );

    const second = await send(
      s,
      { ...call!, options: { ...call!.options, token: p2.token } },
      { 'idempotency-key': key },
    );
    // The replay header is the tell: a request run anew may well answer the same bytes (an
    // unpublish of an unpublished flow), a replayed one is never P2's own answer.
    const replayed = second.headers.get('idempotent-replayed') === 'true';
    const same = replayed && second.status === first.status && second.text === first.text;
    t.notOk(
      replayed,
      `${what}: the same Idempotency-Key from ${p2.what} does not replay ${p1.what}'s response (${second.status}${same ? `, replayed with ${p1.what}'s body` : ''})`,
    );

    const again = await send(s, call!, { 'idempotency-key': key });
    t.equal(
      again.headers.get('idempotent-replayed'),
      'true',
      `${what}: ${p1.what} repeating it gets the replay`,
    );
    t.equal(again.text, first.text, `${what}: the replay is ${p1.what}'s first answer`);
  }
  // The retried delivery and the events of these calls are sent before the server stops.
  await deliveriesSettled(s.sql);
}

t.test("an Idempotency-Key never replays one principal's response to another", async (t) => {
  const s = await startFlowServer(t, { webhookAllowPrivate: true });
  const receiver = await startReceiver(t);
  const doc = await openApi(s);
  const posts = operations(doc).filter((op) => op.method === 'POST' && op.authenticated);
  t.ok(posts.length > 20, `${posts.length} POST operations take a credential`);

  const workspace = async (name: string) => (await createWorkspace(s.sql, { name })).id;
  const member = async (email: string, workspaceId: string) =>
    (
      await createPerson(s.sql, {
        email,
        name: email.split('@')[0],
        password: 'correct horse battery',
        workspaceId,
        role: 'admin',
      })
    ).id;

  t.test('two API keys of one workspace', async (t) => {
    const w = await furnish(t, s, await workspace('Keys'), {
      marker: 'Keys',
      receiverUrl: receiver.url,
    });
    const { key } = await createKey(s.sql, {
      workspaceId: w.workspaceId,
      role: 'admin',
      scopes: [...SCOPES],
      name: 'second key',
    });
    await sweep(
      t,
      s,
      posts,
      w,
      { what: 'key 1', token: w.key },
      { what: 'key 2', token: key },
      'keys',
    );
  });

  t.test('two people through one first-party client, in two workspaces', async (t) => {
    const w = await furnish(t, s, await workspace('Client one'), {
      marker: 'ClientOne',
      receiverUrl: receiver.url,
    });
    const other = await workspace('Client two');
    const client = await firstPartyClient(s, w.workspaceId);
    const yara = await member('yara@example.com', other);
    await sweep(
      t,
      s,
      posts,
      w,
      { what: 'the owner', token: await personTokenOn(s, client, w.ownerId, w.workspaceId) },
      {
        what: 'another person in another workspace',
        token: await personTokenOn(s, client, yara, other),
      },
      'people-two-workspaces',
    );
  });

  t.test('two people through one first-party client, in one workspace', async (t) => {
    const w = await furnish(t, s, await workspace('Shared client'), {
      marker: 'SharedClient',
      receiverUrl: receiver.url,
    });
    const client = await firstPartyClient(s, w.workspaceId);
    const zed = await member('zed@example.com', w.workspaceId);
    await sweep(
      t,
      s,
      posts,
      w,
      { what: 'the owner', token: await personTokenOn(s, client, w.ownerId, w.workspaceId) },
      { what: 'another person', token: await personTokenOn(s, client, zed, w.workspaceId) },
      'people-one-workspace',
    );
  });

  t.test('one person acting in two workspaces through one client', async (t) => {
    const w = await furnish(t, s, await workspace('Home'), {
      marker: 'Home',
      receiverUrl: receiver.url,
    });
    const away = await workspace('Away');
    const client = await firstPartyClient(s, w.workspaceId);
    const [owner] = await s.sql<
      { email: string }[]
    >`select email from users where id = ${w.ownerId}`;
    await createPerson(s.sql, { email: owner!.email, workspaceId: away, role: 'admin' });
    await sweep(
      t,
      s,
      posts,
      w,
      { what: 'the owner', token: await personTokenOn(s, client, w.ownerId, w.workspaceId) },
      {
        what: 'the owner in another workspace',
        token: await personTokenOn(s, client, w.ownerId, away),
      },
      'person-two-workspaces',
    );
  });
});

/**
 * Issue 17, item 1: a stored Idempotency-Key response belongs to the principal that made it.
 * Everyone signed in through one first-party client shares its credential id; Bob (workspace B)
 * sending Alice's key and body must get a fresh execution, never Alice's objects (here a new
 * webhook and its signing secret). The same person acting in another workspace: fresh too.
 */
import t from 'tap';
import { SCOPES } from '../../src/services/auth/principal.ts';
import { createClient, createWorkspace } from '../../src/services/auth/provision.ts';
import { newSecret, sha256 } from '../../src/services/auth/secrets.ts';
import { newId } from '../../src/platform/ids.ts';
import { insertAccessToken } from '../../src/storage/credentials.store.ts';
import { createPerson } from '../helpers/people.ts';
import { startTestServer } from '../helpers/server.ts';
import type { WebhookList, WebhookWithSecret } from '../helpers/wire.ts';

t.test(
  'one first-party client, two people, two workspaces: each keeps their own answers',
  async (t) => {
    const s = await startTestServer(t, {}, { WEBHOOK_ALLOW_PRIVATE: '1' });
    const b = await createWorkspace(s.sql, { name: 'B', plan: 'pro' });
    const alice = (
      await createPerson(s.sql, {
        email: 'alice@example.com',
        name: 'Alice',
        password: 'alice password',
        workspaceId: s.workspaceId,
        role: 'admin',
      })
    ).id;
    const bob = (
      await createPerson(s.sql, {
        email: 'bob@example.com',
        name: 'Bob',
        password: 'bob password',
        workspaceId: b.id,
        role: 'admin',
      })
    ).id;
    await createPerson(s.sql, { email: 'alice@example.com', workspaceId: b.id, role: 'admin' });
    // The installation's sign-in client: every person token it issues carries its id.
    const { clientId } = await createClient(s.sql, {
      workspaceId: s.workspaceId,
      role: 'admin',
      scopes: [...SCOPES],
      name: 'App',
      firstParty: true,
      redirectUris: ['http://127.0.0.1/callback'],
    });
    const tokenFor = async (userId: string, workspaceId: string) => {
      const token = newSecret('fpa');
      await insertAccessToken(s.sql, {
        id: newId('tok'),
        hash: sha256(token),
        workspaceId,
        credentialId: clientId,
        userId,
        scopes: [...SCOPES],
        expiresAt: new Date(Date.now() + 3_600_000),
      });
      return token;
    };
    const aliceInA = await tokenFor(alice, s.workspaceId);
    const aliceInB = await tokenFor(alice, b.id);
    const bobInB = await tokenFor(bob, b.id);

    const body = {
      url: 'http://127.0.0.1:9/hook',
      events: ['task.completed'],
      description: 'Alice’s',
    };
    const create = (token: string) =>
      s.api<WebhookWithSecret>('POST', '/v1/webhooks', {
        token,
        body,
        headers: { 'idempotency-key': 'same-key-1' },
      });

    const first = await create(aliceInA);
    t.equal(first.status, 201, 'Alice creates a webhook');
    t.match(first.body.secret, /^whsec_/);

    const again = await create(aliceInA);
    t.equal(
      again.headers.get('idempotent-replayed'),
      'true',
      'Alice repeating herself gets her answer back',
    );
    t.equal(again.body.id, first.body.id);

    const byBob = await create(bobInB);
    t.equal(byBob.status, 201, 'Bob gets an execution of his own');
    t.equal(byBob.headers.get('idempotent-replayed'), null, 'not a replay');
    t.not(byBob.body.id, first.body.id, 'not Alice’s webhook');
    t.not(byBob.body.secret, first.body.secret, 'and never Alice’s signing secret');

    const aliceElsewhere = await create(aliceInB);
    t.equal(aliceElsewhere.status, 201, 'Alice acting in workspace B: a fresh execution');
    t.equal(aliceElsewhere.headers.get('idempotent-replayed'), null);
    t.not(aliceElsewhere.body.id, first.body.id);
    t.not(aliceElsewhere.body.id, byBob.body.id);

    const inA = (
      await s.api<WebhookList>('GET', '/v1/webhooks', { token: aliceInA })
    ).body.items.map((w: { id: string }) => w.id);
    const inB = (await s.api<WebhookList>('GET', '/v1/webhooks', { token: bobInB })).body.items
      .map((w: { id: string }) => w.id)
      .sort();
    t.strictSame(inA, [first.body.id], 'workspace A has Alice’s webhook only');
    t.strictSame(
      inB,
      [byBob.body.id, aliceElsewhere.body.id].sort(),
      'workspace B has the two made there',
    );
  },
);

/**
 * Issue 17, item 8: sharing a brainstorm answers 201 for an address with an account and 404
 * for one without, so any credential could map which addresses have accounts. The answers
 * stay, but "no such account" spends a budget of 20 an hour, held in Postgres across processes:
 * one for a workspace's keys and clients together, one for each of its people (issue 30,
 * item 8: it was per credential, so an admin refilled it by minting a key). Once spent, every
 * look-up by address from that workspace's keys is 429 RATE_LIMITED with Retry-After, known address or not
 * (else the 429 itself would tell them apart). Routes that answer the same for both (flow
 * shares, invites) have nothing to tell and spend nothing.
 */
import t from 'tap';
import { createClient, createKey, createWorkspace } from '../../src/services/auth/provision.ts';
import { SCOPES } from '../../src/services/auth/principal.ts';
import { startApp } from '../../src/compose.ts';
import { loadConfig } from '../../src/platform/config.ts';
import { newId } from '../../src/platform/ids.ts';
import { newSecret, sha256 } from '../../src/services/auth/secrets.ts';
import { insertAccessToken } from '../../src/storage/credentials.store.ts';
import { newFlow, startFlowServer } from '../helpers/flows.ts';
import { createPerson, personTokenOn } from '../helpers/people.ts';
import { assertError, request, type ApiResponse } from '../helpers/server.ts';
import type { Brainstorm, Invite, Share } from '../helpers/wire.ts';

const BUDGET = 20;

t.test(
  'unknown addresses spend a budget per workspace and per person, held across processes',
  async (t) => {
    const s = await startFlowServer(t);
    const second = await startApp(
      loadConfig(
        { LOG_LEVEL: 'silent' },
        {
          port: 0,
          databaseUrl: s.databaseUrl,
          rateLimitPerMinute: 1_000_000,
          rateLimitBurst: 1_000_000,
        },
      ),
    );
    t.teardown(() => second.close());
    const board = (
      await s.api<Brainstorm>('POST', '/v1/brainstorms', {
        token: s.adminKey,
        body: { name: 'Board' },
      })
    ).body;
    await createPerson(s.sql, {
      email: 'known@example.com',
      name: 'Known',
      password: 'correct horse battery',
    });
    let unknown = 0;
    const nobody = () => `nobody${++unknown}@example.com`;
    /** Alternates between the two processes: the budget is one, wherever the requests land. */
    let turn = 0;
    const share = (token: string, email: string): Promise<ApiResponse> =>
      request(turn++ % 2 ? second.url : s.url, 'POST', `/v1/brainstorms/${board.id}/shares`, {
        token,
        body: { email },
      });
    const assertLimited = (res: ApiResponse, what: string) => {
      assertError(t, res, 429, 'RATE_LIMITED', what);
      const retryAfter = res.headers.get('retry-after');
      t.match(retryAfter, /^\d+$/, `${what}: Retry-After in whole seconds`);
      t.ok(
        Number(retryAfter) >= 1 && Number(retryAfter) <= 3600,
        `${what}: Retry-After ${retryAfter} is within the hour`,
      );
    };
    const spend = async (token: string, n: number, what: string) => {
      for (let i = 0; i < n; i++)
        assertError(
          t,
          await share(token, nobody()),
          404,
          'NOT_FOUND',
          `${what}: unknown address ${i + 1}`,
        );
    };

    t.test('an API key: 20 unknown addresses, then 429 for any address', async (t) => {
      await spend(s.adminKey, BUDGET, 'key A');
      assertLimited(await share(s.adminKey, nobody()), 'the 21st unknown address');
      assertLimited(
        await share(s.adminKey, 'known@example.com'),
        'a known address too: the 429 tells nothing',
      );
      assertLimited(
        await request(second.url, 'POST', `/v1/brainstorms/${board.id}/shares`, {
          token: s.adminKey,
          body: { email: nobody() },
        }),
        'in the other process too',
      );
      const [{ n }] = await s.sql<
        [{ n: number }]
      >`select count(*)::int as n from brainstorm_shares`;
      t.equal(n, 0, 'nothing was shared while limited');

      // A key minted in the same workspace shares its budget: minting does not refill it.
      const minted = (
        await createKey(s.sql, { workspaceId: s.workspaceId, role: 'admin', scopes: [...SCOPES] })
      ).key;
      assertLimited(await share(minted, nobody()), 'a freshly minted key of the same workspace');
      assertLimited(
        await share(minted, 'known@example.com'),
        'a freshly minted key, a known address',
      );
    });

    t.test('another workspace has a budget of its own', async (t) => {
      const { id } = await createWorkspace(s.sql, { name: 'Other' });
      const other = (
        await createKey(s.sql, { workspaceId: id, role: 'admin', scopes: [...SCOPES] })
      ).key;
      const otherBoard = (
        await s.api<Brainstorm>('POST', '/v1/brainstorms', {
          token: other,
          body: { name: 'Theirs' },
        })
      ).body;
      const theirs = (email: string) =>
        request(s.url, 'POST', `/v1/brainstorms/${otherBoard.id}/shares`, {
          token: other,
          body: { email },
        });
      t.equal(
        (await theirs('known@example.com')).status,
        201,
        'a known address from another workspace still works',
      );
      assertError(
        t,
        await theirs(nobody()),
        404,
        'NOT_FOUND',
        'and its unknown addresses are still 404',
      );
    });

    t.test('known addresses spend nothing', async (t) => {
      const { id } = await createWorkspace(s.sql, { name: 'Third' });
      const key = (await createKey(s.sql, { workspaceId: id, role: 'admin', scopes: [...SCOPES] }))
        .key;
      const thirdBoard = (
        await s.api<Brainstorm>('POST', '/v1/brainstorms', {
          token: key,
          body: { name: 'Third board' },
        })
      ).body;
      const third = (email: string) =>
        request(
          turn++ % 2 ? second.url : s.url,
          'POST',
          `/v1/brainstorms/${thirdBoard.id}/shares`,
          { token: key, body: { email } },
        );
      for (let i = 0; i < BUDGET - 1; i++)
        assertError(t, await third(nobody()), 404, 'NOT_FOUND', `key C: unknown address ${i + 1}`);
      for (let i = 0; i < 5; i++)
        t.equal((await third('known@example.com')).status, 201, `known address ${i + 1}`);
      assertError(t, await third(nobody()), 404, 'NOT_FOUND', 'the 20th unknown address');
      assertLimited(await third(nobody()), 'the 21st');
    });

    t.test('person tokens: the budget is per person, whatever token they use', async (t) => {
      const { clientId } = await createClient(s.sql, {
        workspaceId: s.workspaceId,
        role: 'admin',
        scopes: [...SCOPES],
        name: 'app',
        firstParty: true,
        redirectUris: ['http://127.0.0.1/callback'],
      });
      const tokenOf = async (email: string) => {
        const { id } = await createPerson(s.sql, {
          email,
          name: email,
          password: 'correct horse battery',
          workspaceId: s.workspaceId,
          role: 'member',
        });
        const token = newSecret('fpa');
        await insertAccessToken(s.sql, {
          id: newId('tok'),
          hash: sha256(token),
          workspaceId: s.workspaceId,
          credentialId: clientId,
          userId: id,
          scopes: [...SCOPES],
          expiresAt: new Date(Date.now() + 3_600_000),
        });
        return token;
      };
      const ann = await tokenOf('ann@example.com');
      const annId = (
        await s.sql<[{ id: string }]>`select id from users where email = 'ann@example.com'`
      )[0].id;
      const bob = await tokenOf('bob@example.com');
      await spend(ann, BUDGET, 'Ann');
      assertLimited(await share(ann, nobody()), "Ann's 21st");
      const annAgain = await personTokenOn(s, clientId, annId);
      assertLimited(await share(annAgain, nobody()), "a new token of Ann's: still spent");
      t.equal(
        (await share(bob, 'known@example.com')).status,
        201,
        'Bob, through the same client, still shares',
      );
      assertError(
        t,
        await share(bob, nobody()),
        404,
        'NOT_FOUND',
        "Bob's unknown addresses are still 404",
      );
    });

    t.test(
      'flow shares and invites answer alike for known and unknown addresses, and spend nothing',
      async (t) => {
        // Key A's budget is spent: these still answer, and answer the same.
        const flow = await newFlow(t, s, { name: 'Flow' });
        const known = await request<Share>(s.url, 'POST', `/v1/flows/${flow.id}/shares`, {
          token: s.adminKey,
          body: { email: 'known@example.com' },
        });
        const stranger = await request<Share>(second.url, 'POST', `/v1/flows/${flow.id}/shares`, {
          token: s.adminKey,
          body: { email: nobody() },
        });
        t.equal(known.status, 201);
        t.equal(stranger.status, 201);
        t.same(
          Object.keys(known.body).sort(),
          Object.keys(stranger.body).sort(),
          'the same fields',
        );
        const invited = await request<Invite>(s.url, 'POST', '/v1/team/invites', {
          token: s.adminKey,
          body: { email: 'known@example.com' },
        });
        const invitedStranger = await request<Invite>(second.url, 'POST', '/v1/team/invites', {
          token: s.adminKey,
          body: { email: nobody() },
        });
        t.equal(invited.status, 201);
        t.equal(invitedStranger.status, 201);
        t.same(
          Object.keys(invited.body).sort(),
          Object.keys(invitedStranger.body).sort(),
          'the same fields',
        );
      },
    );
  },
);

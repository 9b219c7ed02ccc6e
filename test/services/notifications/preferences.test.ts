/**
 * GET/PATCH /v1/notifications/preferences: defaults, account-level changes, per-flow muting,
 * IANA zones, digestHour bounds, admin for another member's, and 404 across workspaces.
 */
import t from 'tap';
import { createKey, createWorkspace } from '../../../src/services/auth/provision.ts';
import { SCOPES } from '../../../src/services/auth/principal.ts';
import { member, newFlow, startFlowServer } from '../../helpers/flows.ts';
import { createPerson, personToken } from '../../helpers/people.ts';
import { assertError } from '../../helpers/server.ts';
import type { Flow, NotificationDeliveryList, Preferences, Refusal } from '../../helpers/wire.ts';

t.test('preferences', async (t) => {
  const s = await startFlowServer(t);
  const ada = await member(s, 'Ada');
  const bob = await member(s, 'Bob');
  const flow = await newFlow(t, s, { name: 'Launch' });
  const path = (memberId: string, flowId?: string) =>
    `/v1/notifications/preferences?memberId=${memberId}${flowId ? `&flowId=${flowId}` : ''}`;
  const get = async (memberId: string, flowId?: string) =>
    (await s.api<Preferences>('GET', path(memberId, flowId), { token: s.adminKey })).body;

  t.test('defaults, documented in the answer', async (t) => {
    const res = await s.api('GET', path(ada), { token: s.adminKey });
    t.equal(res.status, 200);
    t.strictSame(res.body, {
      memberId: ada,
      flowId: null,
      email: true,
      events: { assigned: true, unlocked: true, digest: true },
      timezone: 'UTC',
      digestHour: 8,
    });
    t.strictSame((await s.api('GET', path(ada, flow.id), { token: s.adminKey })).body, {
      memberId: ada,
      flowId: flow.id,
      email: true,
      muted: false,
      events: { assigned: true, unlocked: true, digest: true },
      timezone: 'UTC',
      digestHour: 8,
    });
  });

  t.test('account-level change: partial, canonical zone, kept across reads', async (t) => {
    const res = await s.api<Preferences>('PATCH', path(ada), {
      token: s.adminKey,
      body: { events: { unlocked: false }, timezone: 'europe/berlin', digestHour: 7 },
    });
    t.equal(res.status, 200, res.text);
    t.match(res.body, {
      email: true,
      events: { assigned: true, unlocked: false, digest: true },
      timezone: 'Europe/Berlin',
      digestHour: 7,
    });
    t.strictSame(await get(ada), res.body);
    const off = await s.api('PATCH', path(ada), { token: s.adminKey, body: { email: false } });
    t.strictSame(off.body, { ...res.body, email: false }, 'other fields kept');
    t.strictSame(
      await get(bob),
      {
        memberId: bob,
        flowId: null,
        email: true,
        events: { assigned: true, unlocked: true, digest: true },
        timezone: 'UTC',
        digestHour: 8,
      },
      'another member is untouched',
    );
  });

  t.test('per-flow mute applies on top of the account settings', async (t) => {
    const res = await s.api('PATCH', path(bob, flow.id), {
      token: s.adminKey,
      body: { muted: true },
    });
    t.equal(res.status, 200, res.text);
    t.match(res.body, { memberId: bob, flowId: flow.id, muted: true, email: true });
    t.match(await get(bob, flow.id), { muted: true });
    t.notOk('muted' in (await get(bob)), 'the account-level answer has no muted');
    t.match(
      (await s.api('PATCH', path(bob, flow.id), { token: s.adminKey, body: { muted: false } }))
        .body,
      { muted: false },
    );
  });

  t.test('bad input is a 400 naming the field, and changes nothing', async (t) => {
    const before = await get(bob);
    const cases: [string, unknown, string][] = [
      [path(bob), { timezone: 'Mars/Olympus_Mons' }, '/timezone'],
      [path(bob), { timezone: '+01:00' }, '/timezone'],
      [path(bob), { timezone: '' }, '/timezone'],
      [path(bob), { digestHour: 24 }, '/digestHour'],
      [path(bob), { digestHour: -1 }, '/digestHour'],
      [path(bob), { digestHour: 7.5 }, '/digestHour'],
      [path(bob), { muted: true }, '/muted'],
      [path(bob, flow.id), { email: false }, '/email'],
      [path(bob, flow.id), {}, ''],
      [path(bob), { events: { weekly: true } }, '/events/weekly'],
      [path(bob), { email: 'no' }, '/email'],
      [path(bob), {}, ''],
    ];
    for (const [p, body, pointer] of cases) {
      const res = await s.api<Refusal>('PATCH', p, { token: s.adminKey, body });
      assertError(t, res, 400, 'VALIDATION_FAILED', `${JSON.stringify(body)} → 400`);
      if (pointer)
        t.ok(
          res.body.error.details.errors.some((e: { pointer: string }) => e.pointer === pointer),
          `names ${pointer}`,
        );
    }
    assertError(
      t,
      await s.api('GET', `/v1/notifications/preferences`, { token: s.adminKey }),
      400,
      'VALIDATION_FAILED',
      'memberId is required',
    );
    t.strictSame(await get(bob), before, 'nothing changed');
    t.match(await get(bob, flow.id), { muted: false });
  });

  t.test("members, flows and workspaces: 404 outside the caller's workspace", async (t) => {
    const other = await createWorkspace(s.sql, { name: 'Other' });
    const stranger = (
      await createPerson(s.sql, {
        email: `stranger.${Date.now()}@example.com`,
        name: 'S',
        password: 'correct horse battery',
        workspaceId: other.id,
      })
    ).id;
    const { key } = await createKey(s.sql, {
      workspaceId: other.id,
      role: 'admin',
      scopes: [...SCOPES],
    });
    const otherFlow = (
      await s.api<Flow>('POST', '/v1/flows', { token: key, body: { name: 'Theirs' } })
    ).body;
    assertError(t, await s.api('GET', path(stranger), { token: s.adminKey }), 404, 'NOT_FOUND');
    assertError(
      t,
      await s.api('PATCH', path(stranger), { token: s.adminKey, body: { email: false } }),
      404,
      'NOT_FOUND',
    );
    assertError(
      t,
      await s.api('GET', path(ada, otherFlow.id), { token: s.adminKey }),
      404,
      'NOT_FOUND',
    );
    assertError(
      t,
      await s.api('PATCH', path(ada, otherFlow.id), { token: s.adminKey, body: { muted: true } }),
      404,
      'NOT_FOUND',
    );
    assertError(
      t,
      await s.api('GET', path(ada), { token: key }),
      404,
      'NOT_FOUND',
      'their admin cannot see ours',
    );
    assertError(t, await s.api('GET', path('usr_nobody'), { token: s.adminKey }), 404, 'NOT_FOUND');
    for (const route of ['deliveries', 'digest']) {
      assertError(
        t,
        await s.api('GET', `/v1/notifications/${route}?memberId=${stranger}`, {
          token: s.adminKey,
        }),
        404,
        'NOT_FOUND',
        `${route} of a stranger`,
      );
      assertError(
        t,
        await s.api('GET', `/v1/notifications/${route}?memberId=${ada}`, { token: key }),
        404,
        'NOT_FOUND',
        `${route} from another workspace`,
      );
      assertError(
        t,
        await s.api('GET', `/v1/notifications/${route}`, { token: s.adminKey }),
        400,
        'VALIDATION_FAILED',
        `${route} needs memberId`,
      );
    }
    assertError(
      t,
      await s.api<NotificationDeliveryList>(
        'GET',
        `/v1/notifications/deliveries?memberId=${ada}&size=0`,
        {
          token: s.adminKey,
        },
      ),
      400,
      'VALIDATION_FAILED',
    );
    t.strictSame(
      (
        await s.api<NotificationDeliveryList>(
          'GET',
          `/v1/notifications/deliveries?memberId=${ada}`,
          { token: s.adminKey },
        )
      ).body,
      { total: 0, items: [] },
    );
  });

  t.test(
    "a member changes their own; another member's needs admin; scopes are checked",
    async (t) => {
      const adaToken = await personToken(s, ada);
      const own = await s.api('PATCH', path(ada), { token: adaToken, body: { digestHour: 6 } });
      t.equal(own.status, 200, own.text);
      assertError(
        t,
        await s.api('PATCH', path(bob), { token: adaToken, body: { email: false } }),
        403,
        'FORBIDDEN',
      );
      assertError(
        t,
        await s.api('PATCH', path(bob, flow.id), { token: adaToken, body: { muted: true } }),
        403,
        'FORBIDDEN',
      );
      t.equal(
        (await s.api('GET', path(bob), { token: adaToken })).status,
        200,
        'reading is notifications:read',
      );
      const { key: memberKey } = await createKey(s.sql, {
        workspaceId: s.workspaceId,
        role: 'member',
        scopes: [...SCOPES],
      });
      assertError(
        t,
        await s.api('PATCH', path(bob), { token: memberKey, body: { email: false } }),
        403,
        'FORBIDDEN',
        'a member-role key acts for nobody in particular',
      );
      const { key: readOnly } = await createKey(s.sql, {
        workspaceId: s.workspaceId,
        role: 'admin',
        scopes: ['notifications:read'],
      });
      assertError(
        t,
        await s.api('PATCH', path(bob), { token: readOnly, body: { email: false } }),
        403,
        'INSUFFICIENT_SCOPE',
      );
      const { key: noScope } = await createKey(s.sql, {
        workspaceId: s.workspaceId,
        role: 'admin',
        scopes: ['flows:read'],
      });
      assertError(t, await s.api('GET', path(bob), { token: noScope }), 403, 'INSUFFICIENT_SCOPE');
      t.match(await get(bob), { email: true });
    },
  );
});

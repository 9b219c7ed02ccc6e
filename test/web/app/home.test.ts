/**
 * The app's home page and notification settings page over form posts: signed out, both send
 * to sign-in; home lists the person's own ready and in-progress work and their workspaces,
 * switching between them; the settings page saves every setting the API reads back, refuses a
 * bad zone or hour changing nothing, needs the form's CSRF token, answers 404 for a workspace
 * that is not theirs, and is where the emails' footer link leads. (Chromium: browser.test.ts.)
 */
import t from 'tap';
import { createPerson } from '../../helpers/people.ts';
import { createWorkspace } from '../../../src/services/auth/provision.ts';
import { upsertMembership } from '../../../src/storage/workspaces.store.ts';
import { settingsUrl } from '../../../src/services/notifications/email.ts';
import { startTestServer } from '../../helpers/server.ts';
import { Agent } from '../../services/auth/agent.ts';
import type { Flow, FlowList, Preferences } from '../../helpers/wire.ts';

t.test('home and notification settings', async (t) => {
  const s = await startTestServer(t);
  const password = 'correct horse battery staple';
  const { id: userId } = await createPerson(s.sql, {
    email: 'mo@example.com',
    name: 'Mo Member',
    password,
    workspaceId: s.workspaceId,
    role: 'member',
  });
  const second = await createWorkspace(s.sql, { name: 'Second shop' });
  await upsertMembership(s.sql, second.id, userId, 'admin');
  const stranger = await createWorkspace(s.sql, { name: 'Not hers' });
  const agent = new Agent(s.url);
  const preferences = async () =>
    (await s.api('GET', `/v1/notifications/preferences?memberId=${userId}`, { token: s.adminKey }))
      .body;

  t.test('signed out, both pages send to sign-in', async (t) => {
    for (const path of ['/app', '/app/notifications']) {
      const page = await new Agent(s.url).get(path);
      t.equal(page.status, 303, path);
      t.equal(page.location, '/app/signin');
    }
  });

  const signin = await agent.post(
    '/app/signin',
    { email: 'mo@example.com', password },
    await agent.get('/app/signin'),
  );
  t.equal(signin.location, '/app', 'sign-in lands on the home page');

  t.test('home: own work with its flow, workspaces to switch between', async (t) => {
    const flow = (
      await s.api<Flow>('POST', '/v1/flows', {
        token: s.adminKey,
        body: {
          name: 'Kitchen refit',
          tasks: [
            { name: 'Measure walls', assigneeId: userId },
            { name: 'Order units', assigneeId: userId, after: [0] },
            { name: 'Not mine' },
          ],
        },
      })
    ).body;
    const home = await agent.get('/app');
    t.equal(home.status, 200);
    t.match(home.text, /Welcome, Mo Member/);
    t.match(home.text, /You are a member of <strong>Demo<\/strong>/);
    const measure = flow.tasks.find((task) => task.name === 'Measure walls')!;
    t.match(
      home.text,
      `<a href="/app/flows/${flow.id}#task-${measure.id}"><bdi>Measure walls</bdi></a>`,
      "her ready task, linked to itself on its flow's page",
    );
    t.notMatch(home.text, /Order units|Not mine/, "not her blocked task, not others' work");
    t.match(
      home.text,
      `<a href="/app/flows/${flow.id}"><bdi>Kitchen refit</bdi></a>`,
      "its flow, linked to the flow's page in the app, published or not",
    );
    t.notMatch(home.text, /href="[^"]*\/access"/, 'no API access link for a member');

    const switched = await agent.post('/app/workspaces', { workspace: second.id }, home);
    t.equal(switched.location, '/app');
    const there = await agent.get('/app');
    t.match(there.text, /You are an admin of <strong>Second shop<\/strong>/);
    t.match(there.text, /href="\/app\/access"/, 'an admin reaches API access from home');
    t.match(there.text, /Nothing is assigned to you/);
    await agent.post('/app/workspaces', { workspace: s.workspaceId }, there);
  });

  t.test('settings: saved as the API reads them; refusals change nothing', async (t) => {
    const page = await agent.get(
      new URL(settingsUrl(s.app.appUrl, s.workspaceId)).pathname +
        new URL(settingsUrl(s.app.appUrl, s.workspaceId)).search,
    );
    t.equal(page.status, 200, "the emails' footer link opens the page");
    t.match(page.text, /Notification settings: Demo/);
    const flows = (await s.api<FlowList>('GET', '/v1/flows', { token: s.adminKey })).body.items as {
      id: string;
      name: string;
    }[];
    const kitchen = flows.find((f) => f.name === 'Kitchen refit')!;
    const saved = await agent.post(
      '/app/notifications',
      {
        workspace: s.workspaceId,
        email: 'on',
        unlocked: 'on',
        timezone: 'America/New_York',
        digestHour: '6',
        muted: [kitchen.id, 'flw_someone_elses'],
      },
      page,
    );
    t.equal(saved.status, 200);
    t.match(saved.text, /role="status">Saved\./);
    // The caption is true whichever way the box is ticked (a browser ticks it without reloading).
    t.match(
      saved.text,
      /<input type="checkbox" id="email" name="email" value="on" checked/,
      'the master switch is ticked',
    );
    t.match(
      saved.text,
      /id="email-hint">The master switch: while it is unticked, none of the emails below is sent\.</,
      'its caption does not say it is off',
    );
    t.notMatch(saved.text, /off, nothing below is sent/);
    t.match(await preferences(), {
      email: true,
      events: { assigned: false, unlocked: true, digest: false },
      timezone: 'America/New_York',
      digestHour: 6,
    });
    const muted = await s.api<Preferences>(
      'GET',
      `/v1/notifications/preferences?memberId=${userId}&flowId=${kitchen.id}`,
      { token: s.adminKey },
    );
    t.equal(muted.body.muted, true);
    const [stray] =
      await s.sql`select 1 from notification_flow_settings where flow_id = 'flw_someone_elses'`;
    t.notOk(stray, 'a flow not listed is not written');

    const before = await preferences();
    for (const [fields, why] of [
      [{ timezone: 'Mars/Olympus_Mons', digestHour: '7' }, /unknown time zone/],
      [{ timezone: 'UTC', digestHour: '24' }, /whole hour from 0 to 23/],
    ] as const) {
      const refused = await agent.post(
        '/app/notifications',
        { workspace: s.workspaceId, email: 'on', ...fields },
        page,
      );
      t.equal(refused.status, 400);
      t.match(refused.text, why);
      t.match(refused.text, /role="alert"/, 'said on the page');
    }
    t.same(await preferences(), before, 'nothing changed');

    const forged = await agent.post('/app/notifications', {
      workspace: s.workspaceId,
      timezone: 'UTC',
      digestHour: '8',
      csrf: 'x'.repeat(43),
    });
    t.equal(forged.status, 403, "a post without the page's token is refused");
    t.same(await preferences(), before);
  });

  t.test("another workspace's settings are not found", async (t) => {
    const page = await agent.get(`/app/notifications?workspace=${stranger.id}`);
    t.equal(page.status, 404);
    const home = await agent.get('/app');
    const post = await agent.post(
      '/app/notifications',
      { workspace: stranger.id, email: 'on', timezone: 'UTC', digestHour: '8' },
      home,
    );
    t.equal(post.status, 404);
  });

  t.test('sign out from home', async (t) => {
    const home = await agent.get('/app');
    t.match(home.text, /action="\/app\/signout"/);
    const out = await agent.post('/app/signout', {}, home);
    t.equal(out.location, '/app/signin?signedout=1');
    t.equal((await agent.get('/app')).location, '/app/signin');
  });
});

t.test(
  'an app address that names nothing is an HTML page with a way home, never JSON',
  async (t) => {
    const s = await startTestServer(t);
    for (const [method, path, status] of [
      ['GET', '/app/flowz', 404],
      ['GET', '/app/flows/flw_nothing/tasks', 404],
      ['DELETE', '/app/notifications', 405],
    ] as const) {
      const res = await fetch(`${s.url}${path}`, { method, headers: { accept: 'text/html' } });
      const text = await res.text();
      t.equal(res.status, status, `${method} ${path}`);
      t.match(res.headers.get('content-type'), /^text\/html/, 'a page');
      t.match(text, '<a href="/">Go to your home page</a>', 'with a way home');
      t.notMatch(text, '"error"', 'not the envelope');
    }
    // The way home leads into the app; the API's own paths keep the envelope.
    const home = await fetch(`${s.url}/`, { redirect: 'manual' });
    t.equal(home.status, 303);
    t.equal(home.headers.get('location'), '/app');
    const api = await s.api<{ error: { code: string } }>('GET', '/v1/nothing', {
      token: s.adminKey,
    });
    t.equal(api.status, 404);
    t.equal(api.body.error.code, 'NOT_FOUND');
    t.match(api.headers.get('content-type'), /^application\/json/);
    const appish = await fetch(`${s.url}/application`);
    t.match(
      appish.headers.get('content-type'),
      /^application\/json/,
      'a path that only starts alike',
    );
  },
);

/**
 * The member's flow pages over form posts (Chromium: flows.browser.test.ts): the list a person
 * can read (search, archived, paging; a guest's shared flows), a flow's page (tasks by status,
 * what each waits on and holds up, diagram, schedule, report; a flow with no dependencies, one
 * with no tasks), moving work with CSRF through the API's own rules (a refusal in words, a
 * viewer's forged post refused and changing nothing), the ETag a reload revalidates with, and
 * the links home and email rows lead to.
 */
import t from 'tap';
import { createPerson, personToken } from '../../helpers/people.ts';
import { createWorkspace } from '../../../src/services/auth/provision.ts';
import { upsertMembership } from '../../../src/storage/workspaces.store.ts';
import { startTestServer } from '../../helpers/server.ts';
import { Agent, csrfOf } from '../../services/auth/agent.ts';
import type { Flow, Task } from '../../helpers/wire.ts';

const password = 'correct horse battery staple';

t.test('the flow pages of the app', async (t) => {
  const s = await startTestServer(t, { rateLimitPerMinute: 1_000_000, rateLimitBurst: 1_000_000 });
  const person = async (email: string, name: string, role: 'member' | 'viewer' | null) => {
    const { id } = await createPerson(s.sql, {
      email,
      name,
      password,
      ...(role ? { workspaceId: s.workspaceId, role } : {}),
    });
    const agent = new Agent(s.url);
    const signin = await agent.post(
      '/app/signin',
      { email, password },
      await agent.get('/app/signin'),
    );
    if (signin.status !== 303) throw new Error(`sign-in of ${email}: ${signin.status}`);
    return { id, agent };
  };
  const mo = await person('mo@example.com', 'Mo Member', 'member');
  const vi = await person('vi@example.com', 'Vi Viewer', 'viewer');
  const api = <T>(method: string, path: string, body?: unknown) =>
    s.api<T>(method, path, { token: s.adminKey, ...(body ? { body } : {}) });
  const newFlow = async (body: unknown) => (await api<Flow>('POST', '/v1/flows', body)).body;
  const ids = (flow: Flow) => Object.fromEntries(flow.tasks.map((task) => [task.name, task.id]));
  const task = async (flowId: string, taskId: string) =>
    (await api<Task>('GET', `/v1/flows/${flowId}/tasks/${taskId}`)).body;

  const flow = await newFlow({
    name: 'Kitchen <refit>',
    dueDate: '2099-01-01',
    tasks: [
      { name: 'Measure walls', estimateHours: 4, assigneeId: mo.id },
      { name: 'Order units', estimateHours: 8, estimateRange: { low: 6, high: 16 }, after: [0] },
      { name: 'Fit units', estimateHours: 16, after: [1] },
      { name: 'Paint', estimateHours: 2 },
    ],
  });
  const id = ids(flow);
  const idOf = (name: string) => id[name] ?? '';
  const flowPath = `/app/flows/${flow.id}`;

  t.test('signed out, the pages send to sign-in', async (t) => {
    for (const path of ['/app/flows', flowPath, `${flowPath}/tasks/${idOf('Paint')}`]) {
      const page = await new Agent(s.url).get(path);
      t.equal(page.status, 303, path);
      t.equal(page.location, `/app/signin?next=${encodeURIComponent(path)}`, 'and back after');
    }
  });

  t.test(
    'a link followed while signed out lands after sign-in; one to elsewhere goes home',
    async (t) => {
      const agent = new Agent(s.url);
      const sent = await agent.get(`${flowPath}/tasks/${idOf('Paint')}`);
      const form = await agent.get(sent.location ?? '');
      t.match(
        form.text,
        `<input type="hidden" name="next" value="${flowPath}/tasks/${idOf('Paint')}">`,
      );
      const signin = await agent.post(
        '/app/signin',
        { email: 'mo@example.com', password, next: `${flowPath}/tasks/${idOf('Paint')}` },
        form,
      );
      t.equal(signin.location, `${flowPath}/tasks/${idOf('Paint')}`, 'the page she asked for');
      for (const next of [
        '//evil.example/app/x',
        'https://evil.example/',
        '/app\\evil',
        '/v1/me',
      ]) {
        const other = new Agent(s.url);
        const page = await other.get(`/app/signin?next=${encodeURIComponent(next)}`);
        t.notMatch(page.text, /name="next"/, `${next}: not carried`);
        const done = await other.post(
          '/app/signin',
          { email: 'mo@example.com', password, next },
          page,
        );
        t.equal(done.location, '/app', `${next}: home instead`);
      }
    },
  );

  t.test('the list: progress and outlook, search, archived, pages', async (t) => {
    const list = await mo.agent.get('/app/flows');
    t.equal(list.status, 200);
    t.match(
      list.text,
      `<a href="${flowPath}"><bdi>Kitchen &lt;refit&gt;</bdi></a>`,
      'named, escaped, linked',
    );
    t.match(list.text, /<td>2099-01-01<\/td>/, 'its due date');
    t.match(list.text, /verdict-on-track">On track/);
    t.match(list.text, /0 of 4 done/);
    t.match(list.text, /aria-current="page">Flows</, 'the navigation marks where she is');
    const others = [];
    for (let i = 0; i < 3; i++) others.push(await newFlow({ name: `Extra ${i}` }));
    const found = await mo.agent.get('/app/flows?q=ktch');
    t.match(found.text, /No flow(&#39;|')s name contains “ktch”/);
    const kitchen = await mo.agent.get('/app/flows?q=kitchen');
    t.match(kitchen.text, /Kitchen &lt;refit&gt;/);
    t.notMatch(kitchen.text, /Extra 0/);
    const first = await mo.agent.get('/app/flows?size=2');
    t.match(first.text, /4 flows, 1–2 shown/);
    t.match(first.text, /href="\/app\/flows\?from=2" rel="next"/);
    const second = await mo.agent.get('/app/flows?size=2&from=2');
    t.match(second.text, /rel="prev"/);
    t.match(second.text, /Kitchen/, 'the oldest on the last page');
    await api('DELETE', `/v1/flows/${others[0]?.id}`);
    const archived = await mo.agent.get('/app/flows?archived=true');
    t.match(archived.text, /Archived flows/);
    t.match(archived.text, /Extra 0/);
    t.notMatch(archived.text, /Kitchen/);
    const bad = await mo.agent.get('/app/flows?size=0');
    t.equal(bad.status, 400, 'a bad page size is refused');
    t.match(bad.headers.get('content-type'), /text\/html/, 'as a page');
  });

  t.test(
    "a flow's page: tasks by status, what each waits on and holds up, diagram, schedule, report",
    async (t) => {
      const page = await mo.agent.get(flowPath);
      t.equal(page.status, 200);
      t.match(page.text, /<h1><bdi>Kitchen &lt;refit&gt;<\/bdi><\/h1>/);
      t.match(page.text, /<h3 id="group-ready">Ready \(2\)<\/h3>/);
      t.match(page.text, /<h3 id="group-blocked">Blocked \(2\)<\/h3>/);
      t.notMatch(page.text, /group-in_progress|group-done/, 'no empty groups');
      t.match(
        page.text,
        new RegExp(`<li id="task-${idOf('Measure walls')}" class="task-card critical">`),
      );
      t.match(page.text, /Measure walls<\/bdi> <span class="tag">critical path/);
      t.match(page.text, /Assigned to you · 4 h/);
      t.match(page.text, /Unassigned · 8 h \(6–16 h\)/, 'the estimate with its range');
      t.match(
        page.text,
        new RegExp(
          `Waits on <a href="${flowPath}#task-${idOf('Measure walls')}"><bdi>Measure walls`,
        ),
      );
      t.match(
        page.text,
        /Next: <a [^>]+><bdi>Order units<\/bdi><\/a> <span class="muted">· holds up 2 tasks/,
      );
      t.match(
        page.text,
        new RegExp(`action="${flowPath}/tasks/${idOf('Measure walls')}/start"`),
        'Start on a ready task',
      );
      t.notMatch(
        page.text,
        new RegExp(`/tasks/${idOf('Order units')}/start"`),
        'no Start on a blocked one',
      );
      t.match(page.text, /aria-label="Assign to me: Paint"/, 'Assign to me on what is not hers');
      t.notMatch(page.text, /aria-label="Assign to me: Measure walls"/);
      t.match(page.text, /<svg[^>]*class="fp-diagram/, 'the diagram, drawn as on the public page');
      t.match(page.text, /<dt>Projected finish<\/dt>/);
      t.match(page.text, /<h2 id="schedule-heading">Schedule<\/h2>/);
      t.match(page.text, /<dt>Complete<\/dt><dd>0%<\/dd>/);
      t.match(page.text, /<h3>Holding up the most<\/h3>/);
      t.match(page.text, /<meta name="fp-page-tag" content="[^"]+">/);
      t.match(page.text, /<script src="\/app\/live.js" defer><\/script>/);
      t.match(page.headers.get('content-security-policy'), /script-src 'self'; connect-src 'self'/);
      t.notMatch(page.text, /<script>/, 'nothing inline');
    },
  );

  t.test('a flow with no dependencies, and one with no tasks, are shown', async (t) => {
    const loose = await newFlow({ name: 'Loose ends', tasks: [{ name: 'One' }, { name: 'Two' }] });
    const page = await mo.agent.get(`/app/flows/${loose.id}`);
    t.equal(page.status, 200);
    t.match(page.text, /Ready \(2\)/);
    t.match(page.text, /class="fp-diagram/);
    const empty = await newFlow({ name: 'Empty' });
    const none = await mo.agent.get(`/app/flows/${empty.id}`);
    t.equal(none.status, 200);
    t.match(none.text, /This flow has no tasks yet/);
    t.match(none.text, /Nothing left to schedule/);
  });

  t.test(
    'moving work: start, complete (what it made ready), reopen, assign, comment',
    async (t) => {
      const page = await mo.agent.get(flowPath);
      const started = await mo.agent.post(
        `${flowPath}/tasks/${idOf('Measure walls')}/start`,
        {},
        page,
      );
      t.equal(started.status, 303);
      t.equal(
        started.location,
        `${flowPath}#task-${idOf('Measure walls')}`,
        'back to the task on its page',
      );
      t.equal(
        (await task(flow.id, idOf('Measure walls'))).status,
        'in_progress',
        'the API sees it started',
      );
      const after = await mo.agent.get(flowPath);
      t.match(after.text, /role="status"><p>Started Measure walls.<\/p>/, 'with a message');
      t.match(after.text, /In progress \(1\)/);
      t.equal(
        after.headers.get('cache-control'),
        'no-store',
        'a page with a message is shown once, not kept',
      );
      const again = await mo.agent.get(flowPath);
      t.notMatch(again.text, /Started Measure walls/, 'the message is read once');

      const done = await mo.agent.post(
        `${flowPath}/tasks/${idOf('Measure walls')}/complete`,
        {},
        again,
      );
      t.equal(done.status, 303);
      const completed = await mo.agent.get(flowPath);
      t.match(
        completed.text,
        /Completed Measure walls; 1 task now ready\.<\/p><p>Now ready: <bdi>Order units<\/bdi>\.<\/p>/,
      );
      t.match(completed.text, /Done \(1\)/);
      t.equal((await task(flow.id, idOf('Order units'))).status, 'ready', 'the next task is ready');

      // Fit units waits on Order units: a forged Start is judged, refused in words, changes nothing.
      const blocked = await mo.agent.post(
        `${flowPath}/tasks/${idOf('Fit units')}/start`,
        {},
        completed,
      );
      t.equal(blocked.status, 303);
      const refused = await mo.agent.get(flowPath);
      t.match(refused.text, /role="alert">Not started: it waits on Order units\.<\/p>/);
      t.equal((await task(flow.id, idOf('Fit units'))).status, 'blocked');

      const reopen = await mo.agent.post(
        `${flowPath}/tasks/${idOf('Measure walls')}/reopen`,
        {},
        refused,
      );
      t.equal(reopen.status, 303);
      t.match((await mo.agent.get(flowPath)).text, /Reopened Measure walls\./);
      t.equal((await task(flow.id, idOf('Measure walls'))).status, 'in_progress');

      const mine = await mo.agent.post(`${flowPath}/tasks/${idOf('Paint')}/assign`, {}, refused);
      t.equal(mine.status, 303);
      t.equal((await task(flow.id, idOf('Paint'))).assigneeId, mo.id, 'assigned to her');

      const taskPage = await mo.agent.get(`${flowPath}/tasks/${idOf('Paint')}`);
      t.equal(taskPage.status, 200);
      t.match(taskPage.text, /No comments yet/);
      const said = await mo.agent.post(
        `${flowPath}/tasks/${idOf('Paint')}/comment`,
        { body: 'Which <white>?' },
        taskPage,
      );
      t.equal(said.location, `${flowPath}/tasks/${idOf('Paint')}`);
      const withComment = await mo.agent.get(said.location ?? '');
      t.match(withComment.text, /Comment added\./);
      t.match(
        withComment.text,
        /<strong>Mo Member<\/strong>.*<p class="prose">Which &lt;white&gt;\?<\/p>/s,
      );
      const blank = await mo.agent.post(
        `${flowPath}/tasks/${idOf('Paint')}/comment`,
        { body: '   ' },
        taskPage,
      );
      t.equal(blank.status, 303);
      t.match(
        (await mo.agent.get(blank.location ?? '')).text,
        /role="alert">Not saved: the comment/,
      );
      const comments = await api<{ total: number }>(
        'GET',
        `/v1/flows/${flow.id}/tasks/${idOf('Paint')}/comments`,
      );
      t.equal(comments.body.total, 1, 'the blank one was not kept');
    },
  );

  t.test('a viewer reads, sees no actions, and a forged post is refused', async (t) => {
    const page = await vi.agent.get(flowPath);
    t.equal(page.status, 200);
    t.notMatch(page.text, /\/(start|complete|reopen|assign)"/, 'no action forms');
    t.match(page.text, /You can read this flow; members of its workspace move its work/);
    const forged = await vi.agent.post(`${flowPath}/tasks/${idOf('Paint')}/start`, {}, page);
    t.equal(forged.status, 403);
    t.match(forged.headers.get('content-type'), /text\/html/);
    t.match(forged.text, /A viewer credential cannot make changes/);
    t.equal((await task(flow.id, idOf('Paint'))).status, 'ready', 'nothing changed');
    const commented = await vi.agent.post(
      `${flowPath}/tasks/${idOf('Paint')}/comment`,
      { body: 'hi' },
      page,
    );
    t.equal(commented.status, 403);
    const noToken = await mo.agent.post(`${flowPath}/tasks/${idOf('Paint')}/start`, {
      csrf: 'x'.repeat(43),
    });
    t.equal(noToken.status, 403, "a post without the page's token is refused");
    t.match(noToken.text, /did not come from this site/);
    t.equal((await task(flow.id, idOf('Paint'))).status, 'ready');
    const unknown = await mo.agent.post(
      `${flowPath}/tasks/${idOf('Paint')}/delete`,
      {},
      await mo.agent.get(flowPath),
    );
    t.equal(unknown.status, 404, 'an action nobody offers names nothing');
  });

  t.test(
    'a guest sees what is shared with them, comments as a commenter, moves nothing',
    async (t) => {
      const gus = await person('gus@elsewhere.example', 'Gus Guest', null);
      const none = await gus.agent.get('/app/flows');
      t.equal(none.status, 200, 'a person of no workspace has a flows page');
      t.match(none.text, /Nothing is shared with you yet/);
      t.equal((await gus.agent.get('/app')).location, '/app/flows', 'which is home for a guest');
      t.equal((await gus.agent.get(flowPath)).status, 404, 'an unshared flow is not found');
      await api('POST', `/v1/flows/${flow.id}/shares`, {
        email: 'gus@elsewhere.example',
        role: 'commenter',
      });
      const list = await gus.agent.get('/app/flows');
      t.match(list.text, /Shared with you/);
      t.match(
        list.text,
        new RegExp(
          `href="${flowPath}"><bdi>Kitchen &lt;refit&gt;</bdi></a> <span class="muted">\\(Demo, as a commenter\\)`,
        ),
      );
      const page = await gus.agent.get(flowPath);
      t.equal(page.status, 200);
      t.match(page.text, /Shared with you as a commenter/);
      t.notMatch(page.text, /\/(start|complete|reopen|assign)"/);
      const forged = await gus.agent.post(`${flowPath}/tasks/${idOf('Paint')}/start`, {}, page);
      t.equal(forged.status, 403);
      const taskPage = await gus.agent.get(`${flowPath}/tasks/${idOf('Paint')}`);
      t.match(taskPage.text, /<label for="comment-body">Add a comment<\/label>/);
      const said = await gus.agent.post(
        `${flowPath}/tasks/${idOf('Paint')}/comment`,
        { body: 'Looks good' },
        taskPage,
      );
      t.equal(said.status, 303);
      t.match((await gus.agent.get(said.location ?? '')).text, /Gus Guest/);
      await api('POST', `/v1/flows/${flow.id}/shares`, {
        email: 'gus@elsewhere.example',
        role: 'viewer',
      });
      const asViewer = await gus.agent.get(`${flowPath}/tasks/${idOf('Paint')}`);
      t.notMatch(asViewer.text, /Add a comment/, 'a viewer guest has no comment form');
      const refused = await gus.agent.post(
        `${flowPath}/tasks/${idOf('Paint')}/comment`,
        { body: 'again' },
        taskPage,
      );
      t.equal(refused.status, 403);
    },
  );

  t.test("another workspace's flow is an HTML 404 with a way home", async (t) => {
    const other = await createWorkspace(s.sql, { name: 'Other' });
    const { id: otherAdmin } = await createPerson(s.sql, {
      email: 'oa@example.com',
      name: 'OA',
      password,
      workspaceId: other.id,
      role: 'admin',
    });
    const token = await personToken(s, otherAdmin, other.id);
    const theirs = (await s.api<Flow>('POST', '/v1/flows', { token, body: { name: 'Theirs' } }))
      .body;
    for (const path of [`/app/flows/${theirs.id}`, '/app/flows/flw_doesnotexist']) {
      const page = await mo.agent.get(path);
      t.equal(page.status, 404, path);
      t.match(page.headers.get('content-type'), /text\/html/);
      t.match(page.text, /<a href="\/">Go to your home page<\/a>/);
    }
    const forged = await mo.agent.post(
      `/app/flows/${theirs.id}/tasks/x/start`,
      {},
      await mo.agent.get('/app/flows'),
    );
    t.equal(forged.status, 404, 'nor can anything be done to it');
  });

  t.test(
    'a reload revalidates: 304 while nothing changed, the page again after a change',
    async (t) => {
      const page = await mo.agent.get(flowPath);
      const etag = page.headers.get('etag');
      t.ok(etag, 'an ETag');
      t.equal(page.headers.get('cache-control'), 'private, no-cache');
      const same = await mo.agent.request('GET', flowPath, undefined, {
        'if-none-match': etag ?? '',
      });
      t.equal(same.status, 304);
      t.equal(
        (await vi.agent.request('GET', flowPath, undefined, { 'if-none-match': etag ?? '' }))
          .status,
        200,
        "another person's copy is not theirs",
      );
      await api('PATCH', `/v1/flows/${flow.id}`, { name: 'Kitchen refit' });
      const changed = await mo.agent.request('GET', flowPath, undefined, {
        'if-none-match': etag ?? '',
      });
      t.equal(changed.status, 200);
      t.match(changed.text, /<h1><bdi>Kitchen refit<\/bdi>/);
      const script = await mo.agent.get('/app/live.js');
      t.equal(script.status, 200);
      t.match(script.headers.get('content-type'), /text\/javascript/);
    },
  );

  t.test('home rows, a past-due subscription and the free plan', async (t) => {
    const home = await mo.agent.get('/app');
    t.match(
      home.text,
      new RegExp(
        `<a href="${flowPath}#task-${idOf('Measure walls')}"><bdi>Measure walls</bdi></a>`,
      ),
      'a work row leads to the task on its page',
    );
    // A past-due subscription: the flow reads, and every move is refused as on the API.
    await s.sql`update workspaces set past_due = true where id = ${s.workspaceId}`;
    const page = await mo.agent.get(flowPath);
    t.equal(page.status, 200, 'a past-due workspace still reads');
    const refused = await mo.agent.post(`${flowPath}/tasks/${idOf('Paint')}/start`, {}, page);
    t.equal(refused.status, 403);
    t.match(refused.text, /The subscription is past due/);
    t.equal((await task(flow.id, idOf('Paint'))).status, 'ready', 'nothing moved');
    await s.sql`update workspaces set past_due = false where id = ${s.workspaceId}`;
    const free = await createWorkspace(s.sql, { name: 'Free shop', plan: 'free' });
    await upsertMembership(s.sql, free.id, mo.id, 'member');
    const csrf = csrfOf(home.text) ?? '';
    const switched = await mo.agent.post('/app/workspaces', { workspace: free.id, csrf });
    t.equal(switched.status, 303);
    const list = await mo.agent.get('/app/flows');
    t.equal(list.status, 403);
    t.match(list.text, /Flows need the pro plan: ask an owner of Free shop to upgrade/);
  });
});

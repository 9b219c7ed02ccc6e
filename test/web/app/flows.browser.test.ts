/**
 * A member's day in a real Chromium, at a phone's width (360 px) and a desktop's (1,280 px):
 * the assignment email's link, sign-in, the task on its flow's page, Start and Complete with
 * the next task shown ready, the page refreshing itself when someone else moves work; a viewer
 * with no action buttons whose forged post is refused. No console errors, and axe-core finds
 * no serious or critical violation on any page. Screenshots go to test-artifacts/.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import t from 'tap';
import type { BrowserContext, Page } from 'playwright-core';
import { artifact, openBrowser } from '../../helpers/browser.ts';
import { startSmtp } from '../../helpers/smtp.ts';
import { textLinks } from '../../helpers/mail-checks.ts';
import { createPerson } from '../../helpers/people.ts';
import { startTestServer } from '../../helpers/server.ts';
import type { Flow } from '../../helpers/wire.ts';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const password = 'correct horse battery staple';

interface AxeResult {
  violations: { id: string; impact: string | null; nodes: { target: string[] }[] }[];
}

/**
 * axe-core's WCAG 2.1 A and AA rules on the page as it stands (among them an accessible name
 * on every button, link and field): the serious and critical findings.
 */
async function axeProblems(page: Page): Promise<string[]> {
  // Evaluated through the debugging protocol, which the page's CSP does not govern.
  await page.evaluate(AXE);
  const result = (await page.evaluate(
    "axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } })",
  )) as AxeResult;
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join('; ')}`);
}

/** Console errors and uncaught exceptions of a page, collected from its start. */
function watchErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(error.message));
  return errors;
}

t.test("a member's flow in Chromium at 360 and 1280 px", async (t) => {
  const browser = await openBrowser(t);
  if (!browser) return;
  const smtp = await startSmtp(t);
  const s = await startTestServer(t, {
    smtpUrl: smtp.url,
    notifyQuietSeconds: 1,
    notifyMaxWaitSeconds: 3,
    rateLimitPerMinute: 1_000_000,
    rateLimitBurst: 1_000_000,
  });
  const member = await createPerson(s.sql, {
    email: 'ria@example.com',
    name: 'Ria Member',
    password,
    workspaceId: s.workspaceId,
    role: 'member',
  });
  await createPerson(s.sql, {
    email: 'vic@example.com',
    name: 'Vic Viewer',
    password,
    workspaceId: s.workspaceId,
    role: 'viewer',
  });
  const api = <T>(method: string, path: string, body?: unknown) =>
    s.api<T>(method, path, { token: s.adminKey, ...(body ? { body } : {}) });

  const signIn = async (page: Page, email: string) => {
    await page.fill('#email', email);
    await page.fill('#password', password);
    await Promise.all([
      page.waitForURL((url) => !url.pathname.endsWith('/signin')),
      page.click('button:has-text("Sign in")'),
    ]);
  };
  const contexts: BrowserContext[] = [];
  t.teardown(() => Promise.all(contexts.map((c) => c.close())));

  for (const width of [360, 1280]) {
    t.test(`${width} px`, async (t) => {
      const name = `Launch ${width}`;
      const flow = (
        await api<Flow>('POST', '/v1/flows', {
          name,
          dueDate: '2099-06-01',
          tasks: [
            { name: 'Survey the site', estimateHours: 8 },
            { name: 'Build the frame', estimateHours: 24, after: [0] },
            { name: 'Paint', estimateHours: 6, after: [1] },
          ],
        })
      ).body;
      const id = (task: string) => flow.tasks.find((x) => x.name === task)?.id ?? '';
      for (const task of ['Survey the site', 'Build the frame'])
        await api('POST', `/v1/flows/${flow.id}/tasks/${id(task)}/assign`, {
          assigneeId: member.id,
        });

      // The assignment email's link to the first task.
      const [mail] = await smtp.waitFor(
        (m) => m.to.includes('ria@example.com') && (m.parsed.text ?? '').includes(name),
        { timeoutMs: 60_000 },
      );
      const link = textLinks(mail?.parsed.text ?? '').find((l) =>
        l.endsWith(`#task-${id('Survey the site')}`),
      );
      t.ok(link, 'the email links to the task on its page');

      const context = await browser.newContext({ viewport: { width, height: 800 } });
      contexts.push(context);
      const page = await context.newPage();
      const errors = watchErrors(page);
      // The server was given port 0, so its links name that; the path and fragment are the link's.
      const { pathname, hash } = new URL(link ?? 'http://x/');
      await page.goto(`${s.url}${pathname}${hash}`);
      t.equal(
        new URL(page.url()).pathname,
        '/app/signin',
        'signed out, the link asks for sign-in first',
      );
      await signIn(page, 'ria@example.com');
      t.equal(
        new URL(page.url()).pathname,
        `/app/flows/${flow.id}`,
        "then lands on the task's flow",
      );
      t.equal(await page.title(), `${name} · flowplan`);
      t.ok(await page.isVisible(`#task-${id('Survey the site')}`), 'the task is on the page');
      await page.screenshot({ path: artifact(`app-flow-${width}.png`), fullPage: true });
      t.same(await axeProblems(page), [], 'axe: no serious violation on the flow page');
      const sideways = await page.evaluate(
        'document.documentElement.scrollWidth - document.documentElement.clientWidth',
      );
      t.equal(sideways, 0, 'the page never scrolls sideways');

      await Promise.all([
        page.waitForURL(/#task-/),
        page.getByRole('button', { name: 'Start: Survey the site' }).click(),
      ]);
      t.match(await page.textContent('[role="status"]'), 'Started Survey the site.');
      t.ok(await page.isVisible('#group-in_progress'), 'it is in progress');

      await Promise.all([
        page.waitForLoadState(),
        page.getByRole('button', { name: 'Complete: Survey the site' }).click(),
      ]);
      await page.waitForSelector('text=Now ready:');
      t.match(
        await page.textContent('[role="status"]'),
        /Completed Survey the site; 1 task now ready\.\s*Now ready: Build the frame\./,
      );
      const ready = await page.textContent('section[aria-labelledby="group-ready"]');
      t.match(ready, 'Build the frame', 'the next task shows ready');
      t.ok(
        await page.getByRole('button', { name: 'Start: Build the frame' }).isVisible(),
        'with its Start button',
      );
      await page.screenshot({ path: artifact(`app-flow-completed-${width}.png`), fullPage: true });
      t.same(await axeProblems(page), [], 'axe: none after a move either');

      // Someone else starts the next task: the open page refreshes itself (live.js).
      await api('POST', `/v1/flows/${flow.id}/tasks/${id('Build the frame')}/start`);
      await page.waitForSelector(
        'section[aria-labelledby="group-in_progress"] >> text=Build the frame',
        { timeout: 30_000 },
      );
      t.pass('the page showed the change without a reload by hand');

      // The task's page: comments.
      await page.goto(`${s.url}/app/flows/${flow.id}/tasks/${id('Build the frame')}`);
      await page.fill('#comment-body', 'Frame ordered, arrives Tuesday.');
      await Promise.all([page.waitForLoadState(), page.click('button:has-text("Comment")')]);
      t.match(await page.textContent('.comments'), 'Frame ordered, arrives Tuesday.');
      t.same(await axeProblems(page), [], 'axe: none on the task page');
      await page.screenshot({ path: artifact(`app-task-${width}.png`), fullPage: true });

      // The list of flows.
      await page.goto(`${s.url}/app/flows`);
      t.ok(await page.getByRole('link', { name }).isVisible());
      t.same(await axeProblems(page), [], 'axe: none on the list');
      await page.screenshot({ path: artifact(`app-flows-${width}.png`), fullPage: true });
      t.same(errors, [], 'no console errors');

      // A viewer: no action buttons; a post forged with their own form token is refused.
      const viewerContext = await browser.newContext({ viewport: { width, height: 800 } });
      contexts.push(viewerContext);
      const viewer = await viewerContext.newPage();
      const viewerErrors = watchErrors(viewer);
      await viewer.goto(`${s.url}/app/flows/${flow.id}`);
      await signIn(viewer, 'vic@example.com');
      t.equal(new URL(viewer.url()).pathname, `/app/flows/${flow.id}`);
      t.equal(
        await viewer
          .getByRole('button', { name: /^(Start|Complete|Reopen|Assign to me):/ })
          .count(),
        0,
        'no action buttons',
      );
      const csrf = await viewer.getAttribute('input[name="csrf"]', 'value');
      const forged = await viewerContext.request.post(
        `${s.url}/app/flows/${flow.id}/tasks/${id('Paint')}/assign`,
        {
          form: { csrf: csrf ?? '' },
          maxRedirects: 0,
        },
      );
      t.equal(forged.status(), 403, 'a forged post is refused');
      const paint = await api<{ assigneeId: string | null }>(
        'GET',
        `/v1/flows/${flow.id}/tasks/${id('Paint')}`,
      );
      t.equal(paint.body.assigneeId, null, 'and changed nothing');
      t.same(await axeProblems(viewer), [], "axe: none on the viewer's page");
      await viewer.screenshot({ path: artifact(`app-flow-viewer-${width}.png`), fullPage: true });
      t.same(viewerErrors, [], 'no console errors for the viewer');
    });
  }
});

/**
 * The public pages in real Chromium: the flow page draws its diagram with the task names,
 * works with JavaScript off, fits a 360 px phone without sideways page scrolling, stays
 * readable in light and dark mode (contrast measured), and its embed loads inside an <iframe> on another origin (while
 * the full page refuses to be framed). Screenshots go to test-artifacts/.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import type { Page } from 'playwright-core';
import { artifact, openBrowser } from '../helpers/browser.ts';
import { ok, startFlowServer } from '../helpers/flows.ts';
import { seedPublished } from './helpers.ts';

/** WCAG relative luminance contrast of two CSS `rgb(…)` colours. */
function contrast(a: string, b: string): number {
  const luminance = (css: string) => {
    const [r, g, b] = css.match(/[\d.]+/g)!.slice(0, 3).map((v) => {
      const c = Number(v) / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
  };
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi! + 0.05) / (lo! + 0.05);
}

function watchCsp(page: Page): string[] {
  const violations: string[] = [];
  page.on('console', (message) => {
    if (/Content Security Policy|Refused to/i.test(message.text())) violations.push(message.text());
  });
  return violations;
}

t.test('public pages in Chromium', async (t) => {
  const browser = await openBrowser(t);
  if (!browser) return;
  const s = await startFlowServer(t);
  const seeded = await seedPublished(t, s);
  // A wide flow: twelve tasks in a chain, far wider than a phone.
  const wide = (await s.api('POST', '/v1/flows', {
    token: s.adminKey,
    body: { name: 'Long chain', dueDate: '2031-01-01', tasks: Array.from({ length: 12 }, (_, i) => ({ name: `Step ${i + 1}`, estimateHours: 4, ...(i > 0 ? { after: [i - 1] } : {}) })) },
  })).body;
  const widePath = new URL((await ok(t, s, 'POST', `/v1/flows/${wide.id}/publish`)).publicUrl).pathname;

  await t.test('the page renders the diagram with the task names, JavaScript off', async (t) => {
    const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 1200, height: 900 } });
    const page = await context.newPage();
    const violations = watchCsp(page);
    const response = await page.goto(s.url + seeded.flowPath);
    t.equal(response?.status(), 200);
    const diagram = page.locator('main svg.fp-diagram');
    t.ok(await diagram.isVisible(), 'the inline SVG diagram is visible');
    const svgText = await diagram.textContent();
    for (const name of ['Design the box', 'Build the box', 'Ship the box']) t.ok(svgText!.includes(name), `the diagram names ${name}`);
    t.ok((await diagram.getAttribute('aria-label'))!.length > 20, 'with a text alternative');
    t.equal(await page.locator('main').count(), 1, 'one main landmark');
    t.equal(await page.locator('h1').textContent(), 'Launch plan');
    const link = await page.evaluate('getComputedStyle(document.querySelector(".skip-link")).position');
    t.equal(link, 'absolute', 'the stylesheet loaded (skip link positioned off screen)');
    await page.screenshot({ path: artifact('public-flow-page.png'), fullPage: true });
    t.same(violations, [], 'no CSP violations');
    await context.close();
  });

  await t.test('360 px wide: no sideways page scroll; the diagram scrolls in its own box', async (t) => {
    const context = await browser.newContext({ viewport: { width: 360, height: 740 }, deviceScaleFactor: 2, isMobile: true });
    const page = await context.newPage();
    for (const path of [widePath, seeded.flowPath, seeded.boardPath]) {
      await page.goto(s.url + path);
      // Strings, not functions: the tests compile without the DOM's types.
      const sizes = await page.evaluate(`({
        doc: document.documentElement.scrollWidth, view: window.innerWidth,
        boxScroll: document.querySelector('.diagram').scrollWidth, boxWidth: document.querySelector('.diagram').clientWidth,
      })`) as { doc: number; view: number; boxScroll: number; boxWidth: number };
      t.ok(sizes.doc <= sizes.view, `${path}: page ${sizes.doc} px within the ${sizes.view} px viewport`);
      if (path === widePath) t.ok(sizes.boxScroll > sizes.boxWidth, `the wide diagram scrolls inside its box (${sizes.boxScroll} > ${sizes.boxWidth})`);
    }
    await page.goto(s.url + widePath);
    await page.screenshot({ path: artifact('public-flow-360.png'), fullPage: true });
    await context.close();
  });

  for (const scheme of ['light', 'dark'] as const) {
    await t.test(`${scheme} mode keeps text readable`, async (t) => {
      const context = await browser.newContext({ colorScheme: scheme, viewport: { width: 1000, height: 800 } });
      const page = await context.newPage();
      await page.goto(s.url + seeded.flowPath);
      const colours = await page.evaluate(`(() => {
        const style = (selector) => getComputedStyle(document.querySelector(selector));
        return { bg: style('body').backgroundColor, text: style('body').color, muted: style('.muted').color, link: style('main a').color, late: style('.task-list .critical').color, diagram: style('.fp-diagram').color, diagramBg: style('.fp-diagram .fp-bg').fill };
      })()`) as Record<'bg' | 'text' | 'muted' | 'link' | 'late' | 'diagram' | 'diagramBg', string>;
      const darkBackground = contrast(colours.bg, 'rgb(0, 0, 0)') < 4.5;
      t.equal(darkBackground, scheme === 'dark', `the ${scheme} scheme is in use (${colours.bg})`);
      for (const key of ['text', 'muted', 'link', 'late'] as const) {
        const ratio = contrast(colours[key], colours.bg);
        t.ok(ratio >= 4.5, `${key} ${colours[key]} on ${colours.bg}: ${ratio.toFixed(1)}:1`);
      }
      t.ok(contrast(colours.diagram, colours.diagramBg) >= 4.5, `diagram text ${colours.diagram} on ${colours.diagramBg}`);
      await page.screenshot({ path: artifact(`public-flow-${scheme}.png`), fullPage: true });
      await page.goto(s.url + seeded.boardPath);
      await page.screenshot({ path: artifact(`public-brainstorm-${scheme}.png`), fullPage: true });
      await context.close();
    });
  }

  await t.test('the embed loads in an iframe on another origin; the page does not; unpublished goes dark', async (t) => {
    const host = createServer((req, res) => {
      const target = new URL(req.url!, 'http://x').searchParams.get('src')!;
      res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><title>Host</title><iframe id="f" src="${s.url}${target}" width="700" height="500"></iframe>`);
    });
    await new Promise<void>((resolve) => host.listen(0, 'localhost', resolve));
    t.teardown(() => new Promise<void>((resolve) => host.close(() => resolve())));
    const origin = `http://localhost:${(host.address() as AddressInfo).port}`;
    t.not(new URL(origin).origin, new URL(s.url).origin, 'the host page is another origin');

    const context = await browser.newContext();
    const page = await context.newPage();
    const violations = watchCsp(page);
    const embedPath = seeded.flowPath.replace('/p/flows/', '/p/embed/flows/');
    await page.goto(`${origin}/?src=${encodeURIComponent(embedPath)}`);
    const frame = page.frameLocator('#f');
    await frame.locator('svg.fp-diagram').waitFor({ timeout: 10_000 });
    t.ok((await frame.locator('svg.fp-diagram').textContent())!.includes('Design the box'), 'the framed embed shows the diagram');
    t.equal(await frame.locator('.site-header').count(), 0, 'minimal chrome');
    await page.screenshot({ path: artifact('public-flow-embed.png') });
    t.same(violations, [], 'no CSP violations in the embed');

    await page.goto(`${origin}/?src=${encodeURIComponent(seeded.flowPath)}`);
    await page.waitForTimeout(500);
    const framed = page.frames().find((f) => f.url().includes(seeded.flowPath));
    const drawn = framed ? await framed.locator('svg.fp-diagram').count().catch(() => 0) : 0;
    t.equal(drawn, 0, 'the full page refuses to be framed (frame-ancestors none)');

    await ok(t, s, 'POST', `/v1/flows/${seeded.flowId}/unpublish`);
    await page.goto(`${origin}/?src=${encodeURIComponent(embedPath)}`);
    await frame.locator('h1').waitFor({ timeout: 10_000 });
    t.equal(await frame.locator('h1').textContent(), 'Not published', 'after unpublish the embed goes dark in place');
    t.equal(await frame.locator('svg').count(), 0, 'no diagram');
    await context.close();
  });
});

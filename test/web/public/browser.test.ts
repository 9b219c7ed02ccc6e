/**
 * The public pages in real Chromium: the flow page draws its diagram with the task names,
 * works with JavaScript off, fits a 360 px phone without sideways page scrolling (a wide
 * diagram or idea tree shrinks to its box, nothing hidden, with a full-size control that needs
 * no script), has a favicon, stays
 * readable in light and dark mode (contrast measured), and its embed loads inside an <iframe> on another origin (while
 * the full page refuses to be framed). Screenshots go to test-artifacts/.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import type { Page } from 'playwright-core';
import { artifact, openBrowser } from '../../helpers/browser.ts';
import { ok, startFlowServer } from '../../helpers/flows.ts';
import { seedPublished, pathOf } from './helpers.ts';
import type { Brainstorm, BrainstormSummary, Flow, FlowSummary } from '../../helpers/wire.ts';

/** WCAG relative luminance contrast of two CSS `rgb(…)` colours. */
function contrast(a: string, b: string): number {
  const luminance = (css: string) => {
    const [r, g, b] = css
      .match(/[\d.]+/g)!
      .slice(0, 3)
      .map((v) => {
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
  const wide = (
    await s.api<Flow>('POST', '/v1/flows', {
      token: s.adminKey,
      body: {
        name: 'Long chain',
        dueDate: '2031-01-01',
        tasks: Array.from({ length: 12 }, (_, i) => ({
          name: `Step ${i + 1}`,
          estimateHours: 4,
          ...(i > 0 ? { after: [i - 1] } : {}),
        })),
      },
    })
  ).body;
  const widePath = pathOf(
    (await ok<FlowSummary>(t, s, 'POST', `/v1/flows/${wide.id}/publish`)).publicUrl,
  );

  await t.test('the page renders the diagram with the task names, JavaScript off', async (t) => {
    const context = await browser.newContext({
      javaScriptEnabled: false,
      viewport: { width: 1200, height: 900 },
    });
    const page = await context.newPage();
    const violations = watchCsp(page);
    const response = await page.goto(s.url + seeded.flowPath);
    t.equal(response?.status(), 200);
    const diagram = page.locator('main svg.fp-diagram');
    t.ok(await diagram.isVisible(), 'the inline SVG diagram is visible');
    const svgText = await diagram.textContent();
    for (const name of ['Design the box', 'Build the box', 'Ship the box'])
      t.ok(svgText!.includes(name), `the diagram names ${name}`);
    t.ok((await diagram.getAttribute('aria-label'))!.length > 20, 'with a text alternative');
    t.equal(await page.locator('main').count(), 1, 'one main landmark');
    t.equal(await page.locator('h1').textContent(), 'Launch plan');
    const link = await page.evaluate(
      'getComputedStyle(document.querySelector(".skip-link")).position',
    );
    t.equal(link, 'absolute', 'the stylesheet loaded (skip link positioned off screen)');
    await page.screenshot({ path: artifact('public-flow-page.png'), fullPage: true });
    t.same(violations, [], 'no CSP violations');
    await context.close();
  });

  // A wide idea tree: fourteen root ideas side by side, far wider than a laptop's page.
  const board = (
    await s.api<Brainstorm>('POST', '/v1/brainstorms', {
      token: s.adminKey,
      body: {
        name: 'Wide board',
        ideas: Array.from({ length: 14 }, (_, i) => ({ title: `Root idea ${i + 1}` })),
      },
    })
  ).body;
  const boardPath = pathOf(
    (await ok<BrainstormSummary>(t, s, 'POST', `/v1/brainstorms/${board.id}/publish`)).publicUrl,
  );

  /** Where the diagram's box and its drawing are, and the last root's box (a tree) or the last task's (a flow). */
  const geometry = (page: Page) =>
    page.evaluate(`(() => {
    const box = document.querySelector('.diagram').getBoundingClientRect();
    const svg = document.querySelector('.diagram svg');
    const shapes = [...svg.querySelectorAll('.idea rect, rect.fp-node')];
    const last = shapes.reduce((a, b) => (b.getBoundingClientRect().right > a.getBoundingClientRect().right ? b : a)).getBoundingClientRect();
    return {
      doc: document.documentElement.scrollWidth, view: window.innerWidth, boxLeft: box.left, boxRight: box.right,
      lastRight: last.right, svgWidth: svg.getBoundingClientRect().width, natural: Number(svg.getAttribute('width')),
      boxScroll: document.querySelector('.diagram').scrollWidth, boxClient: document.querySelector('.diagram').clientWidth,
    };
  })()`) as Promise<
      Record<
        | 'doc'
        | 'view'
        | 'boxLeft'
        | 'boxRight'
        | 'lastRight'
        | 'svgWidth'
        | 'natural'
        | 'boxScroll'
        | 'boxClient',
        number
      >
    >;

  for (const [viewport, scale] of [
    [{ width: 360, height: 740 }, 2],
    [{ width: 1200, height: 900 }, 1],
  ] as const) {
    await t.test(
      `${viewport.width} px wide: wide diagrams shrink to fit, nothing hidden; full size scrolls in its box`,
      async (t) => {
        const context = await browser.newContext({
          viewport,
          deviceScaleFactor: scale,
          isMobile: viewport.width < 500,
          javaScriptEnabled: false,
        });
        const page = await context.newPage();
        for (const path of [widePath, boardPath, seeded.flowPath, seeded.boardPath]) {
          await page.goto(s.url + path);
          const g = await geometry(page);
          t.ok(g.doc <= g.view, `${path}: page ${g.doc} px within the ${g.view} px viewport`);
          t.ok(
            g.lastRight <= g.boxRight + 0.5,
            `${path}: the rightmost box is inside the visible box (${g.lastRight.toFixed(0)} <= ${g.boxRight.toFixed(0)})`,
          );
          t.ok(g.boxScroll <= g.boxClient + 1, `${path}: nothing to scroll to while shrunk`);
          if (g.natural > g.boxRight - g.boxLeft) {
            t.ok(
              g.svgWidth < g.natural,
              `${path}: shrunk (${g.svgWidth.toFixed(0)} of ${g.natural} px)`,
            );
            // The control, without JavaScript: the details toggle.
            await page.click('.zoom summary');
            const full = await geometry(page);
            t.equal(
              Math.round(full.svgWidth),
              Math.round(full.natural),
              `${path}: at full size on demand`,
            );
            t.ok(
              full.boxScroll > full.boxClient,
              `${path}: then it scrolls inside its box (${full.boxScroll} > ${full.boxClient})`,
            );
            t.ok(full.doc <= full.view, `${path}: still no sideways page scroll`);
          }
        }
        await page.goto(s.url + widePath);
        await page.screenshot({
          path: artifact(`public-flow-${viewport.width}.png`),
          fullPage: true,
        });
        await page.goto(s.url + boardPath);
        await page.screenshot({
          path: artifact(`public-brainstorm-wide-${viewport.width}.png`),
          fullPage: true,
        });
        await page.click('.zoom summary');
        await page.screenshot({
          path: artifact(`public-brainstorm-wide-${viewport.width}-full.png`),
          fullPage: true,
        });
        await context.close();
      },
    );
  }

  await t.test('a favicon, linked from every page', async (t) => {
    for (const [path, type] of [
      ['/favicon.ico', 'image/x-icon'],
      ['/favicon.svg', 'image/svg+xml'],
    ] as const) {
      const res = await fetch(s.url + path);
      t.equal(res.status, 200, path);
      t.equal(res.headers.get('content-type'), type);
      t.ok((await res.arrayBuffer()).byteLength > 100);
    }
    const page = await (await fetch(s.url + seeded.flowPath)).text();
    t.match(page, /<link rel="icon" href="\/favicon.svg" type="image\/svg\+xml">/);
    t.match(page, /<link rel="icon" href="\/favicon.ico"/);
  });

  for (const scheme of ['light', 'dark'] as const) {
    await t.test(`${scheme} mode keeps text readable`, async (t) => {
      const context = await browser.newContext({
        colorScheme: scheme,
        viewport: { width: 1000, height: 800 },
      });
      const page = await context.newPage();
      await page.goto(s.url + seeded.flowPath);
      const colours = (await page.evaluate(`(() => {
        const style = (selector) => getComputedStyle(document.querySelector(selector));
        return { bg: style('body').backgroundColor, text: style('body').color, muted: style('.muted').color, link: style('main a').color, late: style('.task-list .critical').color, diagram: style('.fp-diagram').color, diagramBg: style('.fp-diagram .fp-bg').fill, box: style('.fp-diagram .fp-node').fill };
      })()`)) as Record<
        'bg' | 'text' | 'muted' | 'link' | 'late' | 'diagram' | 'diagramBg' | 'box',
        string
      >;
      t.equal(
        contrast(colours.box, 'rgb(0, 0, 0)') < 4.5,
        scheme === 'dark',
        `task boxes follow the ${scheme} scheme (${colours.box})`,
      );
      t.ok(
        contrast(colours.diagram, colours.box) >= 4.5,
        `box text ${colours.diagram} on ${colours.box}`,
      );
      const darkBackground = contrast(colours.bg, 'rgb(0, 0, 0)') < 4.5;
      t.equal(darkBackground, scheme === 'dark', `the ${scheme} scheme is in use (${colours.bg})`);
      for (const key of ['text', 'muted', 'link', 'late'] as const) {
        const ratio = contrast(colours[key], colours.bg);
        t.ok(ratio >= 4.5, `${key} ${colours[key]} on ${colours.bg}: ${ratio.toFixed(1)}:1`);
      }
      t.ok(
        contrast(colours.diagram, colours.diagramBg) >= 4.5,
        `diagram text ${colours.diagram} on ${colours.diagramBg}`,
      );
      await page.screenshot({ path: artifact(`public-flow-${scheme}.png`), fullPage: true });
      await page.goto(s.url + seeded.boardPath);
      const idea = (await page.evaluate(`(() => {
        const style = (selector) => getComputedStyle(document.querySelector(selector));
        return { box: style('.fp-brainstorm .idea rect').fill, title: style('.fp-brainstorm .idea-title').fill, bg: style('body').backgroundColor };
      })()`)) as Record<'box' | 'title' | 'bg', string>;
      const darkBox = contrast(idea.box, 'rgb(0, 0, 0)') < 4.5;
      t.equal(darkBox, scheme === 'dark', `idea boxes follow the ${scheme} scheme (${idea.box})`);
      t.ok(contrast(idea.title, idea.box) >= 4.5, `idea titles ${idea.title} on ${idea.box}`);
      await page.screenshot({ path: artifact(`public-brainstorm-${scheme}.png`), fullPage: true });
      await context.close();
    });
  }

  await t.test(
    'the embed loads in an iframe on another origin; the page does not; unpublished goes dark',
    async (t) => {
      const host = createServer((req, res) => {
        const target = new URL(req.url!, 'http://x').searchParams.get('src')!;
        res
          .writeHead(200, { 'content-type': 'text/html' })
          .end(
            `<!doctype html><title>Host</title><iframe id="f" src="${s.url}${target}" width="700" height="500"></iframe>`,
          );
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
      t.ok(
        (await frame.locator('svg.fp-diagram').textContent())!.includes('Design the box'),
        'the framed embed shows the diagram',
      );
      t.equal(await frame.locator('.site-header').count(), 0, 'minimal chrome');
      await page.screenshot({ path: artifact('public-flow-embed.png') });
      t.same(violations, [], 'no CSP violations in the embed');

      await page.goto(`${origin}/?src=${encodeURIComponent(seeded.flowPath)}`);
      await page.waitForTimeout(500);
      const framed = page.frames().find((f) => f.url().includes(seeded.flowPath));
      const drawn = framed
        ? await framed
            .locator('svg.fp-diagram')
            .count()
            .catch(() => 0)
        : 0;
      t.equal(drawn, 0, 'the full page refuses to be framed (frame-ancestors none)');

      await ok(t, s, 'POST', `/v1/flows/${seeded.flowId}/unpublish`);
      await page.goto(`${origin}/?src=${encodeURIComponent(embedPath)}`);
      await frame.locator('h1').waitFor({ timeout: 10_000 });
      t.equal(
        await frame.locator('h1').textContent(),
        'Not published',
        'after unpublish the embed goes dark in place',
      );
      t.equal(await frame.locator('svg').count(), 0, 'no diagram');
      await context.close();
    },
  );
});
